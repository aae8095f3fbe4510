// pipescope — stage graphs: stages joined by bounded packet queues (GRAMPS, seed 004 §II-C; DANBI,
// seed 002 §II), run under a choice of graph schedulers.
//
//     graph::program g;
//     auto rays = g.add_queue<ray>("rays", {.packet_elements = 32, .capacity_packets = 16});
//     auto hits = g.add_queue<hit>("hits", {.packet_elements = 32, .capacity_packets = 16});
//     g.add_serial("camera", {}, {rays}, [&](graph::thread_context& ctx) -> graph::stage_task {
//         for (const ray& r : camera_rays) co_await ctx.push(0, r);      // suspends while "rays" is full
//     });                                                                 // returning closes "rays"
//     g.add_parallel("intersect", rays, {{hits, 1}}, [&](graph::instance_context& ctx) {
//         for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, intersect(ctx.in<ray>(i)));
//     });
//     g.add_serial("sink", {hits}, {}, ...);
//     graph::run(sched, g, {.policy = "gramps"});
//
// Two kinds of stage (seed 004 §II-C "Shaders and Threads"; seed 002 §II parallel and sequential
// kernels):
// - parallel: stateless, instanced by the runtime, one instance per input packet. Before an instance
//   runs, the runtime reserves its input packet (plus `peek` elements after it) and room for its
//   outputs (max_packets per output, declared); the instance pushes elements, which are coalesced into
//   those packets; afterwards the runtime commits everything. An instance therefore never blocks: if an
//   output has no room the stage is simply not runnable (backpressure, seed 004 §III-A). Reserving
//   input and outputs together, in input order, keeps an ordered output in input order (DANBI's ticket
//   issued at the pop and served at the push, seed 002 §II; GRAMPS' pre-reserved packets, §III-A).
// - serial: stateful, one instance, a C++20 coroutine that reserves and commits explicitly and may
//   suspend at any reserve (queue empty or full) or be preempted there after a number of output
//   packets, as the scheduler decides (GRAMPS Thread stages as user-level threads, seed 004 §III-A).
//
// Termination propagates from the sources (seed 002 §III-A5): a serial stage's outputs close when its
// coroutine returns; a parallel stage's when its input reached end of stream and no instance runs.
// A stage on a cycle closes the queue that feeds back explicitly (close_output), once the program
// knows nothing more will go round.
#pragma once

#include <pipescope/graph/queue.hpp>

#include <coroutine>
#include <cstring>
#include <new>
#include <span>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace pipescope {
class scheduler;
}

namespace pipescope::graph {

using queue_id = std::uint32_t;
using stage_id = std::uint32_t;

enum class stage_kind : std::uint8_t { parallel, serial };

// A queue as the program declares it. element_size comes from add_queue<T>.
struct queue_shape {
    std::size_t packet_elements = 32;    // N: elements per packet (GRAMPS uses 32-ray packets)
    std::size_t capacity_packets = 16;   // the bound backpressure enforces
    bool ordered = false;                // consumers see data in the order the producer side reserved it
};
struct queue_spec {
    std::string name;
    std::size_t element_size = 0;
    queue_shape shape;
};

// One output of a parallel stage: at most max_packets packets per instance (room the runtime
// reserves before the instance runs).
struct output_spec {
    queue_id queue = 0;
    std::size_t max_packets = 1;
};

class instance_context;
class thread_context;
class stage_task;

using parallel_body = std::function<void(instance_context&)>;
using serial_body = std::function<stage_task(thread_context&)>;

struct stage_spec {
    std::string name;
    stage_kind kind = stage_kind::parallel;
    std::vector<queue_id> inputs;       // parallel: exactly one; serial: any number (none: a source)
    std::vector<output_spec> outputs;   // serial: max_packets is unused
    std::size_t peek = 0;               // parallel: elements readable after each input packet
    parallel_body parallel;
    serial_body serial;
};

// The graph. Build it, then run it any number of times (each run makes fresh queues); the bodies
// capture the program's own state, which the program resets between runs.
class program {
public:
    queue_id add_queue(queue_spec spec);
    template <class T>
    queue_id add_queue(std::string name, queue_shape shape) {
        static_assert(std::is_trivially_copyable_v<T>, "queue elements are raw bytes: T must be trivially copyable");
        return add_queue(queue_spec{std::move(name), sizeof(T), shape});
    }
    stage_id add_parallel(std::string name, queue_id input, std::vector<output_spec> outputs, parallel_body body,
                          std::size_t peek = 0);
    stage_id add_serial(std::string name, std::vector<queue_id> inputs, std::vector<queue_id> outputs, serial_body body);

