// Verdicts for a fork-join run (verdicts.hpp, compute_task_verdicts): the span and the task
// grain, instead of the pipeline's rules (a tasks run has no throttle, stages or iterations).
#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/verdicts.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace pipescope::analysis {
namespace {

place whole(const run_scope& scope) {
    place p;
    p.begin = scope.start;
    p.end = scope.end;
    return p;
}

// T1/T∞ below P: seed 001 §7, T_P ≥ T∞, so no scheduler gets a speedup above T1/T∞.
std::vector<verdict> low_task_parallelism(const run_scope& scope, const task_stats& t, double P) {
    if (!t.spawn_tree || !t.span_ns || t.parallelism() >= P) return {};
    verdict v;
    v.rule = "task_parallelism";
    v.severity = 1.0 - t.parallelism() / P;
    v.text = fmt::format("the tasks' parallelism is {:.2f} (work T1 {} over span T\u221e {}): no scheduler can run them "
                         "more than {} faster than one worker, and the run had {:.0f} workers",
                         t.parallelism(), numbers::duration(static_cast<double>(t.work_ns)),
                         numbers::duration(static_cast<double>(t.span_ns)), numbers::ratio(t.parallelism()), P);
    v.suggestion = "shorten the span: spawn more independent tasks, or split the longest chain of serial work";
    v.where = whole(scope);
    return {v};
}

// A task whose own time is below what the scheduler spent per task between tasks: the run spent
// more time scheduling than computing.
std::vector<verdict> fine_tasks(const run_scope& scope, const task_stats& t) {
    const double per_task = t.scheduling_per_task_ns();
    if (!t.tasks || per_task <= 0 || t.own_mean_ns >= per_task) return {};
    verdict v;
    v.rule = "fine_tasks";
    v.severity = per_task / (per_task + t.own_mean_ns);
    v.text = fmt::format("tasks are too fine: a task ran {} of its own on average, while the workers spent {} per task "
                         "between tasks (scheduling and stealing)",
                         numbers::duration(t.own_mean_ns), numbers::duration(per_task));
    v.suggestion = "give each task more work: below a size, recurse serially instead of spawning (a cutoff)";
    v.where = whole(scope);
    return {v};
}

verdict no_task_limit(const run_scope& scope, const task_stats& t, double P) {
    verdict v;
    v.limiting = false;
    v.rule = "no_single_limit";
    v.text = t.spawn_tree && t.span_ns
                 ? fmt::format("no fork-join limit found: parallelism {:.2f} for {:.0f} workers, tasks of {} on average",
                               t.parallelism(), P, numbers::duration(t.own_mean_ns))
                 : fmt::format("no fork-join limit found: {} tasks of {} on average (the trace names no parents: "
                               "span unknown)",
                               numbers::count(t.tasks), numbers::duration(t.own_mean_ns));
    v.suggestion = "look at the breakdown: where the workers' time went";
    v.where = whole(scope);
    return v;
}

}   // namespace

std::vector<verdict> compute_task_verdicts(const run_scope& scope, const run_meta& meta, const run_breakdown& breakdown,
                                           const run_stats& stats, const task_stats& tasks) {
    const dag_bounds no_dag;   // a tasks run has no pipeline DAG: the span rules below use the spawn tree
    const queueing_bounds no_queueing;
    const verdict_inputs in{scope, meta, breakdown, stats, no_dag, no_queueing};
    const double P = std::max(1.0, static_cast<double>(meta.workers ? meta.workers : scope.workers.size()));
    std::vector<verdict> out;
    for (const verdict_rule& rule : caution_rules())
        for (verdict& v : rule.find(in)) out.push_back(std::move(v));
    std::vector<verdict> found = low_task_parallelism(scope, tasks, P);
    for (verdict& v : fine_tasks(scope, tasks)) found.push_back(std::move(v));
    std::stable_sort(found.begin(), found.end(), [](const verdict& a, const verdict& b) { return a.severity > b.severity; });
    if (found.empty()) found.push_back(no_task_limit(scope, tasks, P));
    std::move(found.begin(), found.end(), std::back_inserter(out));
    return out;
}

}   // namespace pipescope::analysis
