// The core's private parts: workers, their deques, the injection queue, parking, and the registry
// through which thieves find pipelines with suspended iterations (lazy enabling, seed 001 §9).
#pragma once

#include <pipescope/detail/chase_lev_deque.hpp>
#include <pipescope/detail/job.hpp>
#include <pipescope/scheduler.hpp>

#include <pipescope/trace/recorder.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pipescope {
class trace_session;
}

namespace pipescope::detail {

class scheduler_impl;
class loop_listener;
struct loop_start;
struct loop_finish;

// A source of work that is not on any deque: a pipeline whose suspended iterations may have
// become ready without anyone pushing them (lazy enabling). Idle workers ask it.
class idle_work_source {
public:
    virtual job* find_enabled_work() noexcept = 0;

protected:
    ~idle_work_source() = default;
};

class frame_cache;
class virtual_executor;

// A thread that runs on virtual time — a virtual worker, or a thread of a thread-bound policy on
// virtual cores (bind-to-stage) — and what it spent since its last yield point
// (virtual/virtual_worker.cpp). A yield point charges it to the actor's slot of `executor`: the
// time the thread used since the last one (scheduler_options::measure_jobs; interval_price.hpp), plus
// what was declared with virtual_work(), plus `extra_ns`; or, at a node's end with a cost source,
// the source's price instead.
struct virtual_actor {
    virtual_executor* executor = nullptr;
    unsigned index = 0;
    const scheduler_options* options = nullptr;
    std::uint64_t mark_ns = 0;           // thread CPU time at the last yield point
    std::uint64_t mark_wall_ns = 0;      // wall time (CLOCK_MONOTONIC) there, read just after mark_ns
    std::uint64_t skipped_wall_ns = 0;   // wall time since then not to be priced (node_begins)
    std::uint64_t ended_wall_ns = 0;     // wall time where a node's priced part ended (node_ends), or 0
    std::uint64_t declared_ns = 0;       // virtual_work() since the last yield point
    // Costs of sharing charged since the last yield point (a queue slot read from another core:
    // virtual_costs::handoff_ns). Unlike declared_ns they are kept when a cost source prices the node.
    std::uint64_t charged_ns = 0;
    // bind-to-stage on virtual cores: a node's end is followed by a push under a queue's lock, lock
    // `next stage` (or `queue_locks`, the retirement's, for the final stage); 0: no locks modelled.
    std::uint64_t queue_locks = 0;

    void mark() noexcept;   // reads both clocks: a measured interval starts here

    void begin() noexcept;   // a job begins: measure from here, nothing declared
    // `next_stage`: the stage a pipeline node's end leads to (its lock, queue_locks), or none.
    void yield(std::uint64_t extra_ns = 0, std::uint64_t next_stage = no_stage);
    void yield_fixed(std::uint64_t cost_ns, std::uint64_t next_stage = no_stage);   // a node priced by the cost source
    static constexpr std::uint64_t no_stage = ~std::uint64_t{0};
    int lock_after(std::uint64_t next_stage) const noexcept;   // the executor's lock id, or -1
    // Back from a park inside a job: what the thread spent getting the token back is the
    // executor's, not the job's.
    void restart_measure() noexcept;
    // A step the model prices by its costs alone (a search for work: the steal attempts it made):
    // advance by `cost_ns`, then measure afresh. Without the fresh mark, the next interval held the
    // wait for the token and the hand-overs' system calls (docs/virtual.md, "Idle workers and hand-overs").
    void advance_priced(std::uint64_t cost_ns);
    // What the thread spent since the mark, priced (0 unless measure_jobs), and a fresh mark: for
    // time that is charged later, with another step (an idle worker's spin round).
    std::uint64_t take_measured() noexcept;
    // The measured step goes on, but what it did since the mark is not to be priced (the way back
    // from a yield point into a node's body): only the wall clock's mark moves, a vDSO read. The
    // thread CPU clock's mark stays before it, so the two still nest (interval_price.hpp).
    void node_begins() noexcept;
    // A pipeline node's body is over (its boundary begins): the wall interval priced ends here; the
    // way down to the yield point is not the node's (the mirror of node_begins).
    void node_ends() noexcept;

private:
    std::uint64_t measured() noexcept;   // the interval since the mark, priced and counted
};
// The calling thread's actor, or nullptr (not on virtual time).
extern thread_local virtual_actor* tls_virtual_actor;

// Per-worker counters: written only by their worker (plain load + store, no locked instruction),
// read by anyone.
struct live_counters {
    std::atomic<std::uint64_t> jobs_run{0}, steal_attempts{0}, steals{0}, parks{0};
    static void bump(std::atomic<std::uint64_t>& c) noexcept {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    worker_counters snapshot() const noexcept {
        return {jobs_run.load(std::memory_order_relaxed), steal_attempts.load(std::memory_order_relaxed),
                steals.load(std::memory_order_relaxed), parks.load(std::memory_order_relaxed)};
    }
    void reset() noexcept {
        jobs_run = 0;
        steal_attempts = 0;
        steals = 0;
        parks = 0;
    }
};

class worker {
public:
    worker(scheduler_impl& s, unsigned index);
    ~worker();

