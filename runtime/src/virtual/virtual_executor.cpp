// The token that lets one virtual worker run at a time (virtual_executor.hpp).
#include "virtual_executor.hpp"

#include <limits>
#include <stdexcept>

namespace pipescope::detail {

virtual_executor::virtual_executor(unsigned workers) : slots_(workers) {
    if (workers == 0) throw std::invalid_argument("virtual_executor: no workers");
}

void virtual_executor::enter(unsigned i) {
    lock_t lock(mutex_);
    // The token moves only once every worker thread is here, so the schedule never depends on how
    // fast the operating system started the threads.
    if (++entered_ == static_cast<int>(slots_.size())) hand_over(lock);
    wait_turn(lock, i);
}

void virtual_executor::leave(unsigned i) {
    lock_t lock(mutex_);
    slots_[i].st = state::gone;
    if (holder_ == static_cast<int>(i)) hand_over(lock);
}

void virtual_executor::advance(unsigned i, std::uint64_t cost_ns) {
    lock_t lock(mutex_);
    slots_[i].clock += cost_ns;
    hand_over(lock);
    wait_turn(lock, i);
}

bool virtual_executor::park(unsigned i, std::uint64_t timeout_ns) {
    lock_t lock(mutex_);
    slot& s = slots_[i];
    if (s.wake_pending) {   // woken while it was still running: the park returns at once
        s.wake_pending = false;
        return true;
    }
    s.st = state::parked;
    s.wake_at = timeout_ns > 0 ? s.clock + timeout_ns : 0;
    s.woken = false;
    hand_over(lock);
    wait_turn(lock, i);
    return s.woken;
}

void virtual_executor::unpark(unsigned target, std::optional<unsigned> waker, std::uint64_t latency_ns) {
    lock_t lock(mutex_);
    slot& t = slots_[target];
    if (t.st == state::gone) return;
    if (t.st != state::parked) {
        t.wake_pending = true;
        return;
    }
    const std::uint64_t at = waker ? slots_[*waker].clock + latency_ns : now_;
    t.clock = std::max(t.clock, at);
    t.st = state::runnable;
    t.wake_at = 0;
    t.woken = true;
    // An outside thread may wake a quiescent executor: nobody holds the token to pass it on.
    if (holder_ < 0 && !held_ && entered_ == static_cast<int>(slots_.size())) hand_over(lock);
}

std::uint64_t virtual_executor::clock(unsigned i) const {
    std::lock_guard lock(mutex_);
    return slots_[i].clock;
}

std::uint64_t virtual_executor::now() const {
    std::lock_guard lock(mutex_);
    return now_;
}

void virtual_executor::wait_quiescent() {
    lock_t lock(mutex_);
    quiescent_.wait(lock, [&] { return !held_ && holder_ < 0 && entered_ == static_cast<int>(slots_.size()); });
}

std::uint64_t virtual_executor::hold() {
    lock_t lock(mutex_);
    quiescent_.wait(lock, [&] { return !held_ && holder_ < 0 && entered_ == static_cast<int>(slots_.size()); });
    held_ = true;
    return now_;
}

void virtual_executor::freeze() {
    std::lock_guard lock(mutex_);
    held_ = true;
}

void virtual_executor::release() {
    lock_t lock(mutex_);
    held_ = false;
    if (holder_ < 0) hand_over(lock);
}

void virtual_executor::hand_over(lock_t&) {
    if (held_) {   // an outside thread is submitting: the workers wait for its release()
        holder_ = -1;
        return;
    }
    int next = -1;
    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    for (unsigned j = 0; j < slots_.size(); ++j) {
        const slot& s = slots_[j];
        const std::uint64_t at = s.st == state::runnable              ? s.clock
                                 : s.st == state::parked && s.wake_at ? s.wake_at
                                                                      : std::numeric_limits<std::uint64_t>::max();
        if (at < best) best = at, next = static_cast<int>(j);   // strict: ties go to the lowest index
    }
    holder_ = next;
    if (next < 0) {
        quiescent_.notify_all();
        return;
    }
    slot& s = slots_[static_cast<unsigned>(next)];
    if (s.st == state::parked) {   // its timer expired
        s.clock = s.wake_at;
        s.st = state::runnable;
        s.wake_at = 0;
    }
    now_ = std::max(now_, s.clock);
    s.turn.notify_one();
}

void virtual_executor::wait_turn(lock_t& lock, unsigned i) {
    slots_[i].turn.wait(lock, [&] { return holder_ == static_cast<int>(i); });
}

}   // namespace pipescope::detail
