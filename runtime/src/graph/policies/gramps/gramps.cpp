// The `gramps` policy: the GRAMPS scheduler (seed 004 §III).
//
// - Tasks (§III-A "Shader Stages", "Thread Stages"). A task of a parallel stage stands for one input
//   packet: every packet published to the stage's input becomes one task, enqueued by the worker
//   whose commit published it. The engine's step pops the oldest ready packet of the input queue, so
//   a task is a claim on "a packet", not on a particular one. A task of a serial stage is its
//   runnable instance: every serial stage starts with one; after a preemption it is re-enqueued;
//   when the stage blocks it has none, until the queue it blocked on moves (engine.runnable()), and
//   then the worker whose commit moved it enqueues it.
// - Per-stage task queues (§III-A "Per-Stage Task Queues"). Each worker has one task queue per
//   stage. It dequeues from the deepest (highest-priority) stage first, which drains the graph and
//   keeps the footprint small; a worker without tasks steals from the shallowest (lowest-priority)
//   stage first, whose tasks make the most new work, trying its neighbours first (w+1, w-1, w+2, ...).
//   Local dequeues are LIFO and steals FIFO, as in the paper's Chase-Lev deques — except on ordered
//   chains, whose task queues are FIFO to limit head-of-line blocking (§III-A "Ordered Data Queues").
// - Backpressure (§III-A "Footprint and Backpressure"): a stage whose output is full is not runnable
//   and its tasks wait; backward queues (cycles) are unbounded (queue_bounds::backward_unbounded).
// - Serial stages are preempted after `preempt` output packets (§III-A: "currently 32").
// - Buffer managers (§III-B, §V-D): `buffers` = packet-stealing (default), per-queue or malloc.
#include "../../engine.hpp"

#include "../../../trace_hooks.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

namespace pipescope::graph::detail {

namespace {

constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

// One stage's task queue on one worker. A task is a number: for a parallel stage, which published
// packet of its input it announces; for a serial stage, how often the instance was enqueued. The
// paper uses lock-free Chase-Lev deques; a spinning lock per queue keeps this simple (it is held for
// a push or a pop, and the owner and a thief rarely meet), and an atomic size lets scans and thieves
// skip empty queues without locking.
class task_queue {
public:
    void push(std::uint64_t t) {
        std::lock_guard lock(mutex_);
        tasks_.push_back(t);
        size_.store(tasks_.size(), std::memory_order_release);
    }
    // The owner's dequeue: newest first (LIFO), or oldest first on an ordered chain (FIFO).
    bool pop(bool fifo, std::uint64_t& t) {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return false;
        if (fifo) {
            t = tasks_.front();
            tasks_.pop_front();
        } else {
            t = tasks_.back();
            tasks_.pop_back();
        }
        size_.store(tasks_.size(), std::memory_order_release);
        return true;
    }
    // A thief takes the oldest task (FIFO steals).
    bool steal(std::uint64_t& t) { return pop(true, t); }
    std::size_t size_hint() const noexcept { return size_.load(std::memory_order_acquire); }

private:
    pipescope::detail::spin_mutex mutex_;
    ring<std::uint64_t> tasks_;   // a ring: pushes and pops allocate nothing once it has grown
    std::atomic<std::size_t> size_{0};
};

// One line per stage: its atomics are written by every signal and task of that stage, from any
// worker, and the plans of neighbouring stages must not share those lines (issue 17).
struct alignas(64) stage_plan {
    stage_id id = 0;
    bool parallel = false;
    bool fifo = false;                           // on an ordered chain: FIFO dequeues
    queue_id input = 0;                          // parallel: its input queue
    std::atomic<std::uint64_t> announced{0};     // parallel: input packets turned into tasks so far
    std::atomic<std::uint64_t> stalled{never};   // parallel: input data_version when a step found no packet
    std::atomic<bool> has_task{false};           // serial: its instance task exists (queued or running)
    std::atomic<std::uint64_t> enqueued{0};      // serial: instance tasks made so far
};

struct alignas(64) worker_queues {
    std::unique_ptr<task_queue[]> by_rank;   // rank 0 = deepest stage = highest priority
};

class gramps_scheduler final : public graph_policy {
public:
    gramps_scheduler(std::size_t preempt, buffer_manager buffers) : preempt_(preempt), buffers_(buffers) {}

    engine_config configure(const program&, unsigned workers) override {
        engine_config c;
        c.bounds = queue_bounds::backward_unbounded;   // §III-A: no backpressure on backward queues
        c.preempt_after = preempt_;
        c.packets = make_buffer_manager(buffers_, workers);
        return c;
    }

