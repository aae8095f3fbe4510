// Lesson "serial-bottleneck": dedup's serial output stage bounds its throughput, and the queueing
// model's λmax = 1/max(Tin, Tout) predicts where adding workers stops helping (seed 000 §2.2,
// §2.3, §3.4 eq. 8–10, §4.1–4.2).
//
// Everything is measured from the traces: the critical serial stage and its time per item S (the
// analysis' queueing bounds, analysis/queueing.hpp, eq. 10), the work per item W, the plateau
// point P* = W/S (where P/W reaches λmax) and the observed throughput = iterations / the pipeline's
// span (first node to last node: the run's own span also holds the check of the archive after the
// loop). The observed throughput can never beat the model's bound min(P/W, λmax) (eq. 8) — that is
// the bound's point — so the lesson asserts it and reports how close the runs come.
//
// W is the breakdown's work (node and task time, each instant counted once) per item rather than
// the sum of the stages' node durations: in the fan-out form a stage-1 node waits at its fork-join
// sync, and a worker waiting there may run another item's node inside it, so node durations
// overlap and would overstate the work.
//
// The program: dedup's fan-out form is the paper's TBB dedup (§2.3, §4.1: three stages; input,
// the anchoring, hashing and compression collapsed into one parallel filter, and the serial output).
// Chunks are stored uncompressed (level=0): our output stage appends to memory, not to a disk as
// PARSEC's does, so with zlib at its default level the parallel stage carries ~25× the output's
// work and the plateau would sit near 25 cores; with level=0 the proportions are the paper's
// (plateau at a few cores, §3.4: c_optimal = 5). Coarse chunks of 32 KiB give 256 items at size small.
//
// The plateau needs more cores than P* (3-5), so the same program also runs on 1, 4, 8 and 16
// virtual workers (docs/virtual.md): the real stage bodies and piper's real code, each node
// charged its measured CPU time. The virtual traces are measured like the real ones; the curve
// past P* comes from them.
#include <pipescope/lessons/lesson.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::lessons {