    const std::vector<queue_spec>& queues() const noexcept { return queues_; }
    const std::vector<stage_spec>& stages() const noexcept { return stages_; }
    // Resizes queue q (a capacity rule, below, applied to a built program). Throws on an unknown q or 0.
    void set_capacity(queue_id q, std::size_t packets);

    // Derived structure (valid after validate()).
    // Throws std::invalid_argument naming the stage or queue: a queue without exactly one consumer or
    // without a producer, a parallel stage without exactly one input, an unknown queue id, an empty
    // body, a graph without a source (a serial stage with no input), a peek or max_packets that can
    // never fit the queue.
    void validate() const;
    stage_id consumer(queue_id q) const;                 // the stage reading q
    std::vector<stage_id> producers(queue_id q) const;   // stages writing q
    // Stage depth: the longest path from a source over forward edges (a depth-first search from the
    // sources in declaration order; its back edges close cycles and are left out). GRAMPS' priority:
    // higher is further downstream (seed 004 §III-A "Per-Stage Task Queues").
    std::vector<std::uint32_t> depths() const;
    // A backward queue is one whose producer -> consumer edge is such a back edge: it closes a
    // cycle. GRAMPS applies no backpressure on it (seed 004 §III-A).
    bool backward(queue_id q) const;
    // Stages in topological order over forward queues (sources first); ties keep declaration order.
    std::vector<stage_id> topological_order() const;

private:
    std::vector<queue_spec> queues_;
    std::vector<stage_spec> stages_;
};

// ---------------------------------------------------------------------------------------------------
// What a stage's body sees.

namespace detail {
class graph_engine;
struct stage_state;
}   // namespace detail

// A parallel instance: its input packet (and peek elements), and room in its outputs.
class instance_context {
public:
    std::size_t size() const noexcept { return input_->size(); }   // elements in the input packet
    std::size_t peek_size() const noexcept { return input_->peek_size(); }
    // The fast paths below read and write packet memory directly; anything unusual (a wrong element
    // type, an index past the packet, a full or closed output) takes the checked path, which throws
    // with the stage's name.
    template <class T>
    const T& in(std::size_t i) const {
        if (sizeof(T) == in_element_ && i < in_count_) [[likely]]
            return *std::launder(reinterpret_cast<const T*>(in_data_ + i * sizeof(T)));
        return input_->at<T>(i);
    }
    template <class T>
    const T& peek(std::size_t j) const {
        return input_->peek<T>(j);
    }
    const pop_window& input() const noexcept { return *input_; }

    // Appends an element to output k (coalesced into the reserved packets). Throws std::length_error
    // naming the stage when the instance pushes more than its declared max_packets hold.
    template <class T>
    void push(std::size_t k, const T& value) {
        static_assert(std::is_trivially_copyable_v<T>, "queue elements are raw bytes: T must be trivially copyable");
        if (k < outputs_count_) [[likely]] {
            cursor& c = cursors_[k];
            if (c.left != 0 && c.element_size == sizeof(T)) [[likely]] {
                std::memcpy(c.next, &value, sizeof(T));
                c.next += sizeof(T);
                --c.left;
                ++counts_[k];
                return;
            }
        }
        push_run(k, &value, sizeof(T), 1);
    }
    // Appends values[0 .. n) to output k: the same elements, in the same packets, as n calls of
    // push(k, values[i]) — including the throw once the declared max_packets are full, after the
    // elements that fit — but copied a run per packet (one memcpy each) instead of element by element.
    // The engine commits the packets when the instance ends, as it does pushed ones, so the queue and
    // the trace cannot tell the two apart.
    template <class T>
    void push_n(std::size_t k, const T* values, std::size_t n) {
        static_assert(std::is_trivially_copyable_v<T>, "queue elements are raw bytes: T must be trivially copyable");
        if (n > 0) push_run(k, values, sizeof(T), n);
    }
    template <class T>
    void push_n(std::size_t k, std::span<const T> values) {
        push_n(k, values.data(), values.size());
    }
    // This stage will never again push to output k (a stage that closes a cycle, e.g. merge sort's
    // last merge). Takes effect when the instance ends: later instances get no room in output k
    // (pushing there throws), and the queue closes once the instances that reserved room in it
    // before have committed.
    void close_output(std::size_t k);

    stage_id stage() const noexcept { return stage_; }
    std::uint64_t instance() const noexcept { return instance_; }   // per stage, in reservation order
    int worker() const noexcept { return worker_; }

private:
    friend class detail::graph_engine;
    // Where the next element of an output goes, within the current packet.
    struct cursor {
        std::byte* next = nullptr;
        std::size_t left = 0;           // elements left in the current packet
        std::size_t element_size = 0;   // 0 until the first push checked the type
    };
    push_window& window(std::size_t k);
    // The checked path of push and push_n: n elements of `size` bytes each, a run per packet.
    void push_run(std::size_t k, const void* values, std::size_t size, std::size_t n);
    // Points output k's cursor at the packet its next element goes in, after checking that the
    // output exists and is open, that `size` is its element size and that it has room.
    void advance(std::size_t k, std::size_t size);
    [[noreturn]] void overflow(std::size_t k) const;

