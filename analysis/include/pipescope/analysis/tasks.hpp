// Fork-join runs: the tasks of a run, their work, the span of their spawn tree and its
// parallelism, as Cilkscale reports them (docs/analysis.md, "Fork-join runs").
//
//   const task_stats t = compute_task_stats(scope, breakdown, stats);
//   t.parallelism()   // T1 / T∞: no scheduler runs the tasks more than this many times faster
#pragma once

#include <pipescope/analysis/breakdown.hpp>
#include <pipescope/analysis/scope.hpp>
#include <pipescope/analysis/stages.hpp>

#include <cstdint>

namespace pipescope::analysis {

struct task_stats {
    std::uint64_t tasks = 0;   // task slices on the run's worker tracks
    std::uint64_t roots = 0;   // tasks spawned outside any task (or whose parent is not in the trace)
    // A task's own time (its strands): its slice less the tasks, idling and parking nested in it
    // (a sync that waits runs other tasks or idles).
    double own_mean_ns = 0;
    std::uint64_t own_p50_ns = 0, own_p95_ns = 0, own_max_ns = 0;
    std::uint64_t work_ns = 0;   // T1: the sum of every task's own time
    // T∞ of the spawn tree; 0 when the trace names no parents (a trace of an older version).
    std::uint64_t span_ns = 0;
    bool spawn_tree = false;    // the task slices carry `parent`: span_ns is known
    std::uint64_t depth = 0;    // the deepest chain of spawns (a root task: 1)
    std::uint64_t steals = 0;   // successful steals during the run
    // Worker time between slices (the breakdown's scheduler + stealing): what running the tasks
    // cost the scheduler, and that per task.
    std::uint64_t scheduling_ns = 0;
    double scheduling_per_task_ns() const { return tasks ? static_cast<double>(scheduling_ns) / tasks : 0.0; }
    double parallelism() const { return span_ns ? static_cast<double>(work_ns) / static_cast<double>(span_ns) : 0.0; }
};

// The tasks of the run (all zero when it has none).
task_stats compute_task_stats(const run_scope& scope, const run_breakdown& breakdown, const run_stats& stats);

}   // namespace pipescope::analysis