    void run(graph_engine& e) override {
        plan(e);
        e.on_queue_signal = [this, &e](queue_id q, queue_signal sig) { on_signal(e, q, sig); };
        // "At initialization, an instance is always runnable" (§III-A): one task per serial stage,
        // spread over the workers.
        unsigned next = 0;
        for (std::size_t r = 0; r < plans_.size(); ++r)
            if (!plans_[r].parallel) wake_serial(e, r, next++ % workers_);
        e.run_workers([this, &e](unsigned w) { loop(e, w); });
        e.on_queue_signal = nullptr;
    }

private:
    // Ranks stages by depth, deepest first (§III-A: downstream stages have higher priority).
    void plan(graph_engine& e) {
        const program& g = e.graph();
        workers_ = e.workers();
        std::vector<stage_id> order(g.stages().size());
        for (stage_id s = 0; s < order.size(); ++s) order[s] = s;
        std::stable_sort(order.begin(), order.end(),
                         [&](stage_id a, stage_id b) { return e.stage(a).depth > e.stage(b).depth; });
        plans_ = std::vector<stage_plan>(order.size());
        rank_.assign(order.size(), 0);
        for (std::size_t r = 0; r < order.size(); ++r) {
            const stage_spec& spec = g.stages()[order[r]];
            stage_plan& p = plans_[r];
            p.id = order[r];
            p.parallel = spec.kind == stage_kind::parallel;
            if (p.parallel) p.input = spec.inputs[0];
            p.fifo = p.parallel && g.queues()[p.input].shape.ordered;
            for (const output_spec& o : spec.outputs) p.fifo = p.fifo || g.queues()[o.queue].shape.ordered;
            rank_[p.id] = r;
        }
        producers_.clear();
        consumer_rank_.clear();
        for (queue_id q = 0; q < g.queues().size(); ++q) {
            producers_.push_back(g.producers(q));
            consumer_rank_.push_back(rank_[g.consumer(q)]);   // every signal needs it: not a scan each time
        }
        workers_queues_ = std::vector<worker_queues>(workers_);
        for (worker_queues& wq : workers_queues_) wq.by_rank = std::make_unique<task_queue[]>(plans_.size());
    }

    // The calling worker's index for the task queues a signal feeds (the producer's worker).
    unsigned me() const noexcept {
        const int w = this_worker_index();
        return w >= 0 && static_cast<unsigned>(w) < workers_ ? static_cast<unsigned>(w) : 0;
    }

    task_queue& tasks(unsigned w, std::size_t r) noexcept { return workers_queues_[w].by_rank[r]; }

    // A queue changed (any thread, after the change). Data: tasks for its consumer. Space: a serial
    // producer blocked on it is runnable again. Parallel producers keep their tasks through
    // backpressure; the engine's epoch wakes the workers that hold them.
    void on_signal(graph_engine& e, queue_id q, queue_signal sig) {
        const unsigned w = me();
        if (sig == queue_signal::data) {
            const std::size_t r = consumer_rank_[q];
            if (plans_[r].parallel) announce(e, r, w);
            else wake_serial(e, r, w);
            return;
        }
        for (stage_id p : producers_[q])
            if (!plans_[rank_[p]].parallel) wake_serial(e, rank_[p], w);
    }

    // One task per packet published to a parallel stage's input since the last call; whoever moves
    // `announced` first makes them, so every packet gets exactly one task.
    bool announce(graph_engine& e, std::size_t r, unsigned w) {
        stage_plan& p = plans_[r];
        const std::uint64_t published = e.queue(p.input).published_packets_hint();
        std::uint64_t seen = p.announced.load(std::memory_order_acquire);
        while (seen < published)
            if (p.announced.compare_exchange_weak(seen, published, std::memory_order_acq_rel)) {
                for (std::uint64_t n = seen; n < published; ++n) tasks(w, r).push(n);
                return true;
            }
        return false;
    }

    // Enqueues a serial stage's instance task if it has none and can run.
    bool wake_serial(graph_engine& e, std::size_t r, unsigned w) {
        stage_plan& p = plans_[r];
        if (p.has_task.load(std::memory_order_seq_cst) || e.finished(p.id) || !e.runnable(p.id)) return false;
        if (p.has_task.exchange(true, std::memory_order_seq_cst)) return false;
        // Only the worker that set has_task gets here, so a load and a store count without a locked add.
        const std::uint64_t n = p.enqueued.load(std::memory_order_relaxed);
        p.enqueued.store(n + 1, std::memory_order_relaxed);
        tasks(w, r).push(n);
        return true;
    }

    // May a task of this stage run now? Backpressure makes a stage with a full output non-runnable.
    bool ready(graph_engine& e, const stage_plan& p) const noexcept {
        if (!e.runnable(p.id)) return false;
        if (!p.parallel) return true;
        const std::uint64_t stalled = p.stalled.load(std::memory_order_acquire);
        return stalled == never || e.queue(p.input).data_version() != stalled;
    }