    const pop_window* input_ = nullptr;
    const std::byte* in_data_ = nullptr;   // the input packet (an instance has exactly one)
    std::size_t in_count_ = 0, in_element_ = 0;
    push_window* outputs_ = nullptr;   // outputs_count_ of each, in the engine's step (no allocation)
    std::size_t outputs_count_ = 0;
    cursor* cursors_ = nullptr;
    std::size_t* counts_ = nullptr;
    bool* close_ = nullptr;
    detail::stage_state* state_ = nullptr;
    stage_id stage_ = 0;
    std::uint64_t instance_ = 0;
    int worker_ = -1;
};

// Why a serial stage gave its worker back.
enum class thread_event : std::uint8_t {
    none,
    empty,       // an input had too little data
    full,        // an output had no room
    waiting,     // an ordered input holds committed data waiting for an earlier ticket (seed 002 §III-A2)
    preempted,   // the scheduler's output budget ran out (seed 004 §III-A, "32 packets")
};

// A serial stage's handle on its queues. Inputs and outputs are numbered as in add_serial.
class thread_context {
    struct pop_awaiter {
        thread_context& ctx;
        std::size_t input, packets, peek;
        pop_window result;
        bool await_ready() { return ctx.try_pop(*this); }
        void await_suspend(std::coroutine_handle<>) noexcept {}
        pop_window await_resume() { return std::move(result); }
    };
    struct reserve_awaiter {
        thread_context& ctx;
        std::size_t output, packets;
        push_window result;
        bool await_ready() { return ctx.try_reserve(*this); }
        void await_suspend(std::coroutine_handle<>) noexcept {}
        push_window await_resume() { return std::move(result); }
    };
    template <class T>
    struct push_awaiter {
        thread_context& ctx;
        std::size_t output;
        T value;
        bool await_ready() { return ctx.try_push(output, &value, sizeof(T)); }
        void await_suspend(std::coroutine_handle<>) noexcept {}
        void await_resume() const noexcept {}
    };

public:
    // co_await: a window of `packets` packets of input k (plus `peek` elements), suspending while the
    // queue has too little. At end of stream the window is empty with status() end_of_stream, or
    // holds what remained. Commit it with commit().
    pop_awaiter pop(std::size_t k, std::size_t packets = 1, std::size_t peek = 0) { return {*this, k, packets, peek, {}}; }
    // co_await: room for `packets` packets in output k, suspending while the queue is full. This is
    // where the scheduler may preempt the stage.
    reserve_awaiter reserve(std::size_t k, std::size_t packets = 1) { return {*this, k, packets, {}}; }
    void commit(pop_window& w);
    void commit(push_window& w, std::size_t elements);
    void commit(push_window& w) { commit(w, w.capacity()); }

    // co_await: appends one element to output k, coalesced into packets (a full packet is committed
    // and a new one reserved, which may suspend). flush() commits a partial packet; returning from
    // the body flushes every output.
    template <class T>
    push_awaiter<T> push(std::size_t k, const T& value) {
        static_assert(std::is_trivially_copyable_v<T>, "queue elements are raw bytes: T must be trivially copyable");
        return {*this, k, value};
    }
    void flush(std::size_t k);
    void close_output(std::size_t k);   // flushes, then closes (a cycle's feedback queue)

    stage_id stage() const noexcept { return stage_; }
    int worker() const noexcept { return worker_; }   // the worker running the stage right now

    // Engine side (not for stage bodies).
    thread_event event() const noexcept { return event_; }
    queue_id event_queue() const noexcept { return event_queue_; }
    std::uint64_t event_version() const noexcept { return event_version_; }

private:
    friend class detail::graph_engine;
    bool try_pop(pop_awaiter& a);
    bool try_reserve(reserve_awaiter& a);
    bool try_push(std::size_t k, const void* value, std::size_t size);
    bool budget_spent() const noexcept { return preempt_after_ != 0 && outputs_since_resume_ >= preempt_after_; }
    void blocked(thread_event e, queue_id q, std::uint64_t version) noexcept;

