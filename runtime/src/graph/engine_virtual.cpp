// A stage-graph worker with nothing to run, on virtual workers (docs/virtual.md, "Stage graphs").
//
// On OS threads a waiting worker spins briefly and then sleeps on the engine's condition variable
// (engine.cpp, wait). A virtual worker must never block outside the virtual executor's token — the
// worker that would wake it could not run — so it parks in the executor instead, and bump() unparks
// it. No lost wake-up is possible: only the token holder runs, and it gives the token up inside
// park(), after it registered as a sleeper.
//
// The wake-up's latency models the real wait: a worker woken within the time it would still have
// been spinning sees the epoch move at once; later, it pays the scheduler's wake latency.
#include "engine.hpp"

#include "../scheduler_impl.hpp"
#include "../virtual/virtual_executor.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

namespace pipescope::graph::detail {

namespace {
// The safety-net timeout of the real wait (engine.cpp), in virtual time.
constexpr std::uint64_t wait_timeout_ns = std::chrono::nanoseconds(std::chrono::milliseconds(50)).count();
}   // namespace

void graph_engine::wait_virtual(std::uint64_t seen) {
    const int me = pipescope::this_worker_index();
    if (me < 0 || static_cast<unsigned>(me) >= virtual_->size())
        throw std::logic_error("graph engine: a virtual wait outside the scheduler's workers");
    const auto worker = static_cast<unsigned>(me);
    // What the loop spent looking for work since its last yield point is its own time: charged
    // here, not to the next node it runs. (The epoch is checked after this yield point.)
    pipescope::detail::virtual_yield_point();
    {
        std::unique_lock lock(wait_mutex_);
        if (!should_sleep(lock, seen)) return;
        virtual_sleepers_.push_back({worker, virtual_->clock(worker)});
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
    }
    trace_event(trace::event_kind::idle_begin);   // (closes the worker's folded run)
    virtual_->park(worker, wait_timeout_ns);
    // Getting the token back cost the thread CPU time that is the executor's, not the next node's
    // (with many sleepers woken per signal it inflated gramps' nodes 4x at P = 12).
    pipescope::detail::virtual_restart_measure();
    {
        std::lock_guard lock(wait_mutex_);
        // Still listed: the timer ended the park, not a bump.
        const auto it = std::find_if(virtual_sleepers_.begin(), virtual_sleepers_.end(),
                                     [&](const virtual_sleeper& s) { return s.worker == worker; });
        if (it != virtual_sleepers_.end()) {
            virtual_sleepers_.erase(it);
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        }
        if (waiting_epoch_ == seen && waiting_ > 0) --waiting_;
    }
    trace_event(trace::event_kind::idle_end);
}

void graph_engine::wake_virtual_sleepers() noexcept {
    const int me = pipescope::this_worker_index();
    const bool from_worker = me >= 0 && static_cast<unsigned>(me) < virtual_->size();
    const std::optional<unsigned> waker = from_worker ? std::optional<unsigned>(static_cast<unsigned>(me)) : std::nullopt;
    const std::uint64_t now = from_worker ? virtual_->clock(*waker) : virtual_->now();
    const virtual_costs& costs = sched_.impl().options().costs;
    std::lock_guard lock(wait_mutex_);
    for (const virtual_sleeper& s : virtual_sleepers_) {
        const bool still_spinning = now < s.parked_at_ns + costs.spin_ns;
        virtual_->unpark(s.worker, waker, still_spinning ? 0 : costs.wake_ns);
    }
    sleepers_.fetch_sub(static_cast<int>(virtual_sleepers_.size()), std::memory_order_seq_cst);
    virtual_sleepers_.clear();
}

}   // namespace pipescope::graph::detail