namespace {

namespace an = pipescope::analysis;
namespace tm = pipescope::trace;

const std::vector<std::string> dedup_params = {"form=fanout", "level=0", "coarse=32768"};

// What the model and the trace say about one run.
struct measured {
    unsigned P = 0;
    std::uint64_t items = 0;
    double W = 0;                // s of work per item (the breakdown's work / items)
    double lambda_max = 0;       // items/s: 1 / the critical serial stage's Tser
    long critical = -1;          // that stage
    std::string critical_name;   // e.g. "write (stage 2)"
    double S = 0;                // s per item in the critical serial stage
    double span = 0;             // s: first node's start to last node's end
    double observed = 0;         // items/s
    double bound = 0;            // min(P/W, lambda_max)
    double plateau_at = 0;       // P* = W / S
    double critical_busy = 0;    // the critical stage's time / the span (its utilisation, eq. 1)
};

std::string stage_label(const std::string& name, long index) {
    const auto dot = name.find("· ");
    const std::string word = dot == std::string::npos ? "" : name.substr(dot + 3);
    const std::string stage = an::vocab::numbered(an::vocab::stage_prefix, static_cast<std::uint64_t>(index));
    return word.empty() ? stage : word + " (" + stage + ")";
}

measured measure(const recorded& r) {
    measured m;
    const an::queueing_bounds& q = r.report.queueing;
    m.P = r.spec.workers;
    m.items = q.iterations;
    m.lambda_max = q.lambda_max;
    m.critical = q.critical_serial_stage;
    for (const an::stage_rate& s : q.stages)
        if (static_cast<long>(s.index) == m.critical) m.critical_name = stage_label(s.name, m.critical);
    m.S = m.lambda_max > 0 ? 1.0 / m.lambda_max : 0.0;
    const double work_ns = static_cast<double>(r.report.breakdown.total.time[an::time_category::work]);
    m.W = m.items ? work_ns * 1e-9 / static_cast<double>(m.items) : 0.0;
    const auto& nodes = r.model->runs.at(r.report.run).dag.nodes;
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
    for (const tm::dag_node& n : nodes) {
        first = std::min(first, n.start);
        last = std::max(last, n.end);
    }
    m.span = last > first ? static_cast<double>(last - first) * 1e-9 : q.makespan;
    m.observed = m.span > 0 ? static_cast<double>(m.items) / m.span : 0.0;
    m.bound = m.W > 0 ? static_cast<double>(m.P) / m.W : 0.0;
    if (m.lambda_max > 0) m.bound = std::min(m.bound, m.lambda_max);
    m.plateau_at = m.S > 0 ? m.W / m.S : 0.0;
    m.critical_busy = m.span > 0 ? m.observed * m.S : 0.0;
    return m;
}

// dedup's input stage reads its coarse chunk inside the loop condition, which runs just before the
// stage-0 node and outside its slice, so stage 0's own nodes take almost no time. At P=1 one worker
// runs everything in order, so the gap between item i-1's last node and item i's stage-0 node is
// that read plus the scheduler's bookkeeping: an upper estimate of the input's hidden time. Every
// item reads one coarse chunk, so the median gap is the typical read, untouched by the few gaps a
// loaded machine's preemption stretches.
double hidden_input_per_item(const recorded& one_worker) {
    const auto& dag = one_worker.model->runs.at(one_worker.report.run).dag;
    std::vector<std::uint64_t> last_end;   // by iteration
    for (const tm::dag_node& n : dag.nodes) {
        if (n.iteration >= last_end.size()) last_end.resize(n.iteration + 1, 0);
        last_end[n.iteration] = std::max(last_end[n.iteration], n.end);
    }
    std::vector<std::uint64_t> gaps;
    for (const tm::dag_node& n : dag.nodes) {
        if (n.stage != 0 || n.iteration == 0) continue;
        const std::uint64_t prev = last_end[n.iteration - 1];
        if (prev != 0 && n.start >= prev) gaps.push_back(n.start - prev);
    }
    if (gaps.empty()) return 0.0;
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    return static_cast<double>(gaps[gaps.size() / 2]) * 1e-9;
}

// The share of a run's critical path (its longest path through the recorded DAG, analysis/dag_bounds.hpp)
// spent in nodes of `stage`: near 1 when the serial chain of that stage is the span.
double critical_path_share(const recorded& r, long stage) {
    const an::span_result& path = r.report.dag.with_throttle;
    double in_stage = 0, total = 0;
    for (const an::path_node& n : path.critical_path) {
        const double d = static_cast<double>(n.end - n.begin);
        total += d;
        if (static_cast<long>(n.stage) == stage) in_stage += d;
    }
    return total > 0 ? in_stage / total : 0.0;
}

// A stage's time per item (its Tser in the analysis' queueing bounds), 0 when the run has no such stage.
double stage_time(const recorded& r, long stage) {
    for (const an::stage_rate& s : r.report.queueing.stages)
        if (static_cast<long>(s.index) == stage) return s.tser;
    return 0.0;
}

std::string per_s(double items_per_s) {
    if (items_per_s >= 1e6) return fixed(items_per_s / 1e6, 2) + " M items/s";
    if (items_per_s >= 1e4) return fixed(items_per_s / 1e3, 0) + " k items/s";
    if (items_per_s >= 1e3) return fixed(items_per_s / 1e3, 1) + " k items/s";
    return fixed(items_per_s, 0) + " items/s";
}

std::string us(double seconds) { return fixed(seconds * 1e6, seconds < 1e-5 ? 2 : 1) + " µs"; }

// The model's throughput at P workers from the stage times of one run (seed 000 eq. 8 and 10:
// bind-to-element work stealing, capped by the critical serial stage).
double predicted(const measured& m, double P) { return m.W > 0 ? std::min(P / m.W, m.lambda_max) : 0.0; }

// A tolerance for the span's end points when comparing with a bound.
constexpr double bound_slack = 1.05;
// A serial stage at least this busy is saturated: the plateau (the analysis' serial_busy is 0.75).
constexpr double saturated = 0.80;
// Past the plateau four times the workers (P=4 to P=16) add at most this much throughput; on the
// rising part of the curve they would add up to 4x (the model: min(16, P*) / min(4, P*)).
constexpr double flat_gain = 1.25;
// On the plateau the throughput is at most this share of P/W, what P workers give without the serial stage.
constexpr double far_below = 0.5;

// The virtual runs, by P (virtual_workers): where the plateau shows (seed 000 §3.4, Fig. 11(d)).
constexpr unsigned virtual_workers[] = {1, 4, 8, 16};
constexpr unsigned virtual_many = 16;   // the run past P* that the findings read
constexpr unsigned virtual_few = 4;     // about P*: where the curve should already be flat

struct virtual_curve {
    std::vector<measured> runs;   // in the order of virtual_workers
    const measured& at(unsigned P) const {
        for (const measured& m : runs)
            if (m.P == P) return m;
        throw std::out_of_range("no virtual run at P=" + std::to_string(P));
    }
    double vs_lambda = 0;           // observed / lambda_max of the P=16 run
    double vs_linear = 0;           // observed at P=16 / (16 / W), W from the P=1 virtual run
    double gain = 0;                // throughput at P=16 / at P=4
    double path_share = 0;          // of the P=16 run's critical path, in the output's nodes
    double input_over_output = 0;   // stage 0's time per item / the output's (P=1 virtual)
    std::uint64_t suspended = 0;    // iterations of the P=16 run that suspended (at the output)
};

// What the story compares: the two real runs' measures, the virtual curve, and what follows from them.
struct comparison {
    unsigned N = 0;         // workers of the run with more than one
    measured mn, m1;        // P=N, P=1
    double hidden_in = 0;   // s: the input's read per item, outside stage 0's slices (P=1)
    bool output_critical = false;
    double worst_vs_lambda = 0;   // the highest observed throughput / lambda_max
    double efficiency_n = 0, efficiency_1 = 0, speedup = 0;
    std::string out, out_word;    // the critical serial stage: "write (stage 2)", "write"
    bool below_plateau = false;   // N < P*
    double path_share = 0;        // of the P=N run's critical path, in the output's nodes
    double parallelism = 0;       // of the P=N run's DAG
    double output_share = 0;      // the output's share of the work (1/P*)
    virtual_curve v;
};

// Where the steps look: the output node of the middle item of the run with more workers.
struct output_node {
    std::uint64_t mid = 0;
    std::optional<double> cursor;
    std::optional<std::pair<double, double>> window;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> node;
};

// The model's curve from the P=1 trace, as the paper predicts from its sequential code.
std::string model_curve(const measured& m1) {
    std::string curve;
    for (double P : {1.0, 2.0, 4.0, 8.0}) {
        if (!curve.empty()) curve += ", ";
        curve += "P=" + fixed(P, 0) + " " + per_s(predicted(m1, P));
    }
    return curve;
}

// The throughput on each virtual P: its speedup over the P=1 virtual run and how near its own
// lambda_max it came.
std::string virtual_curve_text(const virtual_curve& v) {
    std::string curve;
    const double base = v.at(1).observed;
    for (const measured& m : v.runs) {
        curve += curve.empty() ? "" : "; ";
        curve += "P=" + std::to_string(m.P) + " " + per_s(m.observed) + " (";
        if (m.P > 1 && base > 0) curve += ratio(m.observed / base) + ", ";
        curve += percent(m.lambda_max > 0 ? m.observed / m.lambda_max : 0.0) + " of its lambda_max)";
    }
    return curve;
}

// Whether the output's serial chain already shapes the critical path, in words.
std::string chain_sentence(const comparison& c) {
    const std::string Ns = std::to_string(c.N);
    if (c.path_share > c.output_share)
        return "The chain already shapes the P=" + Ns + " run: " + percent(c.path_share) + " of its critical path is " +
               c.out_word + " nodes against " + percent(c.output_share) +
               " of the work, and its DAG parallelism T1/Tinf is " + fixed(c.parallelism, 2) + ".";
    return "The P=" + Ns + " run's critical path is " + percent(c.path_share) + " " + c.out_word +
           " nodes, no more than their " + percent(c.output_share) + " share of the work (DAG parallelism " +
           fixed(c.parallelism, 2) + "): slow parallel nodes (on a shared machine, often preempted ones) set its span.";
}

std::string plateau_sentence(const comparison& c) {
    const std::string Ns = std::to_string(c.N);
    if (c.below_plateau)
        return " P=" + Ns + " is below P* = " + fixed(c.m1.plateau_at, 1) +
               ": the plateau itself, throughput flat at lambda_max, needs about " + fixed(std::ceil(c.m1.plateau_at), 0) +
               " cores (the step \"On 16 virtual workers\" has them).";
    return " P=" + Ns + " is past P*: the output stage sets the pace.";
}

story_values values_of(const comparison& c, const output_node& at) {
    const measured &mn = c.mn, &m1 = c.m1;
    story_values v;
    v.push_back(fmt::arg("N", c.N));
    v.push_back(fmt::arg("out", c.out));
    v.push_back(fmt::arg("out_word", c.out_word));
    v.push_back(fmt::arg("W", us(m1.W)));
    v.push_back(fmt::arg("S", us(m1.S)));
    v.push_back(fmt::arg("S_n", us(mn.S)));
    v.push_back(fmt::arg("lambda_max", per_s(m1.lambda_max)));
    v.push_back(fmt::arg("lambda_max_n", per_s(mn.lambda_max)));
    v.push_back(fmt::arg("plateau", fixed(m1.plateau_at, 1)));
    v.push_back(fmt::arg("plateau_cores", fixed(std::ceil(m1.plateau_at), 0)));
    v.push_back(fmt::arg("curve", model_curve(m1)));
    v.push_back(fmt::arg("observed_1", per_s(m1.observed)));
    v.push_back(fmt::arg("observed_n", per_s(mn.observed)));
    v.push_back(fmt::arg("efficiency_1", percent(c.efficiency_1)));
    v.push_back(fmt::arg("efficiency_n", percent(c.efficiency_n)));
    v.push_back(fmt::arg("bound_n", per_s(mn.bound)));
    v.push_back(fmt::arg("speedup", ratio(c.speedup)));
    v.push_back(fmt::arg("worst_vs_lambda", fixed(c.worst_vs_lambda, 2)));
    v.push_back(fmt::arg("output_share", percent(c.output_share)));
    v.push_back(fmt::arg("path_share", percent(c.path_share)));
    v.push_back(fmt::arg("parallelism", fixed(c.parallelism, 2)));
    v.push_back(fmt::arg("critical_busy", percent(mn.critical_busy)));
    v.push_back(fmt::arg("hidden_in", us(c.hidden_in)));
    v.push_back(fmt::arg("chain", chain_sentence(c)));
    v.push_back(fmt::arg("plateau_sentence", plateau_sentence(c)));
    v.push_back(fmt::arg("mid", at.mid));
    const measured &v1 = c.v.at(1), &vn = c.v.at(virtual_many);
    v.push_back(fmt::arg("v_many", virtual_many));
    v.push_back(fmt::arg("v_few", virtual_few));
    v.push_back(fmt::arg("v_W", us(v1.W)));
    v.push_back(fmt::arg("v_S", us(v1.S)));
    v.push_back(fmt::arg("v_S_many", us(vn.S)));
    v.push_back(fmt::arg("v_suspended", c.v.suspended));
    v.push_back(fmt::arg("v_items", vn.items));
    v.push_back(fmt::arg("v_Tin", us(c.v.input_over_output * v1.S)));
    v.push_back(fmt::arg("v_in_out", percent(c.v.input_over_output)));
    v.push_back(fmt::arg("v_plateau", fixed(v1.plateau_at, 1)));
    v.push_back(fmt::arg("v_curve", virtual_curve_text(c.v)));
    v.push_back(fmt::arg("v_gain", ratio(c.v.gain)));
    v.push_back(fmt::arg("v_vs_lambda", percent(c.v.vs_lambda)));
    v.push_back(fmt::arg("v_lambda", per_s(vn.lambda_max)));
    v.push_back(fmt::arg("v_vs_linear", percent(c.v.vs_linear)));
    v.push_back(fmt::arg("v_linear", per_s(v1.W > 0 ? virtual_many / v1.W : 0.0)));
    v.push_back(fmt::arg("v_busy", percent(vn.critical_busy)));
    v.push_back(fmt::arg("v_path", percent(c.v.path_share)));
    return v;
}

std::vector<finding_measure> findings_of(const comparison& c) {
    const measured &mn = c.mn, &m1 = c.m1;
    return {
        {"critical_serial_stage", static_cast<double>(m1.critical), c.out_word, c.output_critical},
        {"plateau_workers", m1.plateau_at, "P* = " + fixed(m1.plateau_at, 1), !c.below_plateau},
        {"observed_over_lambda_max", c.worst_vs_lambda, fixed(c.worst_vs_lambda, 2), c.worst_vs_lambda <= bound_slack},
        {"observed_over_model", c.efficiency_n, percent(c.efficiency_n), c.efficiency_n <= bound_slack},
        {"critical_path_in_output", c.path_share, percent(c.path_share), c.path_share > c.output_share},
        {"output_utilisation", mn.critical_busy, percent(mn.critical_busy), mn.critical_busy >= saturated},
        {"hidden_input_over_output", m1.S > 0 ? c.hidden_in / m1.S : 0.0, us(c.hidden_in) + " vs " + us(m1.S),
         m1.S > 0 && c.hidden_in < m1.S},
        {"virtual_plateau", c.v.vs_lambda, percent(c.v.vs_lambda),
         c.v.vs_lambda >= saturated && c.v.vs_lambda <= bound_slack},
        {"virtual_gain_past_plateau", c.v.gain, ratio(c.v.gain), c.v.gain <= flat_gain},
        {"virtual_below_linear", c.v.vs_linear, percent(c.v.vs_linear), c.v.vs_linear <= far_below},
    };
}

const finding_text findings[] = {
    {"critical_serial_stage",
     "the serial stage with the longest time per item, which sets lambda_max (P=1 and P={N}): {out}, {S} per item",
     "§2.2: dedup's I/O bottleneck is its output stage; §4.2: \"for dedup the bottleneck is in the output stage\", which "
     "writes one compressed stream and cannot be parallelized",
     "on this input another serial stage takes longer per item than the output (or the two runs disagree)"},
    {"plateau_workers", "P* = W / S: the workers past which the serial stage caps throughput (from the P=1 trace)",
     "§3.4 (Fig. 11(d)): TBB dedup reaches lambda_max at c_optimal = 5 threads; §2.2: the Pthreads dedup hits the output "
     "bottleneck for c between 4 and 8; §4.1: past 8 cores dynamic scheduling stops helping",
     "P={N} is below P* = {plateau}: this run is on the rising part of the curve, where throughput grows as P/W; the "
     "plateau at lambda_max needs about {plateau_cores} cores, and shows on virtual ones (step \"On 16 virtual "
     "workers\": P={v_many} reaches {v_vs_lambda} of lambda_max)"},
    {"observed_over_lambda_max", "the highest observed throughput / lambda_max of its run (P=1 and P={N})",
     "eq. 8 and 10: lambda_max = min(1/Tin, 1/Tout) is an upper bound of the effective throughput",
     "the observed throughput exceeded lambda_max: a serial stage overlapped itself"},
    {"observed_over_model", "observed throughput / the model's bound min(P/W, lambda_max) at P={N}",
     "§3.2: for dedup \"the analytical times just represent an optimistic lower bound\" (the throughput an upper "
     "bound): the measured runs were slower than the model",
     "the run beat the model's bound: the stage times were mismeasured"},
    {"critical_path_in_output",
     "share of the P={N} run's critical path spent in {out} nodes, against its {output_share} share of the work (DAG "
     "parallelism T1/Tinf {parallelism})",
     "§3.4: the critical serial stage \"ends up being the I/O bottleneck\"; §4.1: approaching the output bottleneck, "
     "\"the advantages of dynamic scheduling start to diminish\"",
     "the critical path holds no more {out} time than the work does ({output_share}): the serial chain does not shape "
     "the span yet"},
    {"output_utilisation", "share of the pipeline's time the {out} stage was busy at P={N}",
     "eq. 1: a serial stage's utilisation lambda·Tser reaches 1 at the plateau (§3.4: the throughput grows \"until the "
     "effective throughput reaches lambda_max, i.e. until the I/O bottleneck\")",
     "below P* the serial stage still has idle moments between items; the model has it saturate once P ≥ P* = "
     "{plateau}, as it does on {v_many} virtual workers ({v_busy})"},
    {"hidden_input_over_output",
     "input time per item (the coarse-chunk read in the loop condition, median gap before stage 0 at P=1) / the "
     "output's time per item",
     "eq. 10 takes the larger of Tin and Tout; in PARSEC's dedup the output is the larger (§4.2)",
     "the input stage's read, which runs in the loop condition outside stage 0's node slices, took longer per item than "
     "the output here: the true lambda_max is nearer 1/{hidden_in}"},
    {"virtual_plateau",
     "observed throughput / lambda_max of the run on {v_many} virtual workers (past P*): also the {out_word} stage's "
     "utilisation, lambda·S (eq. 1)",
     "§3.4 (Fig. 11(d)): the effective throughput grows until it reaches lambda_max, at c_optimal = 5 threads for TBB "
     "dedup, and stays there; eq. 8: min(P/W, lambda_max) = lambda_max once P ≥ P*; eq. 1: the serial stage's "
     "utilisation reaches 1 there",
     "the run on {v_many} virtual workers stayed below its lambda_max: the parallel work and the scheduler's steps "
     "between output nodes left the output stage idle ({v_path} of its critical path is {out_word} nodes)"},
    {"virtual_gain_past_plateau", "throughput on {v_many} virtual workers / on {v_few} (four times the workers)",
     "§2.2: the output bottleneck from c between 4 and 8 threads; §4.1: past 8 cores dynamic scheduling stops helping",
     "P* = {v_plateau} on the virtual runs: the curve still rises past {v_few} workers, as min(P/W, lambda_max) says"},
    {"virtual_below_linear",
     "throughput on {v_many} virtual workers / {v_many}/W = {v_linear}, what they would reach without the serial stage",
     "eq. 8: with work stealing the throughput grows as P/W only until it meets lambda_max",
     "the output is so light next to the parallel work on the virtual runs (P* = {v_plateau}) that {v_many} workers are "
     "still on the rising part of the curve"},
};

std::vector<step_text> steps(const output_node& at) {
    const view_move compare_runs{"compare", std::nullopt, std::nullopt, std::nullopt, true};
    return {
        {"What to look at",
         "dedup in the paper's three-stage TBB form under piper, P={N} on top and P=1 below, zoomed to a dozen or so "
         "items. Each item is one coarse chunk of 32 KiB: read (stage 0), then chunking, hashing and storing its fine "
         "chunks as fork-join tasks (stage 1, parallel), then {out}, which appends its records to the archive in input "
         "order. The {out} nodes run one at a time, whichever worker runs them: that serial chain is what lambda_max "
         "measures, and the parallel work has to fit around it.",
         {"timeline", at.cursor, at.window, at.node, true}},
        {"What the paper found",
         "Navarro et al. bound a pipeline's throughput by its critical serial stage, lambda_max = min(1/Tin, 1/Tout) "
         "(eq. 10); with work stealing the throughput is at most min(P/W, lambda_max) (eq. 8), W the work per item, so "
         "adding workers helps until P/W reaches lambda_max. dedup's output stage writes one compressed stream: it "
         "became the bottleneck from c between 4 and 8 threads (§2.2), the model put TBB dedup's optimum at 5 threads "
         "(§3.4), and past 8 cores work stealing stopped helping (§4.1). The explain view shows lambda_max and the "
         "bounds computed from these traces.",
         {"explain", std::nullopt, std::nullopt, std::nullopt, true}},
        {"What this run shows",
         "From the P=1 trace: W = {W} of work per item, of which {out} takes S = {S}, so lambda_max = {lambda_max} and "
         "P* = W/S = {plateau} workers. The model's curve: {curve}. Observed (items / the pipeline's span; the makespans "
         "in the table also hold the check of the archive after the loop, the idle tail): P=1 {observed_1} "
         "({efficiency_1} of 1/W), P={N} {observed_n} ({speedup} of P=1, {efficiency_n} of its bound {bound_n}); "
         "neither exceeds lambda_max (at most {worst_vs_lambda} of it). {chain} Near P* the parallel work and the "
         "chain's span add up (T_P is about T1/P + Tinf, seed 001 §7), so the run stays below the bound, which only says "
         "that neither can be beaten. The {out_word} stage was busy {critical_busy} of the time.{plateau_sentence}",
         compare_runs},
        {"The serial chain in the DAG",
         "The pipeline DAG of the P={N} run as item {mid}'s {out} node finishes: items across, stages down. The bottom "
         "row is the output: each node waits for the one on its left (a cross edge), so however many workers run the "
         "row above, items leave at most one per S = {S_n} ({lambda_max_n}). {path_share} of the run's critical path "
         "(red) is {out_word} nodes.",
         {"dag", at.cursor, std::nullopt, at.node, true}},
        {"On 16 virtual workers",
         "The plateau needs more cores than this machine has, so the lesson also ran dedup on 1, 4, 8 and {v_many} "
         "virtual workers (the runs the viewer marks \"virtual N cores\"; docs/virtual.md): the same stage bodies "
         "and piper's own scheduling code, one worker at a time in virtual time, each node charged its measured CPU "
         "time — what a machine with that many cores would do, less its memory contention. A node there costs all "
         "the CPU time its worker used since its previous yield point, so the read in the loop condition lands in "
         "stage 0's node and Tin is in the trace too: {v_Tin} per item, {v_in_out} of {out_word}'s S = {v_S}. From "
         "the P=1 virtual trace W = {v_W} and P* = W/S = {v_plateau}. But a write costs more as P grows: S = {v_S} "
         "at P=1, {v_S_many} at P={v_many}, where {v_suspended} of the {v_items} items suspended before their write "
         "and were resumed (none at P=1), so lambda_max falls as workers are added. Throughput: {v_curve}. The curve "
         "stops rising past {v_few} workers: {v_many} workers reach {v_gain} of {v_few} workers' throughput, "
         "{v_vs_lambda} of their lambda_max ({v_lambda}) and {v_vs_linear} of the {v_many}/W = {v_linear} they would "
         "reach without the serial stage. So the {out_word} stage is busy {v_busy} of the P={v_many} run's span (eq. "
         "1: its utilisation nears 1 at the plateau), and {v_path} of that run's critical path is {out_word} nodes: "
         "the serial chain is the span, as §3.4 found for dedup.",
         compare_runs},
        {"Try next",
         "Compress the chunks (`pipescope run dedup --param form=fanout --param coarse=32768 -o d6.pftrace`, then "
         "`pipescope stats d6.pftrace`): the parallel work per item grows about tenfold and P* moves to some 25 workers, "
         "with the same output stage. The whole curve on virtual workers: `pipescope scale dedup --policies piper "
         "--workers 1,2,4,8,16,32 --param form=fanout --param level=0 --param coarse=32768` (without `--param level=0` P* "
         "moves). On a machine with more cores, `pipescope lesson serial-bottleneck --workers 8` records past P* on "
         "real ones.",
         compare_runs},
    };
}

class serial_bottleneck_lesson final : public lesson {
public:
    const char* name() const override { return "serial-bottleneck"; }
    const char* title() const override {
        return "Serial bottleneck: dedup's output stage caps throughput at lambda_max = 1/Tout";
    }
    const char* seeds() const override { return "000 §2.2, §2.3, §3.4 (eq. 8–10), §4.1–4.2"; }

