// The `danbi` graph policy: DANBI's dynamic load-balancing scheduler (seed 002 §III-A).
//
// Every worker is one of DANBI's "native threads" and runs its own scheduler loop with no
// predetermined schedule: it keeps a current kernel rk, steps it, and decides the next kernel at the
// paper's two decision points — (1) a queue event (the step found its queue empty, full, or holding
// data behind an earlier ticket): Queue Event-Based Scheduling, Algorithm 1 (§III-A2); (2) the end of
// a parallel kernel's thread (a step that ran an instance): Probabilistic Speculative Scheduling
// (§III-A3), else Probabilistic Random Scheduling (§III-A4), else keep rk.
//
// Threads and ready queues in our engine. DANBI runs kernels as user-level threads and parks a
// blocked thread in a per-kernel FIFO ready queue. Here:
// - a parallel kernel's thread is one step of the stage (an instance). Instances reserve all their
//   outputs and their input before running and never block afterwards, so a parallel thread is
//   either done or never did a successful queue operation — and Algorithm 1 line 7 deletes exactly
//   those. A parallel kernel's ready queue is therefore always empty, and selecting it always
//   "spawns" (line 15): we step it.
// - a sequential kernel's one thread is the serial stage's coroutine. It sits in its ready queue
//   whenever no worker runs it; engine.step() resumes it (popping it), and answers `busy` when
//   another worker runs it — "a running thread for the sequential kernel already exists", on which
//   Algorithm 1 re-selects a random kernel (lines 19-21). The engine holds the concurrency constraint
//   (one claim per serial stage), so the decisions are the paper's without a separate queue.
//
// config (Fig. 3 and 4 of the paper): `ws` random work stealing, `qes`, `qes+pss`, `qes+pss+prs`.
// Queues are bounded (DANBI programs size their queues, §III-A5), nothing is preempted: a
// sequential kernel runs until a queue operation blocks. See docs/runtime.md "Graph policy: danbi".
#include "../../engine.hpp"
#include "transition.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace pipescope::graph::detail {

namespace {

enum class danbi_config : std::uint8_t { ws, qes, qes_pss, qes_pss_prs };

struct danbi_options {
    danbi_config config = danbi_config::qes_pss_prs;
    std::uint64_t c = 10000;   // PRS: P^r = min(T / C, 1)
    std::uint64_t seed = 1;

    bool qes() const noexcept { return config != danbi_config::ws; }
    bool pss() const noexcept { return config == danbi_config::qes_pss || config == danbi_config::qes_pss_prs; }
    bool prs() const noexcept { return config == danbi_config::qes_pss_prs; }
};

// Not in the paper, which lets a worker retry for as long as it takes: a worker whose decisions find
// nothing to run this many times in a row (or that stalls this long on a ticket) looks at every stage
// once, and if none can run, waits for a queue to move. Without it a worker could spin forever (one
// worker, a ticket held by a serial stage blocked elsewhere), and the engine could never tell a
// deadlocked graph from a busy one.
constexpr std::size_t min_idle_steps = 16;
constexpr std::uint64_t stall_limit = 256;   // consecutive waiting events (the paper's "stall")

// What the scheduler needs of the program, computed once per run and shared by the workers.
struct kernel_graph {
    std::vector<std::vector<stage_id>> producers;   // per queue
    std::vector<stage_id> consumer;                 // per queue
    std::vector<stage_id> starting;                 // serial stages without inputs: DANBI's starting kernels
    std::vector<stage_id> non_starting_parallel;
    std::vector<stage_id> non_starting;
    std::atomic<std::size_t> next_starting{0};   // §III-A1: starting kernels not chosen yet
    std::size_t idle_steps = min_idle_steps;

