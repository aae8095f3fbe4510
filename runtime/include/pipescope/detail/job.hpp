// Internal: the unit of work that deques hold, and the hooks public templates need into the core.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

namespace pipescope {
class scheduler;
}

namespace pipescope::detail {

class worker;

// Anything a worker can run: a fork-join task, a pipeline's control frame, a resumable iteration.
// run() never throws; whatever it runs catches its own exceptions and reports them to its owner.
class job {
public:
    virtual void run() noexcept = 0;

protected:
    ~job() = default;
};

// Makes `j` runnable: on the caller's own deque when the caller is a worker of `s`, otherwise on
// the scheduler's injection queue. Wakes a parked worker if one sleeps.
void submit(scheduler& s, job* j);

// A fork-join task's body begins and ends: the tracer records task_begin/task_end (if the calling
// worker records), and a virtual worker ends the task's step in virtual time before it is published.
// task_started returns the id the trace names the task by: (worker + 1) << 40 | the worker's count
// of tasks begun — unique in a run (an address is reused) and the same every time on virtual
// workers with fixed costs. 0 when nothing records.
// The trace also names each task's parent — the task that spawned it (0: spawned outside any
// task) — and when it was spawned, so the analysis can rebuild the spawn tree and its span
// (docs/analysis.md, "Fork-join runs"). task_spawning is read when a task is spawned, off the
// pipeline's node path: the recorded task the calling thread runs now and the clock (both 0 when
// nothing records).
struct task_spawn {
    std::uint64_t parent = 0;   // the spawning task's id (0: none)
    std::uint64_t ticks = 0;    // the trace clock at the spawn (0: not recorded)
};
struct task_ids {
    std::uint64_t id = 0;      // this task (0: not recorded)
    std::uint64_t outer = 0;   // the task the thread ran before this one began (a sync that helps)
};
task_spawn task_spawning() noexcept;
task_ids task_started(const task_spawn& spawn) noexcept;
void task_finished(task_ids ids) noexcept;

// Counts outstanding work and lets one party wait until all of it is done. A worker of the
// scheduler waits by running other work ("helping"); any other thread blocks on a condition variable.
//
// Lifetime is the subtle part: the waiter usually destroys the latch as soon as wait() returns,
// while the last arriving party may still be inside arrive(). So the waiter holds a token of its
// own in the count. Whoever drops the count to zero is the only one to touch the latch after its
// decrement: if that is the waiter, nobody else is inside; if it is a worker, it signals under the
// mutex, and the waiter takes the mutex once before returning.
class completion_latch {
public:
    void add(std::int64_t n = 1) noexcept { count_.fetch_add(n, std::memory_order_relaxed); }
    void arrive() noexcept;             // one piece of work is done
    void wait(scheduler& s) noexcept;   // returns when every added piece has arrived

private:
    std::atomic<std::int64_t> count_{1};   // pending work + the waiter's token
    std::atomic<bool> signaled_{false};
    std::mutex mutex_;
    std::condition_variable cv_;
    worker* helping_worker_ = nullptr;   // guarded by mutex_: the worker to unpark on completion
    std::thread::id outside_waiter_;     // guarded by mutex_: a waiting thread outside the pool
};

// First-exception-wins storage shared by the tasks of a group or the iterations of a pipeline.
class exception_slot {
public:
    void capture(std::exception_ptr e) noexcept {
        std::lock_guard lock(mutex_);
        if (!first_) first_ = std::move(e);
        failed_.store(true, std::memory_order_release);
    }
    bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
    void rethrow_and_reset() {
        std::exception_ptr e;
        {
            std::lock_guard lock(mutex_);
            e = std::move(first_);
            first_ = nullptr;
            failed_.store(false, std::memory_order_relaxed);
        }
        if (e) std::rethrow_exception(e);
    }

private:
    std::mutex mutex_;
    std::exception_ptr first_;
    std::atomic<bool> failed_{false};
};

}   // namespace pipescope::detail
