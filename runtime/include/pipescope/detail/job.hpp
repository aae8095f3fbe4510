// Internal: the unit of work that deques hold, and the hooks public templates need into the core.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>

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

// Counts outstanding work and lets one party wait until the count drops to zero. A worker of the
// scheduler waits by running other work ("helping"); any other thread blocks on a condition variable.
// The party that brings the count to zero signals under the mutex, so the waiter may destroy the
// latch as soon as its wait returns.
class completion_latch {
public:
    void add(std::int64_t n = 1) noexcept { count_.fetch_add(n, std::memory_order_relaxed); }
    void arrive() noexcept;                 // one piece of work is done
    void wait(scheduler& s) noexcept;       // returns when the count is zero
    bool done() const noexcept { return count_.load(std::memory_order_acquire) == 0; }

private:
    std::atomic<std::int64_t> count_{0};
    std::mutex mutex_;
    std::condition_variable cv_;
    worker* helping_worker_ = nullptr;  // guarded by mutex_: the worker to unpark on completion
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

}  // namespace pipescope::detail