    explicit kernel_graph(const program& g) {
        for (queue_id q = 0; q < g.queues().size(); ++q) {
            producers.push_back(g.producers(q));
            consumer.push_back(g.consumer(q));
        }
        for (stage_id s = 0; s < g.stages().size(); ++s) {
            const stage_spec& spec = g.stages()[s];
            if (spec.kind == stage_kind::serial && spec.inputs.empty()) {
                starting.push_back(s);
                continue;
            }
            non_starting.push_back(s);
            if (spec.kind == stage_kind::parallel) non_starting_parallel.push_back(s);
        }
        idle_steps = std::max(min_idle_steps, 2 * g.stages().size());
    }
};

std::uint64_t splitmix64(std::uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// One worker's scheduler (a DANBI native thread).
class native_thread {
public:
    native_thread(graph_engine& e, kernel_graph& g, const danbi_options& o, unsigned worker)
        : e_(e), g_(g), o_(o), rng_(splitmix64(o.seed ^ splitmix64(worker + 1))) {}

    void run() {
        switch_to(initial_kernel());
        while (!e_.all_finished() && !e_.stopping()) {
            if (idle_ >= g_.idle_steps || waits_ >= stall_limit) scan_or_wait();
            else decide(e_.step(rk_));
        }
    }

private:
    bool parallel(stage_id s) const noexcept { return e_.graph().stages()[s].kind == stage_kind::parallel; }

    // §III-A1: an unchosen starting kernel, else a random non-starting parallel kernel.
    stage_id initial_kernel() {
        const std::size_t i = g_.next_starting.fetch_add(1, std::memory_order_relaxed);
        if (i < g_.starting.size()) return g_.starting[i];
        if (!g_.non_starting_parallel.empty()) return pick(g_.non_starting_parallel);
        if (!g_.non_starting.empty()) return pick(g_.non_starting);   // a graph of serial stages only
        return pick(g_.starting);
    }

    // The two decision points (§III-A, "We make scheduling decisions at two points").
    void decide(const step_result& r) {
        if (r.progressed) {
            idle_ = 0;
        } else if (r.status != step_status::waiting) {
            ++idle_;
        }
        switch (r.status) {
            case step_status::ran:   // (2) a parallel kernel's thread ended
                if (parallel(rk_)) end_of_parallel_thread();
                else waits_ = 0;
                return;
            case step_status::preempted:   // never: preempt_after is 0; the kernel goes on
                waits_ = 0;
                return;
            case step_status::empty:
            case step_status::full:
            case step_status::waiting:   // (1) a queue event
                if (o_.qes()) queue_event(r.status, r.queue, r.progressed);
                else steal();
                return;
            case step_status::busy:       // a sequential kernel's thread runs elsewhere (Alg. 1 l. 19-21)
            case step_status::finished:   // the kernel terminated: its thread is gone
                if (o_.qes()) reselect();
                else steal();
                return;
            case step_status::failed:   // the run stops; the loop sees it
                return;
        }
    }

    // Algorithm 1 (§III-A2). Lines 7-8 (delete the thread, or push it to rk's ready queue) are the
    // engine's: a parallel step that blocked did nothing, a blocked coroutine stays with its stage.
    void queue_event(step_status event, queue_id q, bool progressed) {
        if (event == step_status::waiting) {
            // Lines 1-5: another thread of the same kernel, else the same thread again. T_i counts
            // consecutive waiting events (PRS); a thread that got somewhere starts over.
            waits_ = progressed ? 1 : waits_ + 1;
            return;
        }
        const std::optional<stage_id> k = event == step_status::empty ? producer_of(q) : consumer_of(q);
        if (!k) {
            reselect();   // the kernel to schedule has terminated
            return;
        }
        switch_to(*k);   // lines 9-10; a busy sequential kernel is re-selected when its step says so
    }

    // §III-A3 then §III-A4, at the end of a parallel kernel's thread.
    void end_of_parallel_thread() {
        const std::uint64_t waited = std::exchange(waits_, 0);   // T_i of the thread that just ended
        if (o_.pss() && speculate()) return;
        if (o_.prs() && uniform() < danbi::random_schedule_probability(waited, o_.c)) {
            reselect();   // "we randomly select a kernel and a thread in a similar way to Algorithm 1"
            return;
        }
        // Neither taken: keep executing the same kernel.
    }

    // PSS: the balanced transition probabilities from the emptiest input and the fullest output, a
    // random direction, and the transition taken with that direction's probability.
    bool speculate() {
        const stage_spec& spec = e_.graph().stages()[rk_];
        std::optional<queue_id> in, out;
        double f_in = 1, f_out = 0;
        for (queue_id q : spec.inputs) {
            const double f = danbi::clamp_fill(e_.queue(q).fill_ratio());
            if (!in || f < f_in) {
                in = q;
                f_in = f;
            }
        }
        for (const output_spec& o : spec.outputs) {
            const double f = danbi::clamp_fill(e_.queue(o.queue).fill_ratio());
            if (!out || f > f_out) {
                out = o.queue;
                f_out = f;
            }
        }
        const danbi::transition_probabilities p = danbi::balanced_transition(in ? f_in : 1.0, out ? f_out : 0.0);
        const bool forward = coin();
        std::optional<stage_id> k;
        switch (danbi::pss_decide(p, forward, uniform())) {
            case danbi::pss_choice::backward: k = producer_of(*in); break;
            case danbi::pss_choice::forward: k = consumer_of(*out); break;
            case danbi::pss_choice::stay: return false;
        }
        if (!k) return false;   // the neighbour has terminated: no transition
        switch_to(*k);
        return true;
    }

    // Algorithm 1 line 20: "randomly select a kernel in the graph" (one that has not terminated).
    void reselect() {
        if (const auto k = pick_stage([&](stage_id s) { return !e_.finished(s); })) switch_to(*k);
    }

    // `ws`: the random work stealing of Fig. 3a — a blocked worker takes a random kernel that has
    // work, with no regard to which queue blocked it. Nothing to steal: the worker goes idle.
    void steal() {
        if (const auto k = pick_stage([&](stage_id s) { return e_.runnable(s); })) switch_to(*k);
        else idle_ = g_.idle_steps;
    }

    // Every stage once, from a random place; the first that makes progress becomes rk. Nothing: wait
    // until a queue moves (the counters stay up, so the worker looks again before stepping blindly).
    void scan_or_wait() {
        const std::uint64_t seen = e_.epoch();
        const std::size_t n = e_.stage_count();
        const std::size_t start = std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
        for (std::size_t i = 0; i < n; ++i) {
            const auto s = static_cast<stage_id>((start + i) % n);
            if (!e_.runnable(s)) continue;
            const step_result r = e_.step(s);
            if (r.progressed) {
                switch_to(s);
                decide(r);
                return;
            }
        }
        if (!e_.all_finished() && !e_.stopping()) e_.wait(seen);
    }

    std::optional<stage_id> producer_of(queue_id q) {
        std::size_t live = 0;
        std::optional<stage_id> k;
        for (stage_id p : g_.producers[q])   // several producers (fan-in): one at random
            if (!e_.finished(p) && std::uniform_int_distribution<std::size_t>(0, live++)(rng_) == 0) k = p;
        return k;
    }
    std::optional<stage_id> consumer_of(queue_id q) const {
        const stage_id c = g_.consumer[q];
        if (e_.finished(c)) return std::nullopt;
        return c;
    }

    // Uniformly among the stages that pass `ok` (reservoir sampling: one pass, no list).
    template <class Ok>
    std::optional<stage_id> pick_stage(Ok ok) {
        std::optional<stage_id> k;
        std::size_t seen = 0;
        for (stage_id s = 0; s < e_.stage_count(); ++s)
            if (ok(s) && std::uniform_int_distribution<std::size_t>(0, seen++)(rng_) == 0) k = s;
        return k;
    }
    stage_id pick(const std::vector<stage_id>& from) {
        return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng_)];
    }

