// Internal: what every graph scheduler shares — the run's queues and stage states, one step of a
// stage, termination, tracing, waiting, and deadlock detection. A policy (one file each under
// policies/) decides only *which* stage each worker steps next, and how it waits; everything a step
// does to the queues is here, so every policy runs exactly the same program.
//
// A step of a stage:
// - parallel: reserve room in every output (max_packets each), then one input packet (+ peek); run
//   the body; commit the outputs with what it pushed, commit the input. Reservations of one stage
//   are taken under a per-stage lock, so an ordered output gets its tickets in input order (seed
//   002 §II ticket synchronization). If an output has no room the step does nothing: backpressure
//   (seed 004 §III-A).
// - serial: resume the stage's coroutine until it suspends (an empty input, a full output, or the
//   policy's preemption budget; seed 004 §III-A "Thread Stages") or returns. A blocked stage is
//   retried by the engine before its coroutine is resumed, so a policy may step it whenever
//   runnable() says its queue has moved.
#pragma once

#include "../policy_registry.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/detail/spin_mutex.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/trace/events.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pipescope::detail {
class virtual_executor;
}

namespace pipescope::graph::detail {

// What one step did.
enum class step_status : std::uint8_t {
    ran,         // parallel: an instance ran; serial: resumed and suspended on a queue or returned
    preempted,   // serial: ran until its output budget ran out; still runnable
    empty,       // nothing to consume in `queue` (a serial stage is now blocked on it)
    waiting,     // `queue` holds committed data waiting for an earlier ticket (DANBI "waiting")
    full,        // no room in output `queue` (backpressure)
    busy,        // serial: another worker runs it right now; split parallel: another worker's turn
    finished,    // the stage is done (now or before)
    failed,      // the body threw, or the run is stopping
};
const char* step_status_name(step_status s) noexcept;

struct step_result {
    step_status status = step_status::empty;
    queue_id queue = 0;              // for empty / waiting / full
    std::uint32_t packets_out = 0;   // output packets committed by this step
    bool progressed = false;         // an instance ran, or a serial stage was resumed (then status
                                     // says why it stopped: preempted, empty, full, waiting, finished)
};

// How the run's queues are bounded.
enum class queue_bounds : std::uint8_t {
    bounded,              // every queue has its declared capacity
    backward_unbounded,   // backward queues (cycles) grow: GRAMPS (seed 004 §III-A)
    unbounded,            // no backpressure anywhere: task-stealing, breadth-first (seed 004 §IV-A/B)
};

struct engine_config {
    queue_bounds bounds = queue_bounds::bounded;
    std::size_t preempt_after = 0;   // serial stages: output packets per resumption, 0 = never
    // The buffer manager every queue of the run allocates its packets from (seed 004 §III-B;
    // graph::make_buffer_manager). Empty: each queue owns a pool of its capacity (per-queue).
    std::shared_ptr<packet_allocator> packets = {};
};

// Cache lines (issue 17: at P = 2 a step costs mostly the lines that move between the cores). The
// fields every worker reads on every readiness check come first and are written about once per run;
// what a parallel instance writes (the reservation lock, the instance and in-flight counts) and what
// a serial resumption writes (its claim, where it blocked, its context) are on lines of their own,
// so that a worker polling runnable() does not take those lines from the worker stepping the stage.
struct stage_state {
    stage_id id = 0;
    const stage_spec* spec = nullptr;
    std::uint32_t depth = 0;
    std::atomic<bool> finished{false};
    std::atomic<bool> finishing{false};     // claimed by the one who closes the outputs
    std::atomic<bool> input_ended{false};   // a hint that the input ended; try_finish_parallel checks
    std::unique_ptr<std::atomic<bool>[]> output_closed;
    // graph_engine::place: the workers a pinning policy gave the stage (empty: any), one per replica.
    std::vector<unsigned> placed;
    // An instance closed output k (instance_context::close_output: a cycle's feedback queue). Later
    // instances no longer reserve room in it, and the queue is closed once no instance holds a
    // reservation on it any more (closing under another instance's open reservation would break
    // the queue's end of stream). Both per output; reservations counted under reserve_mutex, on
    // the instances' own line below (output_closing is read by every readiness check).
    std::unique_ptr<std::atomic<bool>[]> output_closing;
    std::atomic<int>& output_reservations(std::size_t k) noexcept {
        return k < inline_outputs ? reservations_inline[k] : reservations_beyond[k - inline_outputs];
    }
    // Per output: does the stage count its reservations itself? Only where the queue has other
    // producers too. Where the stage is the only one, the queue's open push reservations are the
    // stage's, so it asks the queue when it closes and an instance writes no counter (issue 17).
    std::vector<bool> counts_reservations;
    // Per output: the capacity this stage still respects in a queue that grows only for the
    // producers that close a cycle (GRAMPS, seed 004 §III-A), 0 if none; see graph_engine().
    std::vector<std::size_t> forward_bound;