    static unsigned many(const options& o) { return o.workers > 1 ? o.workers : 2; }
    static std::string key_for(unsigned P) { return "piper-P" + std::to_string(P); }
    static std::string virtual_key(unsigned P) { return key_for(P) + "-virtual"; }
    static run_spec dedup_run(unsigned P, bool virtual_time = false) {
        return {.key = virtual_time ? virtual_key(P) : key_for(P),
                .workload = "dedup",
                .policy = "piper",
                .params = dedup_params,
                .workers = P,
                .virtual_time = virtual_time};
    }

    std::vector<run_spec> runs(const options& o) const override {
        // The run with more workers first: the DAG and a selected node go to the first run that has it.
        std::vector<run_spec> v = {dedup_run(many(o)), dedup_run(1)};
        for (unsigned P : virtual_workers) v.push_back(dedup_run(P, true));
        return v;
    }

    story tell(const lesson_data& data) const override {
        const comparison c = compare(data);
        const output_node at = middle_output(data, c);
        return tell_story(findings, findings_of(c), steps(at), values_of(c, at));
    }

private:
    static comparison compare(const lesson_data& data) {
        comparison c;
        c.N = many(data.opts);
        const recorded& rn = data.run(key_for(c.N));
        const recorded& r1 = data.run(key_for(1));
        c.mn = measure(rn);
        c.m1 = measure(r1);
        const measured &mn = c.mn, &m1 = c.m1;
        c.hidden_in = hidden_input_per_item(r1);
        const long last_stage =
            r1.report.queueing.stages.empty() ? -1 : static_cast<long>(r1.report.queueing.stages.back().index);
        c.output_critical = m1.critical == last_stage && mn.critical == m1.critical;
        c.worst_vs_lambda = std::max(m1.lambda_max > 0 ? m1.observed / m1.lambda_max : 0.0,
                                     mn.lambda_max > 0 ? mn.observed / mn.lambda_max : 0.0);
        c.efficiency_n = mn.bound > 0 ? mn.observed / mn.bound : 0.0;
        c.efficiency_1 = m1.bound > 0 ? m1.observed / m1.bound : 0.0;
        c.speedup = m1.observed > 0 ? mn.observed / m1.observed : 0.0;
        c.out = m1.critical_name.empty() ? "output" : m1.critical_name;
        c.out_word = c.out.substr(0, c.out.find(" ("));
        c.below_plateau = static_cast<double>(c.N) < m1.plateau_at;
        c.path_share = critical_path_share(rn, m1.critical);
        c.parallelism = rn.report.dag.parallelism;
        // The output's share of the work (1/P*): what the critical path would hold if the chain did not matter.
        c.output_share = m1.plateau_at > 0 ? 1.0 / m1.plateau_at : 0.0;
        c.v = compare_virtual(data, m1.critical);
        return c;
    }

