// The token that lets one virtual worker run at a time (virtual_executor.hpp).
#include "virtual_executor.hpp"

#include <sched.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace pipescope::detail {

namespace {
// The CPU every thread of one executor runs on: the one the creating thread runs on now, if the
// process may use it, else the first one it may use; -1 if neither can be found.
int home_cpu() noexcept {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    const int here = sched_getcpu();
    if (here >= 0 && here < CPU_SETSIZE && CPU_ISSET(here, &allowed)) return here;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed)) return cpu;
    return -1;
}

// Only the token holder runs, so the threads of an executor share one real CPU. Spread over several,
// every hand-over is a wake-up on another core (about 20 µs on the 2-core VM this was built on, against
// 1.6 µs for a switch on one core) and every node finds its data in the other core's cache: a node of
// pipe-fib-256 measured 2.7 times its serial cost on 2 virtual workers, and the run took 130 times as
// long as the serial one. On one CPU the nodes cost what they cost in the serial elision, whose
// measured costs the model assumes (docs/virtual.md, "The cost model"). Failing to pin changes only
// the simulation's speed and the measured costs, never the schedule's logic, so an error is ignored.
void pin_to(int cpu) noexcept {
    if (cpu < 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    (void)sched_setaffinity(0, sizeof one, &one);
}
}   // namespace

virtual_executor::virtual_executor(unsigned workers) : slots_(workers), cpu_(home_cpu()) {
    if (workers == 0) throw std::invalid_argument("virtual_executor: no workers");
}

virtual_executor::virtual_executor(unsigned threads, core_model model, std::uint64_t start_ns)
    : slots_(threads), now_(start_ns), model_(model), cores_(model.cores), cpu_(home_cpu()) {
    if (threads == 0) throw std::invalid_argument("virtual_executor: no threads");
    if (model.cores == 0) throw std::invalid_argument("virtual_executor: no cores");
    for (slot& s : slots_) s.clock = start_ns;
}

void virtual_executor::enter(unsigned i) {
    pin_to(cpu_);
    lock_t lock(mutex_);
    slots_[i].entered = true;
    // The token moves only once every worker thread is here, so the schedule never depends on how
    // fast the operating system started the threads.
    if (++entered_ == static_cast<int>(slots_.size())) all_entered(lock);
    wait_turn(lock, i);
}

void virtual_executor::all_entered(lock_t& lock) {
    // Threads on cores: all ready at the start, in index order (the first ones take the cores).
    if (!cores_.empty())
        for (unsigned j = 0; j < slots_.size(); ++j)
            if (slots_[j].st != state::gone) make_ready(j, now_);
    hand_over(lock);
}

void virtual_executor::leave(unsigned i) {
    lock_t lock(mutex_);
    slot& s = slots_[i];
    s.st = state::gone;
    if (!cores_.empty()) release_core(i, s.clock);
    if (!s.entered) {   // its thread never started: the others must not wait for it
        s.entered = true;
        if (++entered_ == static_cast<int>(slots_.size())) all_entered(lock);
        return;
    }
    if (holder_ == static_cast<int>(i)) hand_over(lock);
}

void virtual_executor::advance(unsigned i, std::uint64_t cost_ns, int step_lock) {
    lock_t lock(mutex_);
    slot& s = slots_[i];
    if (cores_.empty()) {
        s.clock += cost_ns;
    } else {   // a demand for its core, served in one or more slices
        s.in_step = true;
        s.remaining = cost_ns;
        s.run_from = s.clock;
        s.step_lock = step_lock;
        s.hold = step_lock >= 0 ? std::min(model_.lock_hold_ns, cost_ns) : 0;
        if (step_lock >= static_cast<int>(lock_holder_.size()))
            lock_holder_.resize(static_cast<std::size_t>(step_lock) + 1, -1);
    }
    hand_over(lock);
    wait_turn(lock, i);
}

void virtual_executor::set_home_lock(unsigned i, int home) {
    std::lock_guard lock(mutex_);
    slots_[i].home_lock = home;
    if (home >= static_cast<int>(lock_holder_.size())) lock_holder_.resize(static_cast<std::size_t>(home) + 1, -1);
}