    void switch_to(stage_id k) noexcept {
        if (k != rk_) waits_ = 0;   // T_i belongs to the thread left behind
        rk_ = k;
    }
    double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
    bool coin() { return (rng_() >> 63) != 0; }

    graph_engine& e_;
    kernel_graph& g_;
    const danbi_options& o_;
    std::mt19937_64 rng_;
    stage_id rk_ = 0;           // the current kernel
    std::uint64_t waits_ = 0;   // T_i: consecutive waiting events of the current thread
    std::size_t idle_ = 0;      // consecutive decisions that found nothing to run (waiting aside)
};

class danbi_scheduler final : public graph_policy {
public:
    explicit danbi_scheduler(danbi_options o) : options_(o) {}

    engine_config configure(const program&, unsigned) override {
        engine_config c;
        c.bounds = queue_bounds::bounded;   // the program sizes its queues (§III-A5)
        c.preempt_after = 0;                // user-level threads switch only at blocked queue operations
        return c;
    }

    void run(graph_engine& e) override {
        kernel_graph g(e.graph());
        e.run_workers([&](unsigned worker) { native_thread(e, g, options_, worker).run(); });
    }

private:
    danbi_options options_;
};

std::unique_ptr<graph_policy> make(policy_params& params, std::uint64_t seed) {
    danbi_options o;
    const std::string config = params.take_choice("config", "qes+pss+prs", {"ws", "qes", "qes+pss", "qes+pss+prs"});
    o.config = config == "ws"        ? danbi_config::ws
               : config == "qes"     ? danbi_config::qes
               : config == "qes+pss" ? danbi_config::qes_pss
                                     : danbi_config::qes_pss_prs;
    o.c = params.take_uint("C", 10000, 1, 1000000000);
    o.seed = seed;
    return std::make_unique<danbi_scheduler>(o);
}

}   // namespace

extern const policy_entry danbi_policy{
    .name = "danbi",
    .summary = "DANBI (seed 002 §III-A): per-worker schedulers follow queue events (QES), speculate towards half-full "
               "queues (PSS) and leave long ticket waits at random (PRS); `config=ws` is the random work-stealing baseline",
    .parameters = "config=qes+pss+prs: ws | qes | qes+pss | qes+pss+prs (seed 002 Fig. 3: random work stealing, then QES, "
                  "+PSS, +PRS)\n"
                  "C=10000: PRS constant, 1..1e9: after a parallel thread that waited T times for a ticket, switch to a "
                  "random kernel with probability min(T/C, 1)",
    .make = make,
    .order = 30,
    // "the size of Q is determined as max(P * T, C * T), where T is the number of native threads
    // assigned for the DANBI runtime" (seed 002 §IV-A)
    .capacity = capacity_rule::per_thread,
};

}   // namespace pipescope::graph::detail
