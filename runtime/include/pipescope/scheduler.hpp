// pipescope — the worker pool every program runs on.
//
// A scheduler owns P worker threads, one Chase–Lev work-stealing deque per worker, and the parking
// machinery that lets idle workers sleep instead of burning CPU. Programs (fork-join task groups,
// pipe_while loops) are started from any thread; the calling thread waits while the workers run them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace pipescope {

namespace detail {
class scheduler_impl;
}
namespace trace {
class recorder;
}
class node_cost_source;

// What a scheduler's own steps cost a virtual worker (docs/virtual.md). Stage bodies and the rest
// of a job cost their measured CPU time; these are the steps a real machine spends between jobs.
// `pipescope calibrate` measures them on the machine at hand; `--param NAME_ns=V` and `--cost-file`
// set them to model another (recording/include/pipescope/recording/cost_table.hpp).
struct virtual_costs {
    // Taken off every measured job at its yield point: what reading the clocks there adds to the
    // measurement (about one read per interval). A job is timed by the wall clock while its thread
    // kept its CPU, else by the thread CPU clock (runtime/src/virtual/interval_price.hpp).
    std::uint64_t clock_read_ns = 0;        // CLOCK_THREAD_CPUTIME_ID, a system call
    std::uint64_t wall_clock_read_ns = 0;   // CLOCK_MONOTONIC, a vDSO read where the clock source allows
    // A stage-graph queue's reserve plus its commit, charged per queue operation of a parallel
    // instance priced from a cost source (its recorded slice holds the body only). Measured live,
    // they are in the thread CPU time already; a serial stage's resumption holds its own.
    std::uint64_t queue_op_ns = 0;
    // Threads on virtual cores (bind-to-stage, docs/virtual.md): a core starting to run another
    // thread than the one it ran last (Linux: 1-3 us; `pipescope calibrate` measures it), and the
    // round-robin timeslice of a running thread while others wait for a core. The quantum is a
    // model parameter, not measured: 4 ms, the order of Linux CFS's timeslice with a few runnable
    // threads per core (sched_latency 6-24 ms shared among them, at least 0.75-3 ms each).
    std::uint64_t context_switch_ns = 2000;
    std::uint64_t quantum_ns = 4'000'000;
    std::uint64_t failed_steal_ns = 60;   // looking at a victim's deque and finding it empty
    std::uint64_t steal_ns = 250;         // taking a job from another worker's deque
    std::uint64_t yield_ns = 500;         // an idle worker yielding its core
    std::uint64_t wake_ns = 5000;         // from an unpark until the parked worker runs
    std::uint64_t spin_ns = 2000;         // how long a waiting worker spins before it sleeps: woken
                                          // within it, it runs at once (no wake_ns)
    // What the model charges for cache lines and locks moving between cores (issue 34; docs/virtual.md,
    // "Costs of sharing"). 0 turns each off; `pipescope calibrate` measures them on the machine.
    //  - handoff: a cache line written on one core read on another (a stolen job's frame, a
    //    bind-to-stage queue slot pushed on one virtual core and taken on another). Paid by the reader.
    //  - lock_hold: how long a thread holds a bind-to-stage queue's mutex to push an item (the last
    //    lock_hold_ns of the step that ends with the push). On virtual cores a thread whose quantum
    //    ends inside it is preempted holding the lock, and whoever needs that queue's lock waits
    //    until it has run again; how often that happens follows from lock_hold_ns / quantum_ns.
    std::uint64_t handoff_ns = 0;
    std::uint64_t lock_hold_ns = 0;
};

// virtual_costs by name: how cost files, `--param NAME_ns=V` and the trace metadata spell each
// field ("steal" is steal_ns), and what it is. The one list of them (runtime/src/virtual/virtual_costs.cpp).
struct virtual_cost_entry {
    const char* name;
    std::uint64_t virtual_costs::*field;
    const char* meaning;
};
std::span<const virtual_cost_entry> virtual_cost_entries() noexcept;

struct scheduler_options {
    unsigned workers = 0;   // 0: one worker per hardware thread
    // Virtual workers (issue 19): the workers are still threads running the real scheduler and
    // policy code, but one at a time, in virtual time (runtime/src/virtual/virtual_executor.hpp),
    // so any number of them can be simulated on any machine. `workers` must then be given.
    bool virtual_time = false;
    // Virtual time only: false makes jobs cost nothing but what they declare with
    // virtual_work() (deterministic, for tests and cost tables); true adds their measured CPU time.
    bool measure_jobs = true;
    virtual_costs costs = {};
    // Virtual time only: what each node costs, in place of everything its job measured or declared
    // since the previous yield point (node_costs.hpp). Not owned; must outlive the scheduler's runs.
    const node_cost_source* node_costs = nullptr;
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

    // Virtual time only: when the last program waited for from outside the pool (a pipe_while,
    // graph::run or task group sync called from a thread that is not a worker) began and ended, in
    // virtual ns since the scheduler started. Zeros otherwise.
    struct virtual_span {
        std::uint64_t begin_ns = 0, end_ns = 0;
    };
    virtual_span last_virtual_span() const noexcept;

    detail::scheduler_impl& impl() noexcept { return *impl_; }

private:
    std::unique_ptr<detail::scheduler_impl> impl_;
};

// Index of the worker running the caller, or -1 on a thread that is not a worker. Threads a policy
// runs besides the workers (bind-to-stage's stage threads) get indices from P up, distinct while
// they run, so observers can tell them apart.
int this_worker_index() noexcept;

// On a virtual worker, the calling job spends `ns` of virtual time besides its measured CPU time
// (e.g. I/O the program does not really do); elsewhere nothing happens.
void virtual_work(std::uint64_t ns) noexcept;

}   // namespace pipescope