int virtual_executor::core_of(unsigned i) const {
    std::lock_guard lock(mutex_);
    return slots_[i].core;
}

bool virtual_executor::park(unsigned i, std::uint64_t timeout_ns) {
    lock_t lock(mutex_);
    slot& s = slots_[i];
    if (s.wake_pending) {   // woken while it was still running: the park returns at once
        s.wake_pending = false;
        return true;
    }
    s.st = state::parked;
    s.woken = false;
    if (cores_.empty()) {
        s.wake_at = timeout_ns > 0 ? s.clock + timeout_ns : 0;
    } else {   // a blocked thread leaves its core
        s.ready_timer = timeout_ns > 0;
        s.ready_at = s.clock + timeout_ns;
        release_core(i, s.clock);
    }
    hand_over(lock);
    wait_turn(lock, i);
    return s.woken;
}

void virtual_executor::unpark(unsigned target, std::optional<unsigned> waker, std::uint64_t latency_ns) {
    lock_t lock(mutex_);
    slot& t = slots_[target];
    if (t.st == state::gone) return;
    if (t.st != state::parked || t.waits_for >= 0) {   // running, or blocked on a lock inside its step
        t.wake_pending = true;
        return;
    }
    const std::uint64_t at = std::max(t.clock, waker ? slots_[*waker].clock + latency_ns : now_);
    t.woken = true;
    if (cores_.empty()) {
        t.clock = at;
        t.st = state::runnable;
        t.wake_at = 0;
    } else {   // ready (wanting a core) once the wake-up's latency has passed
        t.ready_at = t.ready_timer ? std::min(t.ready_at, at) : at;
        t.ready_timer = true;
    }
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

void virtual_executor::move_now(std::uint64_t t) {
    std::lock_guard lock(mutex_);
    now_ = std::max(now_, t);
}

std::uint64_t virtual_executor::context_switches() const {
    std::lock_guard lock(mutex_);
    return switches_;
}

std::uint64_t virtual_executor::preemptions() const {
    std::lock_guard lock(mutex_);
    return preemptions_;
}

std::uint64_t virtual_executor::lock_holder_preemptions() const {
    std::lock_guard lock(mutex_);
    return lock_preemptions_;
}

std::uint64_t virtual_executor::lock_waits() const {
    std::lock_guard lock(mutex_);
    return lock_waits_;
}

void virtual_executor::release() {
    lock_t lock(mutex_);
    held_ = false;
    if (holder_ < 0) hand_over(lock);
}

void virtual_executor::hand_over(lock_t&) {
    if (!cores_.empty()) return hand_over_cores();
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

// ---------------------------------------------------------------------------------------------
// Threads on cores (core_model): a discrete-event simulation of a round-robin OS scheduler. The
// events, in time order (ties: the lowest thread index): a thread on a core reaches the end of its
// step (it gets the token: its effects are published now) or the start of its first step after it
// was dispatched (the token too); its quantum ends while its step goes on (preempted if another
// thread is ready, else a new quantum); a parked thread's wake-up latency or timeout passes (ready).

void virtual_executor::hand_over_cores() {
    constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
    enum class event { token, slice, ready };
    for (;;) {
        int next = -1;
        std::uint64_t best = none;
        event what = event::token;
        for (unsigned j = 0; j < slots_.size(); ++j) {
            const slot& s = slots_[j];
            std::uint64_t at;
            event e;
            if (s.st == state::runnable && s.core >= 0) {
                const std::uint64_t end = s.in_step ? s.run_from + s.remaining : s.run_from;
                e = end <= s.slice_end ? event::token : event::slice;
                at = std::min(end, s.slice_end);
            } else if (s.st == state::parked && s.ready_timer) {
                e = event::ready;
                at = s.ready_at;
            } else {
                continue;
            }
            if (at < best) best = at, next = static_cast<int>(j), what = e;   // strict: ties to the lowest index
        }
        if (next < 0) {
            holder_ = -1;
            quiescent_.notify_all();
            return;
        }
        const auto j = static_cast<unsigned>(next);
        slot& s = slots_[j];
        switch (what) {
            case event::token:
                s.clock = best;
                s.in_step = false;
                s.remaining = 0;
                release_locks(j, best);
                if (const int held = lock_blocking(j); held >= 0) {   // its push or pop must wait for the lock
                    ++lock_waits_;
                    s.waits_for = held;
                    s.st = state::parked;
                    s.ready_timer = false;
                    release_core(j, best);
                    break;
                }
                s.step_lock = -1;   // its push is made now, with the token
                holder_ = next;
                now_ = std::max(now_, best);
                s.turn.notify_one();
                return;
            case event::slice:
                s.remaining -= s.slice_end - s.run_from;
                s.run_from = s.slice_end;
                if (ready_.empty()) {   // nobody waits: it runs on for another quantum
                    s.slice_end += model_.quantum_ns;
                } else {   // round robin: to the tail of the ready queue, the head gets the core
                    ++preemptions_;
                    // Inside the critical section that ends its step: it keeps the lock while it waits.
                    if (s.step_lock >= 0 && s.remaining > 0 && s.remaining < s.hold) {
                        ++lock_preemptions_;
                        lock_holder_[static_cast<std::size_t>(s.step_lock)] = static_cast<int>(j);
                    }
                    const auto c = static_cast<unsigned>(s.core);
                    s.core = -1;
                    cores_[c].thread = -1;
                    ready_.push_back(j);
                    const unsigned head = ready_.front();
                    ready_.pop_front();
                    dispatch(c, head, best);
                }
                break;
            case event::ready:
                s.ready_timer = false;
                s.st = state::runnable;
                make_ready(j, best);
                break;
        }
    }
}

int virtual_executor::lock_blocking(unsigned j) const {
    const slot& s = slots_[j];
    for (const int l : {s.step_lock, s.home_lock}) {
        if (l < 0) continue;
        const int holder = lock_holder_[static_cast<std::size_t>(l)];
        if (holder >= 0 && holder != static_cast<int>(j)) return l;
    }
    return -1;
}

void virtual_executor::release_locks(unsigned j, std::uint64_t at) {
    for (std::size_t l = 0; l < lock_holder_.size(); ++l) {
        if (lock_holder_[l] != static_cast<int>(j)) continue;
        lock_holder_[l] = -1;
        for (slot& w : slots_)
            if (w.waits_for == static_cast<int>(l)) {   // ready once the wake-up has passed
                w.waits_for = -1;
                w.ready_timer = true;
                w.ready_at = at + model_.lock_wake_ns;
            }
    }
}

void virtual_executor::make_ready(unsigned thread, std::uint64_t at) {
    const slot& s = slots_[thread];
    int c = s.last_core >= 0 && cores_[static_cast<unsigned>(s.last_core)].thread < 0 ? s.last_core : -1;
    for (unsigned k = 0; c < 0 && k < cores_.size(); ++k)
        if (cores_[k].thread < 0) c = static_cast<int>(k);
    if (c < 0) ready_.push_back(thread);
    else dispatch(static_cast<unsigned>(c), thread, at);
}

void virtual_executor::dispatch(unsigned core_index, unsigned thread, std::uint64_t at) {
    core& c = cores_[core_index];
    slot& s = slots_[thread];
    std::uint64_t switch_ns = 0;
    if (c.last >= 0 && c.last != static_cast<int>(thread)) {
        switch_ns = model_.context_switch_ns;
        ++switches_;
    }
    c.thread = static_cast<int>(thread);
    c.last = static_cast<int>(thread);
    s.core = static_cast<int>(core_index);
    s.last_core = s.core;
    s.run_from = at + switch_ns;
    s.slice_end = model_.quantum_ns > 0 ? s.run_from + model_.quantum_ns : std::numeric_limits<std::uint64_t>::max();
}

void virtual_executor::release_core(unsigned thread, std::uint64_t at) {
    slot& s = slots_[thread];
    if (s.core < 0) return;
    const auto c = static_cast<unsigned>(s.core);
    s.core = -1;
    cores_[c].thread = -1;
    if (ready_.empty()) return;
    const unsigned head = ready_.front();
    ready_.pop_front();
    dispatch(c, head, at);
}

void virtual_executor::wait_turn(lock_t& lock, unsigned i) {
    slots_[i].turn.wait(lock, [&] { return holder_ == static_cast<int>(i); });
}

}   // namespace pipescope::detail