    // Tracing (docs/tracing.md, "Detail levels"): how this stage's nodes are recorded now
    // (graph_engine::node_mode), and under trace_detail::automatic what was measured before deciding.
    std::atomic<std::uint8_t> trace_mode{0};
    std::atomic<std::uint64_t> measured_ticks{0}, measured_nodes{0};

    // parallel: written by every instance
    alignas(64) pipescope::detail::spin_mutex reserve_mutex;   // reservations in input order (ordered outputs)
    std::uint64_t next_instance = 0;                           // guarded by reserve_mutex
    // output_reservations(k): with the lock they are counted under; a stage with more outputs than
    // fit here keeps the rest on the heap.
    static constexpr std::size_t inline_outputs = 4;
    std::atomic<int> reservations_inline[inline_outputs] = {};
    std::unique_ptr<std::atomic<int>[]> reservations_beyond;

    // serial: one instance, claimed by the worker that resumes it; written by every resumption
    alignas(64) std::atomic<bool> claimed{false};
    std::atomic<std::uint8_t> blocked_on{0};   // thread_event while suspended
    std::atomic<queue_id> blocked_queue{0};
    std::atomic<std::uint64_t> blocked_version{0};
    std::atomic<std::uint64_t> runs{0};                     // serial: resumptions (parallel stages count next_instance)
    std::atomic<std::uint64_t> preemptions{0}, blocks{0};   // serial: resumptions that ended so
    std::optional<stage_task> task;
    thread_context ctx;
    // The failed operation to retry before resuming (set by thread_context, run by step()).
    bool (*retry)(void* awaiter, thread_context& ctx) = nullptr;
    void* retry_awaiter = nullptr;
};

// How a node (a parallel instance or a serial resumption) is being recorded: node_begin's answer,
// handed to node_end.
struct node_mark {
    std::uint64_t start = 0;   // node_begin's clock read (0: none)
    std::uint8_t mode = 0;     // graph_engine::node_mode
};

class graph_engine {
public:
    graph_engine(scheduler& s, const program& g, engine_config config);
    ~graph_engine();
    graph_engine(const graph_engine&) = delete;
    graph_engine& operator=(const graph_engine&) = delete;

    // Structure.
    const program& graph() const noexcept { return graph_; }
    scheduler& sched() noexcept { return sched_; }
    unsigned workers() const noexcept;
    std::size_t stage_count() const noexcept { return stages_.size(); }
    std::size_t queue_count() const noexcept { return queues_.size(); }
    stage_state& stage(stage_id s) noexcept { return *stages_[s]; }
    packet_queue& queue(queue_id q) noexcept { return *queues_[q]; }
    const engine_config& config() const noexcept { return config_; }

    // A policy that pins stages to workers (static) says where, before run_workers: stage s runs on
    // `workers` only, and with several (a split parallel stage, seed 004 §II-C fission) instance i
    // runs on workers[i % n] only — a fixed round-robin deal of the input packets, enforced under
    // the stage's reservation lock: a step on another worker's turn does nothing (busy). The policy
    // keeps unsplit stages on their worker itself. Reported in stats().placement. Throws
    // std::invalid_argument for a serial stage given several workers or a worker out of range.
    void place(stage_id s, std::vector<unsigned> workers);

