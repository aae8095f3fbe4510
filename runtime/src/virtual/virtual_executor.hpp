// Virtual time for N workers that are real threads (issue 19: what-if runs on more cores).
//
// The workers of a virtual scheduler are ordinary threads running the ordinary scheduler and policy
// code, but exactly one of them runs at any moment: the one holding the token. A worker gives the
// token up only at a yield point — the end of a node before its effects are published, a steal
// attempt, parking — after its virtual clock advanced by what the step cost. The token then goes to
// the runnable worker with the smallest clock (ties: the lowest index). So
//   - shared state changes in virtual-time order, and a node's effects become visible to the other
//     workers at its end time, as on a machine with N cores where steps take those costs;
//   - no lock is ever contended (nobody holds one across a yield point), so no real blocking happens
//     inside the runtime, and the interleaving depends on the costs alone: fixed costs give the same
//     schedule every time.
// A parked worker is not runnable until another one (or an outside thread) unparks it, or until its
// virtual timer expires. When no worker is runnable and no timer is set, nothing can happen without
// outside help: the executor is quiescent and nobody holds the token.
//
// This class only orders the workers and keeps their clocks; what a step costs is decided by the
// caller (measured CPU time of a stage body, a calibrated cost for a steal attempt).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace pipescope::detail {

class virtual_executor {
public:
    explicit virtual_executor(unsigned workers);
    virtual_executor(const virtual_executor&) = delete;
    virtual_executor& operator=(const virtual_executor&) = delete;

    unsigned size() const noexcept { return static_cast<unsigned>(slots_.size()); }

    // Worker i's thread starts: every worker begins runnable at time 0. Returns holding the token.
    void enter(unsigned i);
    // Worker i stops for good (its scheduler shuts down): gives the token up and never takes it again.
    void leave(unsigned i);

    // Worker i spent `cost_ns` of virtual time. Returns holding the token again.
    void advance(unsigned i, std::uint64_t cost_ns);

    // Worker i sleeps until unparked, or (timeout_ns > 0) until its clock + timeout_ns. Returns holding
    // the token; true when an unpark ended the sleep. An unpark that came while i was running is kept
    // and ends the next park at once (the real parking's wake token).
    bool park(unsigned i, std::uint64_t timeout_ns);

    // Makes worker `target` runnable, from worker `waker` (which holds the token) at its clock plus
    // `latency_ns`, or from an outside thread (waker empty) at the current time.
    void unpark(unsigned target, std::optional<unsigned> waker, std::uint64_t latency_ns);

    std::uint64_t clock(unsigned i) const;   // worker i's virtual time, ns
    // Worker i's clock for its own thread to read while it holds the token (its timestamps).
    const std::uint64_t* clock_address(unsigned i) const noexcept { return &slots_[i].clock; }
    std::uint64_t now() const;   // the time of the last hand-over of the token

    // For outside threads: blocks until no worker is runnable and no timer is set.
    void wait_quiescent();
    // An outside thread starting work: waits until quiescent, then keeps the token from every worker
    // until release(), so all it submits meanwhile arrives at one virtual instant, the returned one.
    std::uint64_t hold();
    void release();
    // The token holder hands the hold to an outside thread (the program it waits for just ended):
    // the workers stop at their next yield point until that thread's release().
    void freeze();

private:
    enum class state { runnable, parked, gone };
    struct slot {
        std::uint64_t clock = 0;
        state st = state::runnable;
        std::uint64_t wake_at = 0;   // parked with a timer: the time it expires (0: no timer)
        bool wake_pending = false;   // unparked while not parked
        bool woken = false;          // the last park ended by an unpark
        std::condition_variable turn;
    };
    using lock_t = std::unique_lock<std::mutex>;

    // Picks the next holder: the runnable or timed worker with the smallest time, else nobody.
    void hand_over(lock_t& lock);
    void wait_turn(lock_t& lock, unsigned i);

    mutable std::mutex mutex_;
    std::vector<slot> slots_;
    int holder_ = -1;   // the worker holding the token, or -1
    std::uint64_t now_ = 0;
    int entered_ = 0;     // workers that have called enter(): the token moves once all have
    bool held_ = false;   // an outside thread holds the token (hold)
    std::condition_variable quiescent_;
};

}   // namespace pipescope::detail
