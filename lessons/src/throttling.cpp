// Lesson "throttling": what the throttling limit K costs (seed 001 §1, §10, §11).
//
// PIPER never lets iteration i+K start before iteration i has retired: a throttling edge from the
// end of i to the start of i+K (§1). The edges bound the space (§8) but may lengthen the span: for
// a uniform pipeline T∞ = T∞(unthrottled) + q(W − K·S) with q < n/K throttling edges on the
// critical path, and only while W > K·S (§11, Theorem 11.1). The lesson records ferret (coarse,
// nearly uniform iterations: W/S ≈ 15-25) and pipe-fib (one bit per stage: an iteration is hundreds
// of stages, so W ≫ K·S for any K = Θ(P)) at K = 1, 2 and 4P, plus ferret at the paper's K = 10P
// (§10), and
// reads from each trace's DAG bounds (analysis/dag_bounds.hpp) the span with and without the
// throttling edges, the parallelism T1/T∞, the throttling edges on the critical path, and from
// the time breakdown how much of the workers' time was spent without work.
#include <pipescope/lessons/lesson.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace pipescope::lessons {

namespace {

namespace an = pipescope::analysis;
namespace tm = pipescope::trace;

// pipe-fib's n by lesson size: one node per bit makes ~0.35·n² nodes (n = 1000: 350k nodes, a
// 4 MB trace); the workload's own sizes (2000 and up) would make each trace several times larger
// for the same picture.
unsigned pipe_fib_n(const std::string& size) {
    if (size == "tiny") return 500;
    if (size == "large") return 2000;
    return 1000;
}

struct k_run {
    std::string key;
    unsigned K;
};

// The K values the lesson compares, for P workers.
std::vector<k_run> ferret_ks(unsigned p) {
    return {{"ferret-K1", 1}, {"ferret-K2", 2}, {"ferret-K4P", 4 * p}, {"ferret-K10P", 10 * p}};
}
std::vector<k_run> pipe_fib_ks(unsigned p) { return {{"pipe-fib-K1", 1}, {"pipe-fib-K2", 2}, {"pipe-fib-K4P", 4 * p}}; }

// Share of all workers' time in which they had nothing to run: idle (looking for work), stall
// (work existed but waited on a cross or throttling edge) and parked (asleep).
double without_work(const an::run_breakdown& b) {
    const an::time_split& t = b.total.time;
    return t.fraction(an::time_category::idle) + t.fraction(an::time_category::stall) +
           t.fraction(an::time_category::parked);
}

double per(double a, double b) { return b > 0 ? a / b : 0.0; }

// T∞ with the throttling edges over T∞ without them (1 = throttling costs the span nothing).
double span_ratio(const an::dag_bounds& d) {
    return per(static_cast<double>(d.with_throttle.span), static_cast<double>(d.without_throttle.span));
}

// pipe-fib's nodes last ~15 ns, its span well under a millisecond: one node during which the OS
// took the core away (milliseconds on a loaded machine) becomes most of the span and hides what
// throttling does. No pipe-fib node legitimately takes 20 µs (one bit; a stage-0 node that starts
// the iteration is under 1 µs), so its DAG bounds are also computed with every node counted at
// most that long.
constexpr std::uint64_t preemption_cap_ns = 20'000;

struct capped_bounds {
    double parallelism = 0, parallelism_unthrottled = 0;
    std::uint64_t capped = 0;    // nodes longer than the cap
    std::uint64_t longest = 0;   // ns: the longest node as recorded
};

capped_bounds bounds_without_preemption(const tm::pipeline_dag& dag) {
    capped_bounds b;
    tm::pipeline_dag capped = dag;
    std::uint64_t work = 0;
    for (tm::dag_node& n : capped.nodes) {
        const std::uint64_t d = n.end - n.start;
        b.longest = std::max(b.longest, d);
        if (d > preemption_cap_ns) {
            ++b.capped;
            n.end = n.start + preemption_cap_ns;
        }
        work += n.end - n.start;
    }
    const std::uint64_t with = an::longest_path(capped, true).span, without = an::longest_path(capped, false).span;
    b.parallelism = with ? static_cast<double>(work) / static_cast<double>(with) : 0.0;
    b.parallelism_unthrottled = without ? static_cast<double>(work) / static_cast<double>(without) : 0.0;
    return b;
}

// "; 1.95 as recorded" when the cap changed the figure, so that the reader sees both.
std::string as_recorded(double capped, double recorded) {
    return std::abs(capped - recorded) > 0.05 * capped ? "; " + fixed(recorded, 2) + " as recorded" : "";
}

// " (n/K = 15)": the bound q < n/K of §11, next to the count.
std::string n_over_k(std::uint64_t iterations, unsigned K) {
    return " (n/K = " + fixed(static_cast<double>(iterations) / K, 0) + ")";
}

// What the story quotes, measured from the seven runs.
struct measures {
    unsigned p = 0, k4 = 0, k10 = 0;   // workers, 4P, 10P
    unsigned fib_n = 0;                // pipe-fib's n
    // ferret
    double par1 = 0, upar1 = 0;               // parallelism at K = 1, with and without throttling edges
    double r1 = 0, r2 = 0, r4 = 0, r10 = 0;   // span with / without throttling edges at K = 1, 2, 4P, 10P
    double idle1 = 0, idle4 = 0;              // share of the workers' time without work at K = 1, 4P
    double untraced1 = 0;                     // untraced share at K = 1
    std::uint64_t n_ferret = 0;               // iterations
    std::uint64_t e1 = 0, e4 = 0, e10 = 0;    // throttling edges on the critical path
    double w_over_s = 0;                      // ceil(W/S)
    double speedup = 0;                       // makespan at K = 1 / at K = 4P
    double work_growth = 0;                   // work at K = 4P / at K = 1
    // pipe-fib, with node times capped at 20 µs (bounds_without_preemption)
    capped_bounds c1, c2, c4;
    double recorded1 = 0, recorded2 = 0, recorded4 = 0;   // parallelism as recorded
    std::uint64_t n_fib = 0, ge4 = 0;
    // The DAG step: node (n/2, 1) of ferret at K = 1 and where the cursor shows it running.
    std::uint64_t mid_iteration = 0;
    std::optional<double> dag_cursor;
};

const tm::pipeline_dag& dag_of(const lesson_data& data, const char* key) {
    const recorded& r = data.run(key);
    return r.model->runs[r.report.run].dag;
}

// The middle of node (iteration, 1) of ferret at K = 1 on the aligned axis: a fraction of the longest run.
std::optional<double> cursor_at(const lesson_data& data, std::uint64_t iteration) {
    const an::run_report& f1 = data.run("ferret-K1").report;
    std::uint64_t longest = 0;
    for (const recorded& r : data.runs) longest = std::max(longest, r.report.makespan());
    const tm::pipeline_dag& d = dag_of(data, "ferret-K1");
    const std::uint32_t k = d.find(iteration, 1);
    if (k == tm::no_index || longest == 0 || d.nodes[k].start < f1.start) return std::nullopt;
    const tm::dag_node& node = d.nodes[k];
    const std::uint64_t middle = node.start - f1.start + (node.end - node.start) / 2;
    return std::clamp(per(static_cast<double>(middle), static_cast<double>(longest)), 0.0, 1.0);
}

measures measure(const lesson_data& data) {
    const an::run_report& f1 = data.run("ferret-K1").report;
    const an::run_report& f2 = data.run("ferret-K2").report;
    const an::run_report& f4 = data.run("ferret-K4P").report;
    const an::run_report& f10 = data.run("ferret-K10P").report;
    measures m;
    m.p = data.opts.workers;
    m.k4 = 4 * m.p;
    m.k10 = 10 * m.p;
    m.fib_n = pipe_fib_n(data.opts.size);
    m.par1 = f1.dag.parallelism;
    m.upar1 = f1.dag.parallelism_unthrottled;
    m.r1 = span_ratio(f1.dag);
    m.r2 = span_ratio(f2.dag);
    m.r4 = span_ratio(f4.dag);
    m.r10 = span_ratio(f10.dag);
    m.idle1 = without_work(f1.breakdown);
    m.idle4 = without_work(f4.breakdown);
    m.untraced1 = f1.breakdown.total.time.fraction(an::time_category::untraced);
    m.n_ferret = f1.dag.iterations;
    m.e1 = f1.dag.with_throttle.throttle_edges_on_path;
    m.e4 = f4.dag.with_throttle.throttle_edges_on_path;
    m.e10 = f10.dag.with_throttle.throttle_edges_on_path;
    m.w_over_s = f4.queueing.k_for_span;
    // The one wall-clock figure: both runs are this lesson's, on the same machine, one after the
    // other. Shared cores show up as node work that grows when the two workers run side by side.
    m.speedup = per(static_cast<double>(f1.makespan()), static_cast<double>(f4.makespan()));
    m.work_growth = per(static_cast<double>(f4.dag.work), static_cast<double>(f1.dag.work));
    m.c1 = bounds_without_preemption(dag_of(data, "pipe-fib-K1"));
    m.c2 = bounds_without_preemption(dag_of(data, "pipe-fib-K2"));
    m.c4 = bounds_without_preemption(dag_of(data, "pipe-fib-K4P"));
    m.recorded1 = data.run("pipe-fib-K1").report.dag.parallelism;
    m.recorded2 = data.run("pipe-fib-K2").report.dag.parallelism;
    const an::run_report& g4 = data.run("pipe-fib-K4P").report;
    m.recorded4 = g4.dag.parallelism;
    m.n_fib = data.run("pipe-fib-K1").report.dag.iterations;
    m.ge4 = g4.dag.with_throttle.throttle_edges_on_path;
    m.mid_iteration = m.n_ferret / 2;
    m.dag_cursor = cursor_at(data, m.mid_iteration);
    return m;
}

// Why a pipe-fib figure may still disagree: a preemption shorter than the cap, or several.
std::string preempted(const capped_bounds& c) {
    return "the OS took a worker's core in the middle of pipe-fib nodes (" + std::to_string(c.capped) +
           " nodes over 20 µs; the longest, " + fixed(static_cast<double>(c.longest) / 1e3, 0) +
           " µs, against ~15 ns per bit), which still dominates the span";
}

story_values values_of(const measures& m) {
    story_values v;
    v.push_back(fmt::arg("k4", m.k4));
    v.push_back(fmt::arg("k10", m.k10));
    v.push_back(fmt::arg("k2_is_p", m.p == 2 ? " = P" : ""));
    v.push_back(fmt::arg("fib_n", m.fib_n));
    v.push_back(fmt::arg("par1", fixed(m.par1, 2)));
    v.push_back(fmt::arg("upar1", fixed(m.upar1, 1)));
    v.push_back(fmt::arg("r1", ratio(m.r1)));
    v.push_back(fmt::arg("r2", ratio(m.r2)));
    v.push_back(fmt::arg("r4", ratio(m.r4)));
    v.push_back(fmt::arg("r10", ratio(m.r10)));
    v.push_back(fmt::arg("idle1", percent(m.idle1)));
    v.push_back(fmt::arg("idle4", percent(m.idle4)));
    v.push_back(fmt::arg("e1", m.e1));
    v.push_back(fmt::arg("e4", m.e4));
    v.push_back(fmt::arg("e10", m.e10));
    v.push_back(fmt::arg("ferret_edges", m.n_ferret - 1));
    v.push_back(fmt::arg("n_over_1", n_over_k(m.n_ferret, 1)));
    v.push_back(fmt::arg("n_over_k4", n_over_k(m.n_ferret, m.k4)));
    v.push_back(fmt::arg("fib_n_over_k4", n_over_k(m.n_fib, m.k4)));
    v.push_back(fmt::arg("fib_iterations_per_k4", fixed(static_cast<double>(m.n_fib) / m.k4, 0)));
    v.push_back(fmt::arg("w_over_s", fixed(m.w_over_s, 0)));
    v.push_back(fmt::arg("gp1", fixed(m.c1.parallelism, 2)));
    v.push_back(fmt::arg("gp2", fixed(m.c2.parallelism, 2)));
    v.push_back(fmt::arg("gp4", fixed(m.c4.parallelism, 2)));
    v.push_back(fmt::arg("gup4", fixed(m.c4.parallelism_unthrottled, 1)));
    v.push_back(fmt::arg("gp1_recorded", as_recorded(m.c1.parallelism, m.recorded1)));
    v.push_back(fmt::arg("gp2_recorded", as_recorded(m.c2.parallelism, m.recorded2)));
    v.push_back(fmt::arg("gp4_recorded", as_recorded(m.c4.parallelism, m.recorded4)));
    v.push_back(fmt::arg("preempted_k2", preempted(m.c2)));
    v.push_back(fmt::arg("preempted_k4", preempted(m.c4)));
    v.push_back(fmt::arg("ge4", m.ge4));
    v.push_back(fmt::arg("mid_iteration", m.mid_iteration));
    v.push_back(fmt::arg("why_no_idle_k1", m.p < 2 ? "with one worker nobody can starve"
                                                   : "the run was too short to show it: the workers were untraced (asleep "
                                                     "since before their first event) " +
                                                         percent(m.untraced1) + " of the time; try --size small or larger"));
    v.push_back(fmt::arg("why_no_speedup", m.p < 2 ? "with one worker K cannot buy parallelism: any difference is the noise "
                                                     "of two runs"
                                                   : "the same nodes took " + ratio(m.work_growth) +
                                                         " the work at K = " + std::to_string(m.k4) +
                                                         " (both workers busy) as at K = 1: the two cores (or their caches "
                                                         "and memory) were shared with other programs, so running nodes "
                                                         "side by side gained little time"));
    return v;
}

std::vector<finding_measure> findings_of(const measures& m) {
    const double gp1 = m.c1.parallelism, gp2 = m.c2.parallelism, gp4 = m.c4.parallelism;
    const double n_fib = static_cast<double>(m.n_fib);
    return {
        {"parallelism_k1", m.par1, fixed(m.par1, 2), m.par1 < 1.1},
        {"unthrottled_parallelism_k1", m.upar1, fixed(m.upar1, 1), m.upar1 > 2 * std::max(m.par1, 1.0)},
        {"span_ratio_k1", m.r1, ratio(m.r1), m.r1 > 2},
        {"span_ratio_k2", m.r2, ratio(m.r2), m.r2 > m.r4},
        {"span_ratio_k4p", m.r4, ratio(m.r4), m.r4 < m.r1},
        {"idle_k1", m.idle1, percent(m.idle1), m.p < 2 || m.idle1 > 0.3},
        {"idle_k4p", m.idle4, percent(m.idle4), m.idle4 < m.idle1 - 0.1},
        {"makespan_ratio", m.speedup, ratio(m.speedup), m.p >= 2 && m.speedup > 1.3},
        {"throttle_edges_k1", static_cast<double>(m.e1), std::to_string(m.e1), m.n_ferret > 1 && m.e1 + 1 >= m.n_ferret},
        {"throttle_edges_k4p", static_cast<double>(m.e4), std::to_string(m.e4),
         m.e4 * 2 < m.e1 && static_cast<double>(m.e4) <= static_cast<double>(m.n_ferret) / m.k4 + 1},
        {"throttle_edges_k10p", static_cast<double>(m.e10), std::to_string(m.e10), m.e10 <= m.e4},
        {"pipefib_parallelism_k1", gp1, fixed(gp1, 2), gp1 < 1.1},
        {"pipefib_parallelism_k2", gp2, fixed(gp2, 2), gp2 > gp1},
        {"pipefib_parallelism_k4p", gp4, fixed(gp4, 2), gp4 > gp2 && gp4 < m.c4.parallelism_unthrottled},
        {"pipefib_throttle_edges_k4p", static_cast<double>(m.ge4), std::to_string(m.ge4),
         static_cast<double>(m.ge4) <= n_fib / m.k4 + 1 && static_cast<double>(m.ge4) >= n_fib / m.k4 / 2},
    };
}

const finding_text findings[] = {
    // §1: "Cilk-P inhibits the start of iteration i + K until iteration i has completed"; with K = 1
    // that makes the DAG one chain, whatever the stages could overlap.
    {"parallelism_k1", "ferret, K = 1: parallelism T1/T∞ with the throttling edges",
     "§1: a throttling edge from the end of iteration i to the start of i+K; at K = 1 every iteration waits for the "
     "previous one to retire, so T∞ = T1",
     "the DAG rebuilt from the trace is not one chain: it lacks throttling edges"},
    {"unthrottled_parallelism_k1", "ferret, K = 1: parallelism T1/T∞ of the same DAG without its throttling edges",
     "§1: ferret's SPS DAG has parallelism n(r+2)/(n+r) ≥ r/2 + 1, much more than P; §11 compares the throttled DAG "
     "with this unthrottled one",
     "the recorded stages were too even or too short for the staircase to matter (try --size large)"},
    {"span_ratio_k1", "ferret, K = 1: span with / without throttling edges",
     "§11: throttling edges lengthen the span, T∞ = T∞(unthrottled) + q(W − K·S) for a uniform pipeline",
     "the span without throttling edges was itself dominated by one long node (a preempted worker?)"},
    {"span_ratio_k2", "ferret, K = 2{k2_is_p}: span with / without throttling edges",
     "§11: Theorem 11.1 needs K = aP with a > 1; each throttling edge on the critical path adds W − K·S, so K = 2 still "
     "costs far more than 4P",
     "noise in the node times: one slow node moved the critical path"},
    {"span_ratio_k4p", "ferret, K = 4P = {k4}: span with / without throttling edges",
     "§10: Cilk-P's default K = 4P \"seems to work well in general\"; §11, Theorem 11.1: with K = aP throttling only "
     "costs a constant factor (1 + c/a) for uniform pipelines",
     "noise in the node times: one slow node moved the critical path"},
    {"idle_k1", "ferret, K = 1: share of the workers' time without work (idle, stall, parked)",
     "§1: throttling inhibits the start of new iterations; with K = 1 only one iteration is ever in flight, so P − 1 "
     "workers have nothing to do",
     "{why_no_idle_k1}"},
    {"idle_k4p", "ferret, K = 4P = {k4}: share of the workers' time without work",
     "§10 (Fig. 8): ferret under Cilk-P with K = 10P scales almost linearly to 16 cores",
     "K = 1 did not starve the workers either (see above), or the machine was loaded and the workers parked while the "
     "OS ran other programs"},
    {"makespan_ratio", "ferret: makespan at K = 1 / makespan at K = 4P = {k4}",
     "§10, Fig. 8: ferret's Cilk-P speedup on 2 cores is 1.97 (with K = 10P)", "{why_no_speedup}"},
    {"throttle_edges_k1", "ferret, K = 1: throttling edges on the critical path{n_over_1}",
     "§11 (proof of Theorem 11.1): a critical path holds q < n/K throttling edges; at K = 1 it takes all n − 1",
     "the critical path skipped some throttling edges"},
    {"throttle_edges_k4p", "ferret, K = 4P = {k4}: throttling edges on the critical path{n_over_k4}",
     "§11: q < n/K, and an edge is only worth taking while W > K·S; here W/S = {w_over_s}",
     "one long node pulled the critical path through more iterations than n/K"},
    {"throttle_edges_k10p",
     "ferret, K = 10P = {k10} (the paper's K for ferret): throttling edges on the critical path (span with / without "
     "them: {r10})",
     "§10: ferret \"scales slightly better with less throttling\", so the paper used K = 10P; §11: throttling edges "
     "cannot lengthen the span once K·S ≥ W (here W/S = {w_over_s})",
     "one long node pulled the critical path through throttling edges"},
    // pipe-fib: W (one node per bit of F_i: hundreds of stages) ≫ K·S (one bit), so every
    // throttling edge on the path costs almost a whole iteration: parallelism grows with K.
    // Node times capped at 20 µs (bounds_without_preemption); "as recorded" follows when it differs.
    {"pipefib_parallelism_k1", "pipe-fib, K = 1: parallelism T1/T∞ (nodes counted ≤ 20 µs{gp1_recorded})",
     "§1: K = 1 serializes the iterations", "the DAG rebuilt from the trace is not one chain: it lacks throttling edges"},
    {"pipefib_parallelism_k2", "pipe-fib, K = 2: parallelism T1/T∞ (nodes counted ≤ 20 µs{gp2_recorded})",
     "§11: when W ≫ K·S each throttling edge on the path adds almost a whole iteration (W − K·S)", "{preempted_k2}"},
    {"pipefib_parallelism_k4p",
     "pipe-fib, K = 4P = {k4}: parallelism T1/T∞ (nodes counted ≤ 20 µs{gp4_recorded}; unthrottled: {gup4})",
     "§11: throttling costs only a constant factor if W ≤ K·S; pipe-fib's iterations are hundreds of 1-bit stages, far "
     "beyond 4P, so the parallelism stays near K while the unthrottled DAG has more",
     "{preempted_k4}"},
    {"pipefib_throttle_edges_k4p", "pipe-fib, K = 4P = {k4}: throttling edges on the critical path{fib_n_over_k4}",
     "§11 (proof of Theorem 11.1): q < n/K; with W ≫ K·S the critical path takes nearly all of them",
     "one long node pulled the critical path off the throttling chain"},
};

std::vector<step_text> steps(const measures& m) {
    const view_move compare_runs{"compare", std::nullopt, std::nullopt, std::nullopt, true};
    const view_move explain{"explain", std::nullopt, std::nullopt, std::nullopt, true};
    return {
        {"What to look at",
         "The compare view puts the runs on one axis from their starts: ferret at K = 1, 2, {k4} (4P) and {k10} (10P), "
         "then pipe-fib (n = {fib_n}, one node per bit) at K = 1, 2, {k4}. At K = 1 the node slices of the two workers "
         "never overlap: while one worker runs a node, the other is idle or parked ({idle1} of the workers' time without "
         "work). At K = {k4} both rows are full ({idle4}).",
         compare_runs},
        {"The DAG at K = 1",
         "ferret at K = 1, at iteration {mid_iteration}: it runs, every later iteration is not ready, although their "
         "stage 1 (segment, ~0.5 ms) could run side by side. The critical path (red) runs through every node: {e1} "
         "throttling edges on it, T∞ = T1, parallelism {par1}; without those edges the same DAG has parallelism {upar1}. "
         "Zoom in (wheel) to see the dashed pink throttling edge from the end of each iteration to the start of the next; "
         "the run selector above the DAG switches to K = {k4}, where it reaches K iterations ahead.",
         {"dag", m.dag_cursor, std::nullopt, std::pair<std::uint64_t, std::uint64_t>{m.mid_iteration, 1}, true}},
        {"What the paper found",
         "Cilk-P throttles a pipe_while: iteration i+K waits for iteration i to complete, which bounds the stack space to "
         "P(S1 + fDK) (§8) and prevents runaway pipelines (§1). The price is in the span: with q throttling edges on the "
         "critical path, T∞ = T∞(unthrottled) + q(W − K·S), q < n/K, and the edges only cost while an iteration's work W "
         "exceeds K times its heaviest serial stage S (§11, Theorem 11.1). With K = aP a uniform pipeline loses only a "
         "constant factor; the default K = 4P works well, and ferret ran with K = 10P (§10). A nonuniform pipeline can "
         "need far more (Theorem 11.2).",
         explain},
        {"What this run shows",
         "ferret's span with / without throttling edges: {r1} at K = 1, {r2} at K = 2, {r4} at K = {k4}, {r10} at K = "
         "{k10}. Throttling edges on the critical path: {e1} of {ferret_edges} at K = 1, {e4} at K = {k4}, {e10} at K = "
         "{k10} (W/S = {w_over_s}: from K ≈ W/S they stop lengthening the span). pipe-fib's iterations are hundreds of "
         "15 ns nodes, so W ≫ K·S at every K tried: its parallelism (nodes counted at most 20 µs, so that one node during "
         "which the OS took the core does not hide the rest) is {gp1}, {gp2} and {gp4} at K = 1, 2, {k4} against {gup4} "
         "unthrottled, with {ge4} throttling edges on the path at K = {k4} (n/K = {fib_iterations_per_k4}). The explain "
         "view lists the verdicts.",
         explain},
        {"Try next",
         "More workers make 4P reach ferret's W/S: `pipescope lesson throttling --workers 4`. Or find the K past which "
         "ferret's throttling edges leave the critical path: `pipescope run ferret --param K=16 -o k16.pftrace` then "
         "`pipescope stats k16.pftrace` (\"K >= W/S\"). pipe-fib needs K in the hundreds: `pipescope run pipe-fib --param "
         "n={fib_n} --param K=400 -o k400.pftrace`.",
         compare_runs},
    };
}

class throttling_lesson final : public lesson {
public:
    const char* name() const override { return "throttling"; }
    const char* title() const override { return "Throttling: too small a K starves the pipeline"; }
    const char* seeds() const override { return "001 §1, §10, §11 (Theorem 11.1)"; }

    std::vector<run_spec> runs(const options& o) const override {
        std::vector<run_spec> v;
        for (const k_run& k : ferret_ks(o.workers))
            v.push_back({.key = k.key, .workload = "ferret", .policy = "piper", .params = {"K=" + std::to_string(k.K)}});
        const std::string n = "n=" + std::to_string(pipe_fib_n(o.size));
        for (const k_run& k : pipe_fib_ks(o.workers))
            v.push_back(
                {.key = k.key, .workload = "pipe-fib", .policy = "piper", .params = {n, "K=" + std::to_string(k.K)}});
        return v;
    }

    story tell(const lesson_data& data) const override {
        const measures m = measure(data);
        return tell_story(findings, findings_of(m), steps(m), values_of(m));
    }
};

}   // namespace

std::unique_ptr<lesson> make_throttling_lesson() { return std::make_unique<throttling_lesson>(); }

}   // namespace pipescope::lessons