    // One step of stage s on the calling worker. Never blocks.
    step_result step(stage_id s);
    // Steps the stages of `order` (one step each, or only up to the first that progressed when
    // `first_only`), those runnable() calls runnable first: a step that finds nothing still locks,
    // reserves and cancels, and most stages are not runnable most of the time (graph-serial on
    // fm-radio failed 96 % of its blind steps). The hints may lag a change that is not signalled
    // yet, so when no hinted step progressed every stage is stepped once for real before the caller
    // may wait — wait() takes every loop waiting for a deadlock. True if any step progressed.
    bool step_ready(const std::vector<stage_id>& order, bool first_only);
    // Would step(s) make progress now? A hint from lock-free reads (the step decides).
    bool runnable(stage_id s) const noexcept;
    // Its input has data (parallel) or its blocked queue moved (serial), ignoring output room.
    bool has_input(stage_id s) const noexcept;
    bool finished(stage_id s) const noexcept { return stages_[s]->finished.load(std::memory_order_acquire); }
    bool all_finished() const noexcept { return finished_stages_.load(std::memory_order_acquire) == stages_.size(); }
    bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }

    // Waiting. epoch() grows whenever a queue signals, a stage finishes or the run stops; a worker
    // with nothing to run reads it, looks once more, then waits for it to move. When every running
    // worker loop waits on the same epoch nothing can ever move it: the graph is deadlocked, and the
    // run fails with a description of what each stage waits for.
    std::uint64_t epoch() const noexcept { return epoch_.load(std::memory_order_acquire); }
    void wait(std::uint64_t seen_epoch);
    void bump() noexcept;

    // Runs `loop(worker)` on `loops` workers (default: all) and returns when every loop returned.
    // A loop returns when all_finished() or stopping(). Exceptions escaping it stop the run.
    void run_workers(const std::function<void(unsigned worker)>& loop, unsigned loops = 0);

    // Policy hooks: data or space appeared in a queue (any thread, outside the queue's lock).
    std::function<void(queue_id, queue_signal)> on_queue_signal;

    // The run failed (a body threw, a deadlock, a policy error): stop, keep the first error.
    void fail(std::exception_ptr e) noexcept;
    void cancel() noexcept;
    void rethrow_if_failed();
    run_stats stats() const;

    // Tracing: what a policy wants in the trace besides the engine's own events.
    void trace_blocked(stage_id s, queue_id q, thread_event why) const noexcept;