    // The virtual curve. Each run is measured against its own lambda_max (stage times differ a little
    // from run to run: they are CPU times measured now); W and P* come from the P=1 virtual run, as the
    // real curve's come from the real P=1 run. The critical stage is the real runs' (write).
    static virtual_curve compare_virtual(const lesson_data& data, long critical) {
        virtual_curve v;
        for (unsigned P : virtual_workers) v.runs.push_back(measure(data.run(virtual_key(P))));
        const measured &v1 = v.at(1), &vn = v.at(virtual_many), &vf = v.at(virtual_few);
        v.vs_lambda = vn.lambda_max > 0 ? vn.observed / vn.lambda_max : 0.0;
        v.vs_linear = v1.W > 0 ? vn.observed / (virtual_many / v1.W) : 0.0;
        v.gain = vf.observed > 0 ? vn.observed / vf.observed : 0.0;
        v.path_share = critical_path_share(data.run(virtual_key(virtual_many)), critical);
        v.input_over_output = v1.S > 0 ? stage_time(data.run(virtual_key(1)), 0) / v1.S : 0.0;
        v.suspended = data.run(virtual_key(virtual_many)).report.stats.suspensions;
        return v;
    }

    static output_node middle_output(const lesson_data& data, const comparison& c) {
        const recorded& rn = data.run(key_for(c.N));
        const auto& dag = rn.model->runs.at(rn.report.run).dag;
        output_node o;
        o.mid = dag.iterations / 2;
        const std::uint32_t sel =
            c.m1.critical >= 0 ? dag.find(o.mid, static_cast<std::uint64_t>(c.m1.critical)) : tm::no_index;
        if (sel == tm::no_index) return o;
        double longest = 1;
        for (const recorded& r : data.runs) longest = std::max(longest, static_cast<double>(r.report.makespan()));
        const tm::dag_node& n = dag.nodes[sel];
        const double t = static_cast<double>(n.end - rn.report.start);
        // About 8 items at the observed rate on each side: the output chain and the work around it.
        const double half = c.mn.observed > 0 ? 8e9 / c.mn.observed : longest * 0.02;
        o.cursor = std::clamp(t / longest, 0.0, 1.0);
        const double a = std::clamp((t - half) / longest, 0.0, 1.0);
        const double b = std::clamp((t + half) / longest, 0.0, 1.0);
        if (a < b) o.window = std::pair{a, b};
        o.node = std::pair{o.mid, static_cast<std::uint64_t>(c.m1.critical)};
        return o;
    }
};

}   // namespace

std::unique_ptr<lesson> make_serial_bottleneck_lesson() { return std::make_unique<serial_bottleneck_lesson>(); }

}   // namespace pipescope::lessons
