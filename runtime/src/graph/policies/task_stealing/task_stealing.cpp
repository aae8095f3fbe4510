// The `task-stealing` graph policy: a Cilk-5 style scheduler run on stage graphs (seed 004 §IV-A).
//
// What the paper fixes, and where it is below:
// - "each worker thread has a single LIFO Chase-Lev task queue; i.e., there are no per-stage
//   queues. Steals are done from the tail of the queue": one chase_lev_deque per worker; the owner
//   pops its newest task, a thief takes the oldest task of a random victim.
// - "data queues are unbounded (without per-stage task queues, we cannot enforce backpressure)":
//   queue_bounds::unbounded.
// - "each thread stage is preempted as soon as it commits a single output packet. This emulates
//   Cilk's work-first policy": preempt_after = 1. After a step, the stage's continuation (if it was
//   preempted) is pushed first and the tasks for the packets it produced on top of it, so the worker
//   runs the consumer next — the child — while a thief may take the producer's continuation, which
//   is the oldest task on the deque (work-first, seed 004 §VI).
//
// A task names a stage; running it is one engine step of that stage. Tasks come from data:
// every packet published on queue q makes one task for q's consumer (counted exactly from the
// queue's packets_pushed when the queue signals, on the worker whose commit published it), and an
// end of stream makes one task for a serial consumer so that it sees the end. A task that finds
// nothing to do (its packet was taken by an instance that ran for another task, or a serial stage
// that already consumed everything in one resumption) is dropped.
//
// Liveness: a task is dropped when its serial stage is `busy` on another worker; if that stage then
// blocks on a queue that has already moved, no task exists for it. So a worker whose deque is empty
// and whose steals failed adopts a stage the engine says is runnable (engine.runnable(): a blocked
// serial stage whose queue moved, a parallel stage with input) before it waits for the epoch to
// move. It only waits when no stage can run: the engine's deadlock detection then holds.
#include "../../engine.hpp"
#include "../../../trace_hooks.hpp"

#include <pipescope/detail/chase_lev_deque.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace pipescope::graph::detail {

namespace {

// A task: "step this stage once". One object per stage; the deques hold pointers to them, the same
// pointer any number of times.
struct stage_ref {
    stage_id stage = 0;
};

struct worker_state {
    pipescope::detail::chase_lev_deque<const stage_ref*> deque;
    std::vector<stage_id> produced;   // consumers of packets published during the current step
    std::uint64_t rng = 0;            // xorshift64 for victim choice
    std::size_t adopt_from = 0;       // where the next scan for runnable stages starts
};

class task_stealing_scheduler final : public graph_policy {
public:
    explicit task_stealing_scheduler(std::uint64_t seed) : seed_(seed) {}

    engine_config configure(const program&, unsigned) override {
        engine_config c;
        c.bounds = queue_bounds::unbounded;   // seed 004 §IV-A: no backpressure
        c.preempt_after = 1;                  // seed 004 §IV-A: work-first
        return c;
    }

    void run(graph_engine& e) override {
        const program& g = e.graph();
        const unsigned P = e.workers();
        tasks_.resize(e.stage_count());
        for (stage_id s = 0; s < tasks_.size(); ++s) tasks_[s].stage = s;
        consumer_.resize(e.queue_count());
        for (queue_id q = 0; q < e.queue_count(); ++q) consumer_[q] = g.consumer(q);
        tasked_ = std::make_unique<task_count[]>(e.queue_count());
        workers_.clear();
        for (unsigned w = 0; w < P; ++w) {
            workers_.push_back(std::make_unique<worker_state>());
            workers_.back()->rng = seed_ * 0x9E3779B97F4A7C15ull + w + 1;
        }
        e.on_queue_signal = [this, &e](queue_id q, queue_signal sig) { on_signal(e, q, sig); };
        e.run_workers([&](unsigned w) { loop(e, w); });
    }

private:
    // Runs on the worker whose commit (or close) published data: queue operations happen only inside
    // that worker's step. New packets are counted against what earlier signals already turned into
    // tasks, so every packet makes exactly one task however commits and signals interleave.
    void on_signal(graph_engine& e, queue_id q, queue_signal sig) {
        if (sig != queue_signal::data) return;
        const int w = this_worker_index();
        if (w < 0 || static_cast<std::size_t>(w) >= workers_.size()) return;
        const std::uint64_t pushed = e.queue(q).published_packets_hint();   // lock-free, exact after the commit
        std::uint64_t before = tasked_[q].value.load(std::memory_order_relaxed);
        while (pushed > before && !tasked_[q].value.compare_exchange_weak(before, pushed, std::memory_order_relaxed)) {
        }
        std::uint64_t n = pushed > before ? pushed - before : 0;
        const stage_id c = consumer_[q];
        if (n == 0 && e.graph().stages()[c].kind == stage_kind::serial) n = 1;   // end of stream: let it see it
        workers_[static_cast<std::size_t>(w)]->produced.insert(workers_[static_cast<std::size_t>(w)]->produced.end(), n, c);
    }

