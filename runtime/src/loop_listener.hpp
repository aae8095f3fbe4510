// How a recording session learns that a program starts and ends on its scheduler (trace_session.hpp):
// pipe_while and graph::run open a loop_scope; the outermost loop started from outside the pool
// tells the scheduler's listener, which makes each such loop a run of its own in the trace.
#pragma once

#include "pipeline/stage_use.hpp"
#include "scheduler_impl.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>

#include <exception>
#include <string>

namespace pipescope::detail {

// The loop about to run: exactly one of `pipeline` and `graph` is set; neither for fork-join tasks
// spawned from outside the pool while no loop runs (a run of its own until the next loop or the end).
struct loop_start {
    const pipeline_options* pipeline = nullptr;
    const graph::program* graph = nullptr;
    const graph::run_options* graph_options = nullptr;
};

// How it ended: "" (completed), "cancelled", or "exception: <what()>".
struct loop_finish {
    std::string outcome;
    stage_use stages;   // a pipe_while's stage kinds as its iterations used them (noted: reported)
};

class loop_listener {
public:
    // On the thread that starts the loop, before any of its work runs; no other loop runs then.
    virtual void loop_started(const loop_start& loop) = 0;
    // On the same thread, after the loop's last work has finished.
    virtual void loop_finished(const loop_finish& end) noexcept = 0;

protected:
    ~loop_listener() = default;
};

// Brackets one pipe_while / graph::run. Only loops started by threads outside the pool are runs
// (a loop nested in a stage belongs to the run of its parent); a second loop started from outside
// while one runs joins the open run, which ends when the last of them ends.
class loop_scope {
public:
    loop_scope(scheduler_impl& s, const loop_start& loop) : sched_(s) { notified_ = s.enter_loop(loop); }
    ~loop_scope() { sched_.leave_loop(notified_, finish_); }
    loop_scope(const loop_scope&) = delete;
    loop_scope& operator=(const loop_scope&) = delete;

    // Runs the loop `run` (returning stats with a `cancelled` flag), telling the listener how it ended.
    template <class Run>
    auto run(Run&& run) {
        try {
            auto stats = run();
            if (stats.cancelled) finish_.outcome = "cancelled";
            return stats;
        } catch (...) {
            failed(std::current_exception());
            throw;
        }
    }

    // Where the loop's engine reports the stages it saw used: only a loop that is a run of its own.
    stage_use* stage_use_sink() noexcept { return notified_ ? &finish_.stages : nullptr; }

private:
    void failed(std::exception_ptr e);

    scheduler_impl& sched_;
    bool notified_ = false;   // this thread counted as a loop from outside the pool
    loop_finish finish_;
};

}   // namespace pipescope::detail
