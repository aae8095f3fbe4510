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
//
// Threads on fewer cores (core_model; docs/virtual.md, "Threads on virtual cores"). A thread-bound
// policy (bind-to-stage) runs T threads on C virtual cores. Then a slot is a thread, and a step's
// cost is its CPU demand: the thread needs a core to spend it. The executor simulates a simple OS
// scheduler: a thread that becomes ready takes an idle core (the one it ran on last, if idle, else
// the lowest-numbered one) or waits at the tail of one global FIFO ready queue; a running thread
// keeps its core until it parks (blocks) or, while others are ready, its quantum runs out — then it
// goes to the tail of the ready queue with the rest of its step (round robin). A core that starts
// running a thread other than the one it ran last first spends `context_switch_ns`. A step's
// effects are still published at its end, which is now when its demand has been served, however
// many slices that took. With T <= C no thread ever waits for a core and no switch is charged (each
// thread finds the core it ran on last idle): the model reduces to the plain one.
//
// Lock-holder preemption (issue 34; docs/virtual.md, "Costs of sharing"). A step may end with a
// push under a lock (advance's `lock`): the last `lock_hold_ns` of its demand are spent holding it.
// A thread preempted at the end of its quantum inside that window keeps the lock while it waits
// for a core; a thread whose step ends (gets the token) needing a lock so held — the one its step
// pushes under, or its home lock (the queue it takes from) — blocks: it leaves its core until the
// holder's step ends, then is ready `lock_wake_ns` later (a futex wake-up). No probability is set:
// how often a quantum ends inside a critical section follows from the hold time and the quantum.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace pipescope::detail {

class virtual_executor {
public:
    // The OS scheduler of threads on fewer cores (see above).
    struct core_model {
        unsigned cores = 1;
        std::uint64_t quantum_ns = 0;   // a running thread's timeslice; 0: never preempted
        std::uint64_t context_switch_ns = 0;
        std::uint64_t lock_hold_ns = 0;   // the critical section ending a step with a lock; 0: none
        std::uint64_t lock_wake_ns = 0;   // from the holder's release until a blocked waiter is ready
    };

    explicit virtual_executor(unsigned workers);
    // `threads` threads on model.cores cores, every clock starting at `start_ns`.
    virtual_executor(unsigned threads, core_model model, std::uint64_t start_ns);
    virtual_executor(const virtual_executor&) = delete;
    virtual_executor& operator=(const virtual_executor&) = delete;

    unsigned size() const noexcept { return static_cast<unsigned>(slots_.size()); }

    // Worker i's thread starts: every worker begins runnable at time 0. Returns holding the token.
    void enter(unsigned i);
    // Worker i stops for good (its scheduler shuts down): gives the token up and never takes it again.
    // Also for a worker whose thread never started (it counts as entered and gone).
    void leave(unsigned i);

    // Worker i spent `cost_ns` of virtual time. Returns holding the token again. core_model: `lock`
    // (>= 0) is the lock the step ends holding (see above), and when it returns the thread holds
    // the token with neither that lock nor its home lock held by a preempted thread.
    void advance(unsigned i, std::uint64_t cost_ns, int lock = -1);
    // core_model: the lock thread i takes whenever it runs (the queue it takes from), or -1.
    void set_home_lock(unsigned i, int lock);
    // core_model: the core thread i holds (while it holds the token: the one it runs on), or -1.
    int core_of(unsigned i) const;

    // Worker i sleeps until unparked, or (timeout_ns > 0) until its clock + timeout_ns. Returns holding
    // the token; true when an unpark ended the sleep. An unpark that came while i was running is kept
    // and ends the next park at once (the real parking's wake token).
    bool park(unsigned i, std::uint64_t timeout_ns);

    // Makes worker `target` runnable, from worker `waker` (which holds the token) at its clock plus
    // `latency_ns`, or from an outside thread (waker empty) at the current time.
    void unpark(unsigned target, std::optional<unsigned> waker, std::uint64_t latency_ns);

    std::uint64_t clock(unsigned i) const;   // worker i's virtual time, ns