    detail::graph_engine* engine_ = nullptr;
    detail::stage_state* state_ = nullptr;
    stage_id stage_ = 0;
    int worker_ = -1;
    std::size_t preempt_after_ = 0;   // output packets per resumption, 0: never preempt
    std::size_t outputs_since_resume_ = 0;
    std::vector<push_window> open_;   // per output: the packet push() fills
    std::vector<std::size_t> open_count_;
    const void* pending_value_ = nullptr;   // a push() that suspended: retried before resuming
    std::size_t pending_size_ = 0, pending_output_ = 0;
    thread_event event_ = thread_event::none;
    queue_id event_queue_ = 0;
    std::uint64_t event_version_ = 0;
};

// The coroutine a serial stage's body returns.
class stage_task {
public:
    struct promise_type {
        std::exception_ptr error;
        stage_task get_return_object() noexcept {
            return stage_task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_always final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { error = std::current_exception(); }
    };

    stage_task(stage_task&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
    stage_task(const stage_task&) = delete;
    stage_task& operator=(const stage_task&) = delete;
    ~stage_task() {
        if (h_) h_.destroy();
    }
    std::coroutine_handle<promise_type> handle() const noexcept { return h_; }

private:
    explicit stage_task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    std::coroutine_handle<promise_type> h_;
};

// ---------------------------------------------------------------------------------------------------
// Running a graph.

struct run_options {
    std::string policy = "gramps";   // a name from policies()
    // Named parameters of the policy ("preempt" = 32, "buffers" = packet-stealing, "config" = qes+pss+prs,
    // "C" = 10000, "profile" = path, ...): see policies() and docs/runtime.md. Unknown keys are an error.
    std::vector<std::pair<std::string, std::string>> params = {};
    std::uint64_t seed = 1;        // randomised policies (DANBI's PSS/PRS, steal victims)
    std::stop_token cancel = {};   // as pipeline_options::cancel
};

struct queue_run_stats {
    std::string name;
    std::size_t capacity_packets = 0;
    bool unbounded = false;
    queue_stats stats;   // at the end of the run: peaks, totals
};

// Where a policy that pins stages to workers (static) put a stage: one worker per replica, in turn
// order. A split parallel stage ran instance i on workers[i % workers.size()].
struct stage_placement {
    std::string stage;
    std::vector<unsigned> workers;
};

struct run_stats {
    std::vector<queue_run_stats> queues;
    std::vector<stage_placement> placement;   // per stage under a pinning policy; empty otherwise
    std::size_t peak_packets = 0;             // most packets in use in all queues at once
    std::size_t peak_bytes = 0;
    std::uint64_t instances = 0;     // parallel instances run
    std::uint64_t resumptions = 0;   // serial stage resumptions
    std::uint64_t preemptions = 0;
    std::uint64_t blocked = 0;   // a serial stage suspended on an empty or full queue
    bool cancelled = false;
};

// How a policy's paper sizes the queues when the program's user does not (docs/virtual.md, "Queue
// capacities").
enum class capacity_rule : std::uint8_t {
    // The application's own capacity per queue, in packets, whatever the number of workers: GRAMPS
    // ("the application specifies the capacity of each queue in terms of packets", seed 004 §II-C),
    // and the schedulers compared on its runtime, which keep its queues (§IV).
    application,
    // DANBI's max(P·T, C·T): P the most a producer of the queue reserves at once, C the most its
    // consumer does, T the runtime's threads, "for all threads to work on a queue" (seed 002 §IV-A).
    per_thread,
};

struct policy_info {
    std::string name;
    std::string summary;
    std::string parameters;   // "key=default: meaning" lines
    capacity_rule capacity = capacity_rule::application;
};
std::vector<policy_info> policies();

// The most packets one stage reserves in q at once: a parallel producer its output's max_packets, a
// serial producer one (it fills one packet at a time), a parallel consumer its input packet plus
// the packets its peek spans, a serial consumer one. DANBI's P and C of q, in packets. Needs a valid g.
std::size_t packets_at_once(const program& g, queue_id q);

// q's capacity under `rule` with `threads` threads: the declared one (application), or
// packets_at_once(g, q) · threads (per_thread; threads 0 counts as 1).
std::size_t rule_capacity(const program& g, queue_id q, capacity_rule rule, unsigned threads);

// Runs the graph to completion on `s`'s workers. Rethrows the first exception a stage threw, after
// every stage has stopped. A graph that can make no progress (every stage waits; a queue sized too
// small, a cycle nobody closes) fails with std::runtime_error naming what each stage waits for.
run_stats run(scheduler& s, const program& g, const run_options& options = {});

// Which queues grow instead of applying backpressure when `g` runs under options.policy on
// `workers` workers (0: any; only the policy's parameters matter). Throws like run() on a bad policy.
std::vector<bool> unbounded_queues(const program& g, const run_options& options, unsigned workers = 0);

// The counter tracks a traced run records, in `counter` id order: one "queue <name> packets" per
// queue. Tools pass them as the run's counter names. The footprint is not among them: readers derive
// it as the sum of the fills (docs/tracing.md, "Counters").
std::vector<std::string> counter_names(const program& g);

}   // namespace pipescope::graph