    // Tracing by detail level (docs/tracing.md, "Detail levels"; trace::trace_detail). Under
    // `folded` (and `automatic` once a stage is decided folded) the consecutive nodes of one stage a
    // worker runs are recorded as one run: node_begin at the first one's start, node_fold_end (or
    // node_end for a run of one) at the last one's end. Each worker keeps its open run; whatever
    // else it records on its track — an event of interest — closes the run first, so the records stay
    // in time order on the worker's track (counters go to tracks of their own and close nothing).
    enum node_mode : std::uint8_t { untraced = 0, node_level = 1, measuring = 2, folding = 3 };
    // An event of interest on the calling worker's track (a steal, a block, a failed reserve, ...):
    // its folded run is closed first. Policies record their steals through it.
    void trace_event(trace::event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0,
                     std::uint16_t d = 0) const noexcept;
    // A graph_reserve / graph_commit of stage s. Only trace detail `nodes` records the routine ones
    // (granted reserves, commits); `auto` and `folded` record the refused reserves only.
    void trace_queue_op(trace::event_kind k, queue_id q, std::uint64_t amount, bool pop, bool ok,
                        stage_id s) const noexcept {
        if (traced_) record_queue_op(k, q, amount, pop, ok, s);
    }
    // The queue's fill counter, if the operation that filled `c` changed it.
    void queue_changed(queue_id q, const queue_change& c) const noexcept {
        if (traced_ && c.packets != 0) record_fill(q, c);
    }
    // A node of stage st begins / ends on the calling worker.
    node_mark node_begin(stage_state& st, std::uint64_t node) const noexcept {
        return traced_ ? record_node_begin(st, node) : node_mark{};
    }
    void node_end(stage_state& st, std::uint64_t node, node_mark m) const noexcept {
        if (m.mode != untraced) record_node_end(st, node, m);
    }
    // The calling worker's open run, closed (a loop returning, a worker going idle).
    void close_fold_run() const noexcept;

private:
    step_result step_parallel(stage_state& st);
    step_result step_serial(stage_state& st);
    // The parts of the two steps (defined in engine.cpp, inline: one function
    // to the compiler on the per-step path, as before they were split for reading).
    struct instance_step;
    inline std::optional<step_result> reserve_instance(stage_state& st, instance_step& p);
    inline void trace_reserved(const stage_state& st, instance_step& p) const;
    inline bool run_instance(stage_state& st, instance_step& p, std::size_t* counts, bool* close);
    inline void commit_instance(stage_state& st, instance_step& p, const std::size_t* counts, const bool* close,
                                step_result& r);
    inline step_result unclaim(stage_state& st, step_result r) noexcept;
    inline void release_claim(stage_state& st) noexcept;
    inline void note_blocked(stage_state& st, const thread_context& ctx) noexcept;
    inline std::optional<step_result> retry_reserve(stage_state& st);
    inline std::optional<step_result> resume_serial(stage_state& st, step_result& r);
    inline step_result suspend_serial(stage_state& st, step_result r);
    void release_outputs(const stage_state& st, push_window* outs, std::size_t n);
    void finish_stage(stage_state& st);
    void try_finish_parallel(stage_state& st);
    void close_output(stage_state& st, std::size_t k);
    void close_output_when_unreserved(stage_state& st, std::size_t k);   // a parallel instance's close_output
    bool unreserved(stage_state& st, std::size_t k);                     // no instance holds room in output k
    // Output k of st is a forward edge into a queue unbounded for its cycle, and `packets` more would
    // pass the capacity: backpressure for this producer.
    bool over_forward_bound(const stage_state& st, std::size_t k, std::size_t packets) const noexcept;
    std::string describe_deadlock() const;
    // A queue signalled: the epoch moves now, or at the end of the deferred_bumps scope the
    // calling thread is in (a parallel step's commits).
    void signalled() noexcept;
    class deferred_bumps {
    public:
        explicit deferred_bumps(graph_engine& e) noexcept;
        ~deferred_bumps();
        deferred_bumps(const deferred_bumps&) = delete;
        deferred_bumps& operator=(const deferred_bumps&) = delete;

    private:
        graph_engine& engine_;
    };

    // One worker's folded run (see node_mode). Only its worker touches it.
    struct alignas(64) fold_run {
        bool open = false;      // a node_begin is recorded, its end not yet
        bool in_node = false;   // the run's latest node is running now
        bool sealed = false;    // an event of interest came inside that node: it ends the run
        stage_id stage = 0;
        std::uint64_t last = 0;                         // the latest node ended
        std::uint32_t nodes = 0;                        // nodes ended in the run
        std::uint64_t last_end = 0;                     // their end (ticks)
        std::uint64_t current = 0, current_start = 0;   // the node running now (start: 0 if not read)
    };
    void record_queue_op(trace::event_kind k, queue_id q, std::uint64_t amount, bool pop, bool ok,
                         stage_id s) const noexcept;
    void record_fill(queue_id q, const queue_change& c) const noexcept;
    node_mark record_node_begin(stage_state& st, std::uint64_t node) const noexcept;
    void record_node_end(stage_state& st, std::uint64_t node, node_mark m) const noexcept;
    fold_run* my_run() const noexcept;   // nullptr off the run's workers
    void close_run(fold_run& run) const noexcept;
    void measure(stage_state& st, std::uint64_t ticks) const noexcept;
    friend class graph::thread_context;
    friend class graph::instance_context;

    // Read by every step on every worker, written about once per run.
    scheduler& sched_;
    const program& graph_;
    engine_config config_;
    std::vector<std::unique_ptr<packet_queue>> queues_;
    std::vector<std::unique_ptr<stage_state>> stages_;
    std::atomic<std::size_t> finished_stages_{0};
    std::atomic<bool> stopping_{false}, cancelled_{false};
    // Written by every queue operation (footprint) and every signal (epoch), from any worker: each
    // on a line of its own, away from the fields above. (Preemptions and blocks are counted per
    // stage, on the line its resumption writes anyway, and summed by stats().)
    alignas(64) footprint_meter footprint_;
    alignas(64) std::atomic<std::uint64_t> epoch_{0};