    void loop(graph_engine& e, unsigned w) {
        worker_state& me = *workers_[w];
        // The sources start on whichever worker comes first (Cilk's root task on one worker).
        if (!started_.exchange(true, std::memory_order_acq_rel))
            for (stage_id s = 0; s < e.stage_count(); ++s)
                if (e.graph().stages()[s].kind == stage_kind::serial && e.graph().stages()[s].inputs.empty())
                    me.deque.push(&tasks_[s]);
        while (!e.all_finished() && !e.stopping()) {
            const std::uint64_t seen = e.epoch();
            const stage_ref* t = me.deque.pop();   // LIFO: the newest task, the child (seed 004 §IV-A)
            if (!t) t = steal(e, w);
            if (!t) t = adopt(e, me);
            if (!t) {
                e.wait(seen);
                continue;
            }
            execute(e, me, t->stage);
        }
    }

    void execute(graph_engine& e, worker_state& me, stage_id s) {
        me.produced.clear();
        const step_result r = e.step(s);
        // Work-first: the producer's continuation goes below the tasks for what it produced.
        if (r.status == step_status::preempted) me.deque.push(&tasks_[s]);
        for (stage_id c : me.produced) me.deque.push(&tasks_[c]);
        me.produced.clear();
    }

    // Cilk-5: a random victim, its oldest task. A few tries before adopting or waiting.
    const stage_ref* steal(graph_engine& e, unsigned w) {
        const auto P = static_cast<unsigned>(workers_.size());
        if (P < 2) return nullptr;
        worker_state& me = *workers_[w];
        for (unsigned attempt = 0; attempt < 2 * P; ++attempt) {
            me.rng ^= me.rng << 13;
            me.rng ^= me.rng >> 7;
            me.rng ^= me.rng << 17;
            unsigned victim = static_cast<unsigned>(me.rng % (P - 1));
            if (victim >= w) ++victim;
            if (const stage_ref* t = workers_[victim]->deque.steal()) {
                e.trace_event(trace::event_kind::steal, victim, t->stage, 1);   // closes a folded run
                return t;
            }
        }
        return nullptr;
    }

    // A stage that can run but has no task (see the file comment): scanned from a rotating start
    // so that idle workers do not all pick the same one.
    const stage_ref* adopt(graph_engine& e, worker_state& me) {
        const std::size_t n = e.stage_count();
        for (std::size_t k = 0; k < n; ++k) {
            const auto s = static_cast<stage_id>((me.adopt_from + k) % n);
            if (e.runnable(s)) {
                me.adopt_from = (s + 1) % n;
                return &tasks_[s];
            }
        }
        return nullptr;
    }

    std::uint64_t seed_;
    std::vector<stage_ref> tasks_;
    std::vector<stage_id> consumer_;
    // Per queue: packets already turned into tasks. Every data signal of the queue writes its count,
    // so each count has a line of its own (neighbouring queues' signals come from other workers).
    struct alignas(64) task_count {
        std::atomic<std::uint64_t> value{0};
    };
    std::unique_ptr<task_count[]> tasked_;
    std::vector<std::unique_ptr<worker_state>> workers_;
    std::atomic<bool> started_{false};
};

std::unique_ptr<graph_policy> make(policy_params&, std::uint64_t seed) {
    return std::make_unique<task_stealing_scheduler>(seed);
}

}   // namespace

extern const policy_entry task_stealing_policy{
    .name = "task-stealing",
    .summary = "Cilk-5 style (seed 004 §IV-A): one LIFO deque of tasks per worker, steal the oldest from a random victim; "
               "unbounded queues, serial stages preempted after every output packet",
    .parameters = "",
    .make = make,
    .order = 40,
};

}   // namespace pipescope::graph::detail