    // Runs jobs until `done()` holds. The main loop of a worker thread and the helping loop of a
    // worker that waits for a task group or a nested pipeline are the same loop.
    void run_until(const std::function<bool()>& done, bool helping);

    void push(job* j);   // own deque, then wake a sleeper
    // PIPER's "assigned vertex": the job this worker runs next. A helping loop (a wait for a task
    // group or a nested pipeline) ends as soon as its wait is over, possibly with a job still
    // assigned; the job it returns to may then assign another one. The first goes on the deque
    // then, instead of being lost (a nested pipeline hung on it when its input was the lost job).
    void set_next(job* j) {
        if (next_) push(next_);
        next_ = j;
    }
    job* pop() { return deque_.pop(); }

    // Any thread. wake_id names this wake-up in the trace (0: not traced); the woken worker
    // records it on its park_end, so the writer can draw the flow waker -> woken.
    void unpark(std::uint64_t wake_id = 0) noexcept;
    // A fresh wake id for an unpark this worker records: (index + 1) << 32 | sequence number.
    std::uint64_t next_wake_id() noexcept { return (std::uint64_t{index_} + 1) << 32 | (++wakes_sent_ & 0xFFFFFFFFu); }
    // A task id this worker records (task_started): (index + 1) << 40 | sequence number.
    std::uint64_t next_task_id() noexcept {
        return (std::uint64_t{index_} + 1) << 40 | (++tasks_begun_ & ((std::uint64_t{1} << 40) - 1));
    }
    unsigned index() const noexcept { return index_; }
    // The kernel's id of the worker's thread (0 until it started): a recording reads what CPU time
    // the thread got (recording/thread_times.hpp).
    int os_thread_id() const noexcept { return os_thread_id_.load(std::memory_order_acquire); }
    scheduler_impl& sched() noexcept { return sched_; }
    frame_cache& frames() noexcept { return *frames_; }
    trace::event_buffer* trace_buffer() const noexcept { return trace_.load(std::memory_order_acquire); }
    void set_trace_buffer(trace::event_buffer* b) noexcept { trace_.store(b, std::memory_order_release); }

    chase_lev_deque<job*> deque_;
    live_counters counters;

    // Virtual time (virtual/virtual_worker.cpp): a yield point charges what the running job cost
    // since the last one and lets the workers whose clocks are behind run first.
    virtual_actor& virtual_state() noexcept { return virtual_; }

private:
    job* find_work();
    job* steal_somewhere();
    // What the last find_work cost, with the spin rounds measured before it (spin_ns_).
    void virtual_search_cost(const worker_counters& before);
    std::uint64_t park(std::chrono::microseconds timeout);   // returns the wake id that ended it
    std::uint64_t next_random() noexcept;

    scheduler_impl& sched_;
    unsigned index_;
    std::atomic<int> os_thread_id_{0};
    job* next_ = nullptr;
    std::uint64_t rng_;
    std::atomic<trace::event_buffer*> trace_{nullptr};
    friend class scheduler_impl;
    std::atomic<std::uint64_t> trace_epoch_seen_{0};   // see scheduler_impl::attach_recorder
    std::uint64_t wakes_sent_ = 0;                     // owner thread only
    std::uint64_t tasks_begun_ = 0;                    // owner thread only, while recording
    alignas(64) std::atomic<std::uint32_t> wake_token_{0};
    std::atomic<std::uint64_t> woken_by_{0};   // wake id of the last unpark, taken by park()
    std::unique_ptr<frame_cache> frames_;
    virtual_actor virtual_;
    std::uint64_t spin_ns_ = 0;   // virtual time: spin rounds measured, not yet charged
};

class scheduler_impl {
public:
    explicit scheduler_impl(const scheduler_options& options);
    ~scheduler_impl();

    unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()); }
    worker& at(unsigned i) noexcept { return *workers_[i]; }

    // The worker of *this* scheduler running the calling thread, or nullptr.
    worker* current() const noexcept;

    void inject(job* j);   // from threads that are not workers
    job* take_injected();
    void notify_work() noexcept;   // some work became available: wake one parked worker
    bool work_visible() const;     // snapshot used before parking

    // Parking: a worker registers as a sleeper, re-checks for work, then sleeps on its token.
    bool enter_sleep(worker& w);   // false: work appeared, do not sleep
    void leave_sleep(worker& w);   // after waking (timeout or token)

    // Registry of idle work sources (pipelines that use lazy enabling).
    bool register_source(idle_work_source* s) noexcept;
    void unregister_source(idle_work_source* s) noexcept;
    job* find_registered_work() noexcept;
    bool has_registered_sources() const noexcept { return registered_.load(std::memory_order_acquire) > 0; }

    bool stopping() const noexcept { return stop_.load(std::memory_order_acquire); }

    // Virtual time (scheduler_options::virtual_time; virtual/virtual_worker.cpp), else nullptr.
    virtual_executor* virtual_time() const noexcept { return virtual_.get(); }
    const scheduler_options& options() const noexcept { return options_; }
    // An outside thread submitting work holds virtual time still until it waits (virtual_executor::hold).
    void virtual_outside_submit(bool starts_program = true);
    void virtual_outside_wait();
    // A program started from outside finished on worker `w` (its completion latch): its virtual span.
    // Virtual time then stands still for `waiter` (which holds it until it waits again or leaves its
    // loop), so what the outside thread does next happens at the program's end, whatever its speed.
    void virtual_outside_finished(worker& w, std::thread::id waiter) noexcept;
    // A program run from outside on threads of its own (bind-to-stage on virtual cores) ended at
    // `end_ns`: its virtual span ends there, and the workers' time goes on from there.
    void virtual_outside_ran(std::uint64_t end_ns);
    std::uint64_t virtual_begin_ns() const noexcept { return virtual_begin_ns_; }
    std::uint64_t virtual_now() const;   // the executor's current time (virtual time only)
    // Virtual time stands still for the calling outside thread while this lives (nothing on a
    // scheduler without virtual time). A hold the thread already had outlives it, unless
    // `let_go_at_end` (the end of the thread's loop: time runs again).
    class virtual_pause {
    public:
        virtual_pause(scheduler_impl& s, bool let_go_at_end);
        ~virtual_pause();
        virtual_pause(const virtual_pause&) = delete;
        virtual_pause& operator=(const virtual_pause&) = delete;

    private:
        scheduler_impl* release_ = nullptr;   // whom to let go of at the end, if anyone
    };
    std::uint64_t virtual_end_ns() const noexcept { return virtual_end_ns_.load(std::memory_order_acquire); }

    void attach_recorder(trace::recorder* r);
    bool tracing() const noexcept { return recorder_.load(std::memory_order_acquire) != nullptr; }
    // The attached recorder (nullptr when not tracing): engines read its detail level when a run starts.
    trace::recorder* recorder() const noexcept { return recorder_.load(std::memory_order_acquire); }
    std::uint64_t trace_epoch() const noexcept { return trace_epoch_.load(std::memory_order_acquire); }

    // Trace buffers for recording threads that are not workers (bind-to-stage's stage threads; the
    // thread sets tls_trace_buffer). Kept per `role` (a number the policy chooses, e.g. stage and
    // thread), so a buffer — a writer, a thread track in the trace — always records the same role
    // and its thread_name never changes. A buffer is taken for the life of one thread and given
    // back; a new writer is added to the recorder only when no free buffer of that role is left.
    // nullptr when no recorder is attached. attach_recorder forgets them.
    trace::event_buffer* acquire_thread_buffer(std::uint64_t role);
    void release_thread_buffer(std::uint64_t role, trace::event_buffer* b);