    std::mutex wait_mutex_;
    std::condition_variable wait_cv_;
    unsigned waiting_ = 0, loops_ = 0;   // guarded by wait_mutex_
    std::uint64_t waiting_epoch_ = 0;    // the epoch waiting_ loops wait on
    std::atomic<int> sleepers_{0};

    // Virtual workers (docs/virtual.md) park in the virtual executor instead of the condition
    // variable, and bump() unparks them (engine_virtual.cpp).
    struct virtual_sleeper {
        unsigned worker;
        std::uint64_t parked_at_ns;   // its virtual clock when it began waiting
    };
    pipescope::detail::virtual_executor* virtual_ = nullptr;
    std::vector<virtual_sleeper> virtual_sleepers_;   // guarded by wait_mutex_
    void wait_virtual(std::uint64_t seen_epoch);
    void wake_virtual_sleepers() noexcept;
    // Under wait_mutex_ (`lock`), before a loop sleeps waiting for the epoch to move from `seen`:
    // false when it need not (the epoch moved, the run stops or finished) or must not (every running
    // loop waits on `seen`, so nothing can move it: the run fails as deadlocked, `lock` released).
    // True counts the caller as waiting.
    bool should_sleep(std::unique_lock<std::mutex>& lock, std::uint64_t seen);

    std::mutex error_mutex_;
    std::exception_ptr error_;
    bool traced_ = false;
    const trace::recorder* recorder_ = nullptr;   // when traced_: the detail level, the clock estimate
    std::uint64_t fold_below_ns_ = 0;
    // Trace detail `nodes`: every granted reserve and commit too. Elsewhere they are routine: the
    // fill counters say what they did (docs/tracing.md, "Detail levels").
    bool routine_queue_ops_ = false;
    std::unique_ptr<fold_run[]> runs_;   // one per worker (traced_ only)
    unsigned run_slots_ = 0;
};

// ---------------------------------------------------------------------------------------------------
// Policies: one file each, registered in run_graph.cpp.

// `key=value` parameters of a policy; whatever is left untaken is an error naming the key.
class policy_params {
public:
    policy_params(std::string policy, std::vector<std::pair<std::string, std::string>> values);
    std::uint64_t take_uint(const std::string& key, std::uint64_t fallback, std::uint64_t min, std::uint64_t max);
    double take_double(const std::string& key, double fallback, double min, double max);
    std::string take_choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& choices);
    std::optional<std::string> take_string(const std::string& key);
    void reject_unknown() const;
    const std::string& policy() const noexcept { return policy_; }

private:
    std::string policy_;
    std::map<std::string, std::string> values_;
};

class graph_policy {
public:
    virtual ~graph_policy() = default;
    // Called once before the engine exists: how queues are bounded, when serial stages are preempted.
    virtual engine_config configure(const program& g, unsigned workers) = 0;
    // Runs the program to completion (or until the engine stops) on the engine's workers.
    virtual void run(graph_engine& e) = 0;
};

struct policy_entry {
    const char* name;
    const char* summary;
    const char* parameters;   // "key=default: meaning" lines
    std::unique_ptr<graph_policy> (*make)(policy_params& params, std::uint64_t seed);
    int order = 0;                                         // where listings put it: lower first (policy_registry.hpp)
    capacity_rule capacity = capacity_rule::application;   // its paper's default queue sizes
};

// Every folder of graph/policies/ with its entry, `FOLDER_policy` (e.g. `extern const policy_entry
// gramps_policy{...}` in policies/gramps/gramps.cpp): defined in the translation unit CMake generates
// from cmake/policy_registry.cpp.in (cmake/PipescopePolicies.cmake), in folder-name order.
std::span<const pipescope::detail::policy_folder<policy_entry>> graph_policy_folders();

}   // namespace pipescope::graph::detail
