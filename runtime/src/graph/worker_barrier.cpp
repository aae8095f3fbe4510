// worker_barrier.hpp: std::barrier on OS threads, parking in the virtual executor on virtual workers.
#include "worker_barrier.hpp"

#include "../scheduler_impl.hpp"
#include "../virtual/virtual_executor.hpp"

#include <stdexcept>

namespace pipescope::graph::detail {

worker_barrier::worker_barrier(scheduler& s, std::ptrdiff_t count, std::function<void()> completion)
    : completion_(std::move(completion)),
      real_(count, run_completion{this}),
      sched_(s),
      virtual_(s.impl().virtual_time()),
      count_(count) {}

void worker_barrier::arrive_and_wait() {
    if (virtual_) return arrive_and_wait_virtual();
    real_.arrive_and_wait();
}

void worker_barrier::arrive_and_wait_virtual() {
    const int me = pipescope::this_worker_index();
    if (me < 0 || static_cast<unsigned>(me) >= virtual_->size())
        throw std::logic_error("worker_barrier: a virtual wait outside the scheduler's workers");
    const auto worker = static_cast<unsigned>(me);
    pipescope::detail::virtual_yield_point();   // the loop's time since its last yield point is its own
    std::uint64_t phase;
    {
        std::unique_lock lock(mutex_);
        phase = phase_;
        if (++arrived_ < count_) {
            parked_.push_back(worker);
        } else {   // the last one: the others wait while it runs the completion
            lock.unlock();
            completion_();
            lock.lock();
            arrived_ = 0;
            ++phase_;
            for (unsigned w : parked_) virtual_->unpark(w, worker, sched_.impl().options().costs.wake_ns);
            parked_.clear();
            return;
        }
    }
    // Only the token holder runs, and it gives the token up inside park(): no unpark is missed. A
    // wake-up meant for something else (kept by the executor while the worker ran) parks it again.
    for (;;) {
        virtual_->park(worker, 0);
        pipescope::detail::virtual_restart_measure();   // getting the token back is the executor's time
        std::lock_guard lock(mutex_);
        if (phase_ != phase) return;
    }
}

}   // namespace pipescope::graph::detail