    // Measured intervals of the actors on this executor (interval_price.hpp), and how many of them
    // the thread CPU clock priced because the thread lost its CPU meanwhile: a few in a thousand
    // (preemptions) where every interval lies between two yield points, as it should.
    void count_interval(bool by_cpu_clock) noexcept {
        measured_intervals_.fetch_add(1, std::memory_order_relaxed);
        if (by_cpu_clock) cpu_priced_intervals_.fetch_add(1, std::memory_order_relaxed);
    }
    std::uint64_t measured_intervals() const noexcept { return measured_intervals_.load(std::memory_order_relaxed); }
    std::uint64_t cpu_priced_intervals() const noexcept { return cpu_priced_intervals_.load(std::memory_order_relaxed); }
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
    // The holding outside thread moves virtual time on to `t` (a program that ran elsewhere — on
    // the threads of a core_model executor — ended then): the next hand-over happens no earlier.
    void move_now(std::uint64_t t);

    // core_model only: how many times a core switched from one thread to another (each charged
    // context_switch_ns), and how many times a thread was preempted at the end of its quantum.
    std::uint64_t context_switches() const;
    std::uint64_t preemptions() const;
    // core_model only: preemptions of a thread inside a lock's critical section, and the times a
    // thread blocked on a lock so held.
    std::uint64_t lock_holder_preemptions() const;
    std::uint64_t lock_waits() const;

private:
    enum class state { runnable, parked, gone };
    struct slot {
        std::uint64_t clock = 0;
        state st = state::runnable;
        std::uint64_t wake_at = 0;   // parked with a timer: the time it expires (0: no timer)
        bool wake_pending = false;   // unparked while not parked
        bool woken = false;          // the last park ended by an unpark
        bool entered = false;
        std::condition_variable turn;
        // core_model only.
        int core = -1;              // the core it holds, or -1
        int last_core = -1;         // the core it ran on last
        bool ready_timer = false;   // parked, ready at ready_at (a wake-up's latency, a timeout)
        std::uint64_t ready_at = 0;
        bool in_step = false;   // advance() called: `remaining` of its demand still to serve
        std::uint64_t remaining = 0;
        std::uint64_t run_from = 0;    // on a core: it runs (or will, after a switch) from here
        std::uint64_t slice_end = 0;   // on a core: its quantum ends here
        int step_lock = -1;            // the lock its step ends holding, or -1
        std::uint64_t hold = 0;        // the step's last `hold` ns are inside step_lock
        int home_lock = -1;            // set_home_lock
        int waits_for = -1;            // blocked on this lock (parked until its holder runs)
    };
    struct core {
        int thread = -1;   // running (or switching to) it, or -1: idle
        int last = -1;     // the thread it ran last, or -1
    };
    using lock_t = std::unique_lock<std::mutex>;

    // Picks the next holder: the runnable or timed worker with the smallest time, else nobody.
    void hand_over(lock_t& lock);
    void wait_turn(lock_t& lock, unsigned i);
    void all_entered(lock_t& lock);
    // core_model: runs the simulated OS scheduler up to the next thread that gets the token.
    void hand_over_cores();
    void dispatch(unsigned core, unsigned thread, std::uint64_t at);
    void release_core(unsigned thread, std::uint64_t at);
    void make_ready(unsigned thread, std::uint64_t at);
    // At thread j's token event: the lock it needs held by a preempted thread, or -1.
    int lock_blocking(unsigned j) const;
    // Thread j's step ended at `at`: a lock it held preempted is free, its waiters ready.
    void release_locks(unsigned j, std::uint64_t at);

    mutable std::mutex mutex_;
    std::vector<slot> slots_;
    int holder_ = -1;   // the worker holding the token, or -1
    std::uint64_t now_ = 0;
    int entered_ = 0;     // workers that have called enter(): the token moves once all have
    bool held_ = false;   // an outside thread holds the token (hold)
    std::condition_variable quiescent_;
    // core_model only (cores_ empty otherwise).
    core_model model_;
    std::vector<core> cores_;
    std::deque<unsigned> ready_;   // threads waiting for a core, FIFO
    std::uint64_t switches_ = 0, preemptions_ = 0, lock_preemptions_ = 0, lock_waits_ = 0;
    std::vector<int> lock_holder_;   // by lock id: the preempted thread holding it, or -1
    int cpu_ = -1;                   // the real CPU its threads run on (enter() pins them), or -1
    std::atomic<std::uint64_t> measured_intervals_{0}, cpu_priced_intervals_{0};
};

}   // namespace pipescope::detail
