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
#include "lesson.hpp"

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
    std::uint64_t capped = 0;           // nodes longer than the cap
    std::uint64_t longest = 0;          // ns: the longest node as recorded
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
            v.push_back({.key = k.key, .workload = "pipe-fib", .policy = "piper", .params = {n, "K=" + std::to_string(k.K)}});
        return v;
    }

    story tell(const lesson_data& data) const override {
        const unsigned p = data.opts.workers;
        const an::run_report& f1 = data.run("ferret-K1").report;
        const an::run_report& f2 = data.run("ferret-K2").report;
        const an::run_report& f4 = data.run("ferret-K4P").report;
        const an::run_report& f10 = data.run("ferret-K10P").report;
        const an::run_report& g1 = data.run("pipe-fib-K1").report;
        const an::run_report& g2 = data.run("pipe-fib-K2").report;
        const an::run_report& g4 = data.run("pipe-fib-K4P").report;
        const unsigned k4 = 4 * p, k10 = 10 * p;
        const std::string k4s = std::to_string(k4), k10s = std::to_string(k10);

        const double par1 = f1.dag.parallelism, upar1 = f1.dag.parallelism_unthrottled;
        const double r1 = span_ratio(f1.dag), r2 = span_ratio(f2.dag);
        const double r4 = span_ratio(f4.dag), r10 = span_ratio(f10.dag);
        const double idle1 = without_work(f1.breakdown), idle4 = without_work(f4.breakdown);
        const std::uint64_t n_ferret = f1.dag.iterations, n_fib = g1.dag.iterations;
        const std::uint64_t e1 = f1.dag.with_throttle.throttle_edges_on_path;
        const std::uint64_t e4 = f4.dag.with_throttle.throttle_edges_on_path;
        const std::uint64_t e10 = f10.dag.with_throttle.throttle_edges_on_path;
        const double w_over_s = f4.queueing.k_for_span;   // ceil(W/S) of ferret
        auto dag_of = [&](const char* key) -> const tm::pipeline_dag& {
            const recorded& r = data.run(key);
            return r.model->runs[r.report.run].dag;
        };
        const capped_bounds c1 = bounds_without_preemption(dag_of("pipe-fib-K1"));
        const capped_bounds c2 = bounds_without_preemption(dag_of("pipe-fib-K2"));
        const capped_bounds c4 = bounds_without_preemption(dag_of("pipe-fib-K4P"));
        const double gp1 = c1.parallelism, gp2 = c2.parallelism, gp4 = c4.parallelism;
        const double gup4 = c4.parallelism_unthrottled;
        // Why a pipe-fib figure may still disagree: a preemption shorter than the cap, or several.
        auto preempted = [](const capped_bounds& c) {
            return "the OS took a worker's core in the middle of pipe-fib nodes (" + std::to_string(c.capped) +
                   " nodes over 20 µs; the longest, " + fixed(static_cast<double>(c.longest) / 1e3, 0) +
                   " µs, against ~15 ns per bit), which still dominates the span";
        };
        const std::uint64_t ge4 = g4.dag.with_throttle.throttle_edges_on_path;

        story s;
        auto& F = s.findings;
        // §1: "Cilk-P inhibits the start of iteration i + K until iteration i has completed";
        // with K = 1 that makes the DAG one chain, whatever the stages could overlap.
        F.push_back({"parallelism_k1", "ferret, K = 1: parallelism T1/T∞ with the throttling edges", par1,
                     fixed(par1, 2),
                     "§1: a throttling edge from the end of iteration i to the start of i+K; at K = 1 every iteration "
                     "waits for the previous one to retire, so T∞ = T1",
                     par1 < 1.1, "the DAG rebuilt from the trace is not one chain: it lacks throttling edges"});
        F.push_back({"unthrottled_parallelism_k1",
                     "ferret, K = 1: parallelism T1/T∞ of the same DAG without its throttling edges", upar1,
                     fixed(upar1, 1),
                     "§1: ferret's SPS DAG has parallelism n(r+2)/(n+r) ≥ r/2 + 1, much more than P; §11 "
                     "compares the throttled DAG with this unthrottled one",
                     upar1 > 2 * std::max(par1, 1.0),
                     "the recorded stages were too even or too short for the staircase to matter (try --size large)"});
        F.push_back({"span_ratio_k1", "ferret, K = 1: span with / without throttling edges", r1, ratio(r1),
                     "§11: throttling edges lengthen the span, T∞ = T∞(unthrottled) + q(W − K·S) for a uniform "
                     "pipeline",
                     r1 > 2,
                     "the span without throttling edges was itself dominated by one long node (a preempted worker?)"});
        F.push_back({"span_ratio_k2", std::string("ferret, K = 2") + (p == 2 ? " = P" : "") +
                                          ": span with / without throttling edges",
                     r2, ratio(r2),
                     "§11: Theorem 11.1 needs K = aP with a > 1; each throttling edge on the critical path adds "
                     "W − K·S, so K = 2 still costs far more than 4P",
                     r2 > r4, "noise in the node times: one slow node moved the critical path"});
        F.push_back({"span_ratio_k4p", "ferret, K = 4P = " + k4s + ": span with / without throttling edges", r4,
                     ratio(r4),
                     "§10: Cilk-P's default K = 4P \"seems to work well in general\"; §11, Theorem 11.1: with K = aP "
                     "throttling only costs a constant factor (1 + c/a) for uniform pipelines",
                     r4 < r1, "noise in the node times: one slow node moved the critical path"});
        F.push_back({"idle_k1", "ferret, K = 1: share of the workers' time without work (idle, stall, parked)", idle1,
                     percent(idle1),
                     "§1: throttling inhibits the start of new iterations; with K = 1 only one iteration is ever in "
                     "flight, so P − 1 workers have nothing to do",
                     p < 2 || idle1 > 0.3,
                     p < 2 ? "with one worker nobody can starve"
                           : "the run was too short to show it: the workers were untraced (asleep since before their "
                             "first event) " + percent(f1.breakdown.total.time.fraction(an::time_category::untraced)) +
                                 " of the time; try --size small or larger"});
        F.push_back({"idle_k4p", "ferret, K = 4P = " + k4s + ": share of the workers' time without work", idle4,
                     percent(idle4),
                     "§10 (Fig. 8): ferret under Cilk-P with K = 10P scales almost linearly to 16 cores",
                     idle4 < idle1 - 0.1,
                     "K = 1 did not starve the workers either (see above), or the machine was loaded and the "
                     "workers parked while the OS ran other programs"});
        // The one wall-clock figure: both runs are this lesson's, on the same machine, one after the
        // other. Shared cores show up as node work that grows when the two workers run side by side.
        const double speedup = per(static_cast<double>(f1.makespan()), static_cast<double>(f4.makespan()));
        const double work_growth = per(static_cast<double>(f4.dag.work), static_cast<double>(f1.dag.work));
        F.push_back({"makespan_ratio", "ferret: makespan at K = 1 / makespan at K = 4P = " + k4s, speedup,
                     ratio(speedup),
                     "§10, Fig. 8: ferret's Cilk-P speedup on 2 cores is 1.97 (with K = 10P)", p >= 2 && speedup > 1.3,
                     p < 2 ? "with one worker K cannot buy parallelism: any difference is the noise of two runs"
                           : "the same nodes took " + ratio(work_growth) + " the work at K = " + k4s +
                                 " (both workers busy) as at K = 1: the two cores (or their caches and memory) were "
                                 "shared with other programs, so running nodes side by side gained little time"});
        F.push_back({"throttle_edges_k1",
                     "ferret, K = 1: throttling edges on the critical path" + n_over_k(n_ferret, 1),
                     static_cast<double>(e1), std::to_string(e1),
                     "§11 (proof of Theorem 11.1): a critical path holds q < n/K throttling edges; at K = 1 it takes "
                     "all n − 1",
                     n_ferret > 1 && e1 + 1 >= n_ferret, "the critical path skipped some throttling edges"});
        F.push_back({"throttle_edges_k4p",
                     "ferret, K = 4P = " + k4s + ": throttling edges on the critical path" + n_over_k(n_ferret, k4),
                     static_cast<double>(e4), std::to_string(e4),
                     "§11: q < n/K, and an edge is only worth taking while W > K·S; here W/S = " + fixed(w_over_s, 0),
                     e4 * 2 < e1 && static_cast<double>(e4) <= static_cast<double>(n_ferret) / k4 + 1,
                     "one long node pulled the critical path through more iterations than n/K"});
        F.push_back({"throttle_edges_k10p",
                     "ferret, K = 10P = " + k10s + " (the paper's K for ferret): throttling edges on the critical path "
                     "(span with / without them: " + ratio(r10) + ")",
                     static_cast<double>(e10), std::to_string(e10),
                     "§10: ferret \"scales slightly better with less throttling\", so the paper used K = 10P; §11: "
                     "throttling edges cannot lengthen the span once K·S ≥ W (here W/S = " + fixed(w_over_s, 0) + ")",
                     e10 <= e4, "one long node pulled the critical path through throttling edges"});
        // pipe-fib: W (one node per bit of F_i: hundreds of stages) ≫ K·S (one bit), so every
        // throttling edge on the path costs almost a whole iteration: parallelism grows with K.
        // Node times capped at 20 µs (bounds_without_preemption); "as recorded" follows when it differs.
        F.push_back({"pipefib_parallelism_k1",
                     "pipe-fib, K = 1: parallelism T1/T∞ (nodes counted ≤ 20 µs" +
                         as_recorded(gp1, g1.dag.parallelism) + ")",
                     gp1, fixed(gp1, 2), "§1: K = 1 serializes the iterations", gp1 < 1.1,
                     "the DAG rebuilt from the trace is not one chain: it lacks throttling edges"});
        F.push_back({"pipefib_parallelism_k2",
                     "pipe-fib, K = 2: parallelism T1/T∞ (nodes counted ≤ 20 µs" +
                         as_recorded(gp2, g2.dag.parallelism) + ")",
                     gp2, fixed(gp2, 2),
                     "§11: when W ≫ K·S each throttling edge on the path adds almost a whole iteration (W − K·S)",
                     gp2 > gp1, preempted(c2)});
        F.push_back({"pipefib_parallelism_k4p",
                     "pipe-fib, K = 4P = " + k4s + ": parallelism T1/T∞ (nodes counted ≤ 20 µs" +
                         as_recorded(gp4, g4.dag.parallelism) + "; unthrottled: " + fixed(gup4, 1) + ")",
                     gp4, fixed(gp4, 2),
                     "§11: throttling costs only a constant factor if W ≤ K·S; pipe-fib's iterations are hundreds of "
                     "1-bit stages, far beyond 4P, so the parallelism stays near K while the unthrottled DAG has more",
                     gp4 > gp2 && gp4 < gup4, preempted(c4)});
        F.push_back({"pipefib_throttle_edges_k4p",
                     "pipe-fib, K = 4P = " + k4s + ": throttling edges on the critical path" + n_over_k(n_fib, k4),
                     static_cast<double>(ge4), std::to_string(ge4),
                     "§11 (proof of Theorem 11.1): q < n/K; with W ≫ K·S the critical path takes nearly all of them",
                     static_cast<double>(ge4) <= static_cast<double>(n_fib) / k4 + 1 &&
                         static_cast<double>(ge4) >= static_cast<double>(n_fib) / k4 / 2,
                     "one long node pulled the critical path off the throttling chain"});

        const std::string n_fib_s = std::to_string(pipe_fib_n(data.opts.size));
        s.steps.push_back(
            {"What to look at",
             "The compare view puts the runs on one axis from their starts: ferret at K = 1, 2, " + k4s + " (4P) and " +
                 k10s + " (10P), then pipe-fib (n = " + std::to_string(pipe_fib_n(data.opts.size)) +
                 ", one node per bit) at K = 1, 2, " + k4s +
                 ". At K = 1 the node slices of the two workers never overlap: while one worker runs a node, "
                 "the other is idle or parked (" + percent(idle1) + " of the workers' time without work). "
                 "At K = " + k4s + " both rows are full (" + percent(idle4) + ").",
             {"compare", std::nullopt, std::nullopt, std::nullopt, true}});
        // The DAG step selects node (n/2, 1) of ferret at K = 1 (the first run that has it) and puts
        // the cursor in the middle of that node: on the aligned axis, a fraction of the longest run.
        const std::uint64_t mid_iteration = n_ferret / 2;
        std::optional<double> dag_cursor;
        {
            std::uint64_t longest = 0;
            for (const recorded& r : data.runs) longest = std::max(longest, r.report.makespan());
            const tm::pipeline_dag& d = dag_of("ferret-K1");
            const std::uint32_t k = d.find(mid_iteration, 1);
            if (k != tm::no_index && longest > 0 && d.nodes[k].start >= f1.start) {
                const tm::dag_node& node = d.nodes[k];
                const std::uint64_t middle = node.start - f1.start + (node.end - node.start) / 2;
                dag_cursor = std::clamp(per(static_cast<double>(middle), static_cast<double>(longest)), 0.0, 1.0);
            }
        }
        s.steps.push_back(
            {"The DAG at K = 1",
             "ferret at K = 1, at iteration " + std::to_string(mid_iteration) + ": it runs, every later iteration is "
             "not ready, although their stage 1 (segment, ~0.5 ms) could run side by side. The critical path (red) "
             "runs through every node: " + std::to_string(e1) + " throttling edges on it, T∞ = T1, parallelism " +
                 fixed(par1, 2) + "; without those edges the same DAG has parallelism " + fixed(upar1, 1) +
                 ". Zoom in (wheel) to see the dashed pink throttling edge from the end of each iteration to the "
                 "start of the next; the run selector above the DAG switches to K = " + k4s +
                 ", where it reaches K iterations ahead.",
             {"dag", dag_cursor, std::nullopt, std::pair<std::uint64_t, std::uint64_t>{mid_iteration, 1}, true}});
        s.steps.push_back(
            {"What the paper found",
             "Cilk-P throttles a pipe_while: iteration i+K waits for iteration i to complete, which bounds the stack "
             "space to P(S1 + fDK) (§8) and prevents runaway pipelines (§1). The price is in the span: with q "
             "throttling edges on the critical path, T∞ = T∞(unthrottled) + q(W − K·S), q < n/K, and the edges "
             "only cost while an iteration's work W exceeds K times its heaviest serial stage S (§11, Theorem "
             "11.1). With K = aP a uniform pipeline loses only a constant factor; the default K = 4P works well, "
             "and ferret ran with K = 10P (§10). A nonuniform pipeline can need far more (Theorem 11.2).",
             {"explain", std::nullopt, std::nullopt, std::nullopt, true}});
        s.steps.push_back(
            {"What this run shows",
             "ferret's span with / without throttling edges: " + ratio(r1) + " at K = 1, " + ratio(r2) + " at K = 2, " +
                 ratio(r4) + " at K = " + k4s + ", " + ratio(r10) + " at K = " + k10s +
                 ". Throttling edges on the critical path: " + std::to_string(e1) + " of " +
                 std::to_string(n_ferret - 1) + " at K = 1, " + std::to_string(e4) + " at K = " + k4s + ", " +
                 std::to_string(e10) + " at K = " + k10s + " (W/S = " + fixed(w_over_s, 0) +
                 ": from K ≈ W/S they stop lengthening the span). pipe-fib's iterations are hundreds of 15 ns "
                 "nodes, so W ≫ K·S at every K tried: its parallelism (nodes counted at most 20 µs, so that one node "
                 "during which the OS took the core does not hide the rest) is " + fixed(gp1, 2) + ", " +
                 fixed(gp2, 2) +
                 " and " + fixed(gp4, 2) + " at K = 1, 2, " + k4s + " against " + fixed(gup4, 1) +
                 " unthrottled, with " + std::to_string(ge4) + " throttling edges on the path at K = " + k4s +
                 " (n/K = " + fixed(static_cast<double>(n_fib) / k4, 0) + "). The explain view lists the verdicts.",
             {"explain", std::nullopt, std::nullopt, std::nullopt, true}});
        s.steps.push_back(
            {"Try next",
             "More workers make 4P reach ferret's W/S: `pipescope lesson throttling --workers 4`. Or find the K "
             "past which ferret's throttling edges leave the critical path: `pipescope run ferret --param K=16 -o "
             "k16.pftrace` then `pipescope stats k16.pftrace` (\"K >= W/S\"). pipe-fib needs K in the hundreds: "
             "`pipescope run pipe-fib --param n=" + n_fib_s + " --param K=400 -o k400.pftrace`.",
             {"compare", std::nullopt, std::nullopt, std::nullopt, true}});
        return s;
    }
};

}  // namespace

std::unique_ptr<lesson> make_throttling_lesson() { return std::make_unique<throttling_lesson>(); }

}  // namespace pipescope::lessons