    // Runs a task of rank r on worker w; a task that cannot run goes back to w's queue (or, for a
    // serial stage that blocked, is dropped until its queue moves). True if the step made progress.
    bool run_task(graph_engine& e, unsigned w, std::size_t r, std::uint64_t task) {
        stage_plan& p = plans_[r];
        const std::uint64_t input_version = p.parallel ? e.queue(p.input).data_version() : 0;
        const step_result res = e.step(p.id);
        switch (res.status) {
            case step_status::finished:
            case step_status::failed:
                if (!p.parallel) p.has_task.store(false, std::memory_order_seq_cst);
                return res.progressed;
            case step_status::preempted:   // §III-A: "after preemption we re-enqueue the task"
            case step_status::busy: tasks(w, r).push(task); return res.progressed;
            case step_status::ran:
                if (p.parallel) {
                    // Usually `never` already: a store would take the line from the other workers
                    // reading it in ready() on every dequeue.
                    if (p.stalled.load(std::memory_order_relaxed) != never)
                        p.stalled.store(never, std::memory_order_release);
                    return true;
                }
                [[fallthrough]];
            case step_status::empty:
            case step_status::waiting:
            case step_status::full:
                if (p.parallel) {
                    // The packet is there but the step could not take it (its peek is not there yet,
                    // or an output filled up meanwhile): keep the task, and wait for the input to move.
                    if (res.status != step_status::full) p.stalled.store(input_version, std::memory_order_release);
                    tasks(w, r).push(task);
                    return false;
                }
                // §III-A: a blocked instance is not runnable, so it has no task; when its queue
                // moves, the worker that moved it makes one (on_signal). If it moved while we held
                // the task, nobody else could: check once more.
                p.has_task.store(false, std::memory_order_seq_cst);
                wake_serial(e, r, w);
                return res.progressed;
        }
        return res.progressed;
    }

    // Regular dequeue: the highest-priority stage with a runnable task first.
    bool run_local(graph_engine& e, unsigned w) {
        for (std::size_t r = 0; r < plans_.size(); ++r) {
            if (tasks(w, r).size_hint() == 0 || !ready(e, plans_[r])) continue;
            std::uint64_t t = 0;
            if (!tasks(w, r).pop(plans_[r].fifo, t)) continue;
            run_task(e, w, r, t);
            return true;
        }
        return false;
    }

    // Stealing: lowest-priority stage first; for each, the neighbours first (w+1, w-1, w+2, ...).
    bool run_stolen(graph_engine& e, unsigned w) {
        for (std::size_t r = plans_.size(); r-- > 0;) {
            if (!ready(e, plans_[r])) continue;
            for (unsigned i = 1; i < workers_; ++i) {
                const unsigned offset = (i % 2 == 1) ? (i + 1) / 2 : workers_ - i / 2;
                const unsigned victim = (w + offset) % workers_;
                std::uint64_t t = 0;
                if (tasks(victim, r).size_hint() == 0 || !tasks(victim, r).steal(t)) continue;
                e.trace_event(trace::event_kind::steal, victim, plans_[r].id, 1);   // closes a folded run
                run_task(e, w, r, t);
                return true;
            }
        }
        return false;
    }

    // Before waiting: tasks that no signal made (a packet whose signal is still on its way, a serial
    // stage whose queue moved while its task was held). Cheap: one look per stage.
    bool catch_up(graph_engine& e, unsigned w) {
        bool made = false;
        for (std::size_t r = 0; r < plans_.size(); ++r) {
            if (e.finished(plans_[r].id)) continue;
            made = (plans_[r].parallel ? announce(e, r, w) : wake_serial(e, r, w)) || made;
        }
        return made;
    }

    void loop(graph_engine& e, unsigned w) {
        if (w >= workers_) return;   // not one of the run's workers (cannot happen: one loop per worker)
        while (!e.all_finished() && !e.stopping()) {
            // Read the epoch first: whatever changes after this moves it, and wait() returns.
            const std::uint64_t seen = e.epoch();
            if (run_local(e, w) || run_stolen(e, w)) continue;
            if (catch_up(e, w)) continue;
            if (e.all_finished() || e.stopping()) break;
            e.wait(seen);
        }
    }

    std::size_t preempt_;
    buffer_manager buffers_;
    unsigned workers_ = 1;
    std::vector<stage_plan> plans_;                  // by rank
    std::vector<std::size_t> rank_;                  // by stage id
    std::vector<std::vector<stage_id>> producers_;   // by queue id
    std::vector<std::size_t> consumer_rank_;         // by queue id
    std::vector<worker_queues> workers_queues_;
};

std::unique_ptr<graph_policy> make(policy_params& params, std::uint64_t) {
    const std::size_t preempt = params.take_uint("preempt", 32, 0, 1u << 20);
    const std::string buffers = params.take_choice("buffers", "packet-stealing", {"packet-stealing", "per-queue", "malloc"});
    const buffer_manager m = buffers == "per-queue" ? buffer_manager::per_queue
                             : buffers == "malloc"  ? buffer_manager::malloc
                                                    : buffer_manager::packet_stealing;
    return std::make_unique<gramps_scheduler>(preempt, m);
}

}   // namespace

extern const policy_entry gramps_policy{
    .name = "gramps",
    .summary =
        "GRAMPS (seed 004 §III): per-worker task queues per stage, deepest stage first, steal the shallowest from "
        "neighbours first; backpressure on full queues (not on cycles); FIFO on ordered chains; packet-stealing buffers",
    .parameters = "preempt=32: output packets a serial stage produces before it is preempted (0: only when it blocks)\n"
                  "buffers=packet-stealing: buffer manager, packet-stealing | per-queue | malloc (seed 004 §III-B)",
    .make = make,
    .order = 20,
};

}   // namespace pipescope::graph::detail