    // Recording sessions (pipescope/trace_session.hpp, loop_listener.hpp). At most one listener;
    // set and cleared while no loop runs. enter_loop returns whether the loop was started from
    // outside the pool (then leave_loop must be told so); the first such loop of a scheduler whose
    // process has PIPESCOPE_TRACE set and no session of its own starts the environment's session.
    void set_loop_listener(loop_listener* l);
    bool enter_loop(const loop_start& loop);
    void leave_loop(bool from_outside, const loop_finish& end) noexcept;
    // A task spawned from outside the pool (submit). While no run is open it opens a tasks run, which
    // ends when the next loop starts or the session closes. One relaxed load when nobody listens.
    void external_spawn() {
        if (tasks_may_start_run_.load(std::memory_order_relaxed)) start_tasks_run();
    }
    // The session PIPESCOPE_TRACE asked for (recording/environment.cpp); closed before the workers stop.
    void close_environment_session() noexcept;
    // The public face of this scheduler (sessions are made on it).
    scheduler& owner() noexcept { return *owner_; }
    void set_owner(scheduler& s) noexcept { owner_ = &s; }

private:
    struct alignas(64) source_entry {
        std::atomic<idle_work_source*> source{nullptr};
        std::atomic<int> readers{0};
    };

    scheduler_options options_;
    std::unique_ptr<virtual_executor> virtual_;   // before the workers: they use it until they stop
    std::mutex virtual_hold_mutex_;
    std::thread::id virtual_holder_;       // the outside thread holding virtual time, if any
    std::uint64_t virtual_begin_ns_ = 0;   // under virtual_hold_mutex_
    std::atomic<std::uint64_t> virtual_end_ns_{0};
    std::vector<std::unique_ptr<worker>> workers_;
    std::vector<std::thread> threads_;
    std::atomic<bool> stop_{false};

    std::mutex inject_mutex_;
    std::deque<job*> injected_;
    std::atomic<std::size_t> injected_size_{0};

    std::mutex sleep_mutex_;
    std::vector<worker*> sleeping_;
    alignas(64) std::atomic<int> sleepers_{0};

    std::atomic<trace::recorder*> recorder_{nullptr};
    std::atomic<std::uint64_t> trace_epoch_{0};
    std::mutex thread_buffers_mutex_;
    std::multimap<std::uint64_t, trace::event_buffer*> free_thread_buffers_;
    std::array<source_entry, 64> sources_;
    std::atomic<int> registered_{0};

    scheduler* owner_ = nullptr;
    void start_tasks_run();
    void check_environment();   // PIPESCOPE_TRACE, once, at the first loop or external spawn

    std::mutex loops_mutex_;
    int loops_from_outside_ = 0;          // under loops_mutex_
    loop_listener* listener_ = nullptr;   // under loops_mutex_
    bool tasks_run_open_ = false;         // under loops_mutex_: the listener's open run is a tasks run
    // A listener is set and no run is open, or the environment is not checked yet: an external spawn
    // must look (under loops_mutex_). Written under loops_mutex_.
    std::atomic<bool> tasks_may_start_run_{true};
    std::once_flag environment_checked_;
    std::unique_ptr<pipescope::trace_session> environment_session_;
};

// On a virtual worker, a node or task ends here, before its effects are published: the worker's
// clock advances by what the job cost so far (plus `extra_ns`) and the workers behind it run first.
// Elsewhere nothing.
void virtual_yield_point(std::uint64_t extra_ns = 0) noexcept;
// ... where the node that ends is known: a cost source (scheduler_options::node_costs) then says
// what it cost (virtual/virtual_worker.cpp).
void virtual_pipeline_node_end(std::uint64_t iteration, std::uint64_t stage,
                               std::uint64_t next_stage = virtual_actor::no_stage) noexcept;
void virtual_graph_node_end(std::uint64_t stage, std::uint64_t instance, std::uint64_t queue_ops = 0) noexcept;
// A virtual worker back from a park inside a job (a stage graph's wait or barrier): its job's
// measurement restarts (virtual_actor::restart_measure). Elsewhere nothing.
void virtual_restart_measure() noexcept;
// A pipeline node begins on a virtual worker, after its boundary's yield point (or its job's begin):
// the wall clock's mark moves here (virtual_actor::node_begins); its body ends where its boundary
// begins (virtual_actor::node_ends). Elsewhere nothing.
void virtual_node_begins() noexcept;
void virtual_node_ends() noexcept;
// A thread of a thread-bound policy on virtual cores blocks (a bind-to-stage queue is empty or full):
// what it spent so far is charged, then it leaves its core until virtual_actor_unpark wakes it.
void virtual_actor_park();
// Wakes actor `target` of `executor`, from the calling actor of the same executor at its time plus
// the wake-up latency, or from any other thread at the executor's current time.
void virtual_actor_unpark(virtual_executor& executor, unsigned target) noexcept;

// The futex-based primitives behind parking.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::microseconds timeout) noexcept;
void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept;

}   // namespace pipescope::detail
