// pipescope — the worker pool every program runs on.
//
// A scheduler owns P worker threads, one Chase–Lev work-stealing deque per worker, and the parking
// machinery that lets idle workers sleep instead of burning CPU. Programs (fork-join task groups,
// pipe_while loops) are started from any thread; the calling thread waits while the workers run them.
#pragma once

#include <cstdint>
#include <memory>

namespace pipescope {

namespace detail {
class scheduler_impl;
}
namespace trace {
class recorder;
}

struct scheduler_options {
    unsigned workers = 0;  // 0: one worker per hardware thread
};

// Counters the core keeps per worker (relaxed, read after a program finishes).
struct worker_counters {
    std::uint64_t jobs_run = 0;
    std::uint64_t steal_attempts = 0;
    std::uint64_t steals = 0;
    std::uint64_t parks = 0;
};

class scheduler {
public:
    explicit scheduler(scheduler_options options = {});
    ~scheduler();
    scheduler(const scheduler&) = delete;
    scheduler& operator=(const scheduler&) = delete;

    unsigned workers() const noexcept;
    worker_counters counters(unsigned worker) const noexcept;
    void reset_counters() noexcept;

    // Records what the workers do into `r` (one buffer per worker) until detached with nullptr.
    // Attach and detach while no program runs.
    void attach_recorder(trace::recorder* r);

    detail::scheduler_impl& impl() noexcept { return *impl_; }

private:
    std::unique_ptr<detail::scheduler_impl> impl_;
};

// Index of the worker running the caller, or -1 on a thread that is not a worker. Threads a policy
// runs besides the workers (bind-to-stage's stage threads) get indices from P up, distinct while
// they run, so observers can tell them apart.
int this_worker_index() noexcept;

}  // namespace pipescope
