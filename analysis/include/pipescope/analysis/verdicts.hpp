// Verdicts: rules that name what limited a run, in plain words, with the evidence and a
// suggestion, each citing a place in the trace (time range, worker, stage, iteration) so the
// viewer can go there. The rules and their thresholds are in docs/analysis.md ("Verdicts").
#pragma once

#include <pipescope/analysis/breakdown.hpp>
#include <pipescope/analysis/dag_bounds.hpp>
#include <pipescope/analysis/queueing.hpp>
#include <pipescope/analysis/stages.hpp>
#include <pipescope/analysis/tasks.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::analysis {

// Thresholds (fractions of the run unless said otherwise).
namespace threshold {
// A serial stage busy this much of the run is the bottleneck: in the queueing model its
// utilisation ρ = λ·Tser is then near 1 (seed 000 eq. 1) and the pipeline cannot go faster than it.
inline constexpr double serial_busy = 0.75;
// Throttling matters when it stretches the span by this factor (seed 001 §11: T∞ = T̂∞ + q(W - KS))
// and the throttled DAG's parallelism is below parallel_slack · P.
inline constexpr double throttle_span_ratio = 1.2;
// A work-stealing scheduler reaches near-linear speedup only when parallelism exceeds P with some
// slack (T_P ≤ T1/P + O(T∞), seed 001 §7); below slack · P the span shows in the running time.
inline constexpr double parallel_slack = 2.0;
// Share of all worker time that makes stalls / idling / sleeping / scheduling worth a verdict: at
// these levels the category costs more than a fifth (a quarter, a seventh) of the machine,
// comparable to the overheads the seeds single out (002 Fig. 4: stall 19-25 % under random work
// stealing; 004 Fig. 5: schedulers under 2 %).
inline constexpr double stall = 0.20;
inline constexpr double idle = 0.25;
inline constexpr double parked = 0.25;
inline constexpr double scheduler = 0.15;
// Workers that worked this much of their time ran at T_P ≈ T1/P: the span (and so the throttle)
// did not limit the run, whatever T1/T∞ says.
inline constexpr double busy_enough = 0.90;
// "Balanced": workers worked at least this much of their time.
inline constexpr double balanced_work = 0.75;
// Workers that got less than this share of a core while runnable (CPU time / (CPU time + time
// descheduled)) ran on a busy machine: their wall-clock node times hold time other threads ran, so
// the run says nothing about more workers. A quiet machine gives > 0.95; a competitor on every
// worker's core 0.5 or less; 0.70 leaves room for a CI box that is itself somewhat loaded.
inline constexpr double busy_machine_core_share = 0.70;
}   // namespace threshold

struct verdict {
    std::string rule;       // stable id: serial_bottleneck, throttle_limited, low_parallelism,
                            // stall_heavy, steal_heavy, parked_heavy, scheduler_heavy, balanced, no_single_limit,
                            // blocked_heavy, input_starved, events_lost (a caution, listed first),
                            // folded_trace (a caution: the span rules are not applied to a folded trace),
                            // busy_machine (a caution: the workers did not get their cores)
                            // fork-join runs: task_parallelism, fine_tasks
    bool limiting = true;   // false for balanced / no_single_limit
    double severity = 0;    // for ordering: the fraction of the run (or machine) it concerns
    std::string text;       // the finding, with its evidence, in plain words
    std::string suggestion;
    place where;   // what it cites
};

// Every rule's verdicts, cautions first (events_lost, folded_trace), then the limits by severity
// (the most severe first), else one balanced / no_single_limit verdict.
std::vector<verdict> compute_verdicts(const run_scope& scope, const run_meta& meta, const run_breakdown& breakdown,
                                      const run_stats& stats, const dag_bounds& dag, const queueing_bounds& queueing);

// A fork-join run (program.kind "tasks"): the cautions, then its own rules — task_parallelism
// (T1/T∞ of the spawn tree below P) and fine_tasks (a task's own time below the scheduling time per
// task) — else no_single_limit. No pipeline rule: a tasks run has no throttle, stages or DAG.
std::vector<verdict> compute_task_verdicts(const run_scope& scope, const run_meta& meta, const run_breakdown& breakdown,
                                           const run_stats& stats, const task_stats& tasks);

// The rules, one function each, so that each can be tested alone on hand-built inputs.

// Everything a rule may read about the run.
struct verdict_inputs {
    const run_scope& scope;
    const run_meta& meta;
    const run_breakdown& breakdown;
    const run_stats& stats;
    const dag_bounds& dag;
    const queueing_bounds& queueing;

    double workers() const;                   // P, at least 1
    double fraction(time_category c) const;   // of all workers' time
    // The span with throttling edges over the span without (1 without a DAG).
    double throttle_span_ratio() const;
    // The span rules need the span: over folded blocks it is only bounded from above, so they stay
    // silent there and the folded_trace caution says why.
    bool span_known() const { return dag.available && !dag.approximate; }
};

// A rule gives the verdicts it finds: none when it does not apply, one per stage or per thread for
// some. `id` is the rule field of its verdicts.
struct verdict_rule {
    std::string_view id;
    std::vector<verdict> (*find)(const verdict_inputs&);
};

// The rules that name a limit, in the order their verdicts are listed before they are sorted by
// severity (a stable sort: equal severities keep this order).
std::span<const verdict_rule> limit_rules();
// Cautions about the trace itself, listed before every limit in this order.
std::span<const verdict_rule> caution_rules();
// The verdict when no limit was found: "balanced" or "no_single_limit".
verdict nothing_limiting(const verdict_inputs& in);
// A limit or caution rule by id, nullptr if there is none.
const verdict_rule* find_verdict_rule(std::string_view id);

}   // namespace pipescope::analysis
