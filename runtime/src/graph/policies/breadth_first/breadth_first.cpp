// The `breadth-first` graph policy: the GPGPU style scheduler of seed 004 §IV-B.
//
// "The Breadth-First scheduler executes one stage at a time in breadth-first order, so a stage is
// run only when all its producers have finished. [...] All worker threads run the current stage
// until they are out of work, then advance in lock-step to the next stage. [...] Some of our
// applications have cycles in their graphs so the scheduler will reset to the top of the graph a
// finite number of times if necessary. As with Task-Stealing, Breadth-First has no backpressure."
//
// The order. Stages are grouped into strongly connected components (a cycle and everything on it
// is one component; every other stage is a component of its own). Components are visited in a
// topological order of the component graph (ties: the shallower component first, then declaration
// order), the stages of one component by depth from the sources (program::depths()). On a graph
// without cycles this is a topological order in which every producer comes before its consumers.
//
// Runnable in this pass: stage s is not finished, and every producer of every input queue of s
// that lies outside s's component has finished. Producers inside the component (the stages of the
// same cycle, including s's feedback producer) need not have finished: they ran earlier in this
// pass, or their data comes round in the next pass. So on a graph without cycles every stage runs
// exactly once, after all its producers finished, and consumes all of its input at once (the huge
// footprint of seed 004 Table III is the point of this scheduler). A serial stage that consumes a
// cycle's feedback queue runs once its forward producers have finished, although its feedback
// producer has not.
//
// A pass visits every runnable stage in that order. All workers step the current stage until a step
// makes no progress (a parallel stage: its input is drained, the queue handing out one packet per
// step is the load balancing within the stage; a serial stage runs on the one worker that claims
// it, the others find it busy), then meet at a barrier, whose completion picks the next stage. When
// the order is exhausted and stages remain unfinished (a feedback queue still has data), the next
// pass starts at the top. Passes repeat while they make progress; a pass in which no step made
// progress and no stage finished would repeat forever, so instead every worker waits for the
// engine's epoch to move — which nothing can move any more, so the engine reports the deadlock
// with what each stage waits for.
//
// Queues are unbounded and serial stages are never preempted (preempt_after = 0): a serial stage
// runs until its input is empty or it returns.
#include "../../engine.hpp"
#include "../../worker_barrier.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <numeric>
#include <queue>
#include <vector>

namespace pipescope::graph::detail {

namespace {

// Strongly connected components of the stage graph (edge: producer -> consumer of a queue), by
// Tarjan's algorithm, iteratively so that long chains do not recurse deeply.
std::vector<std::uint32_t> components(const std::vector<std::vector<stage_id>>& next, std::uint32_t& count) {
    const std::size_t n = next.size();
    constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> index(n, none), low(n, 0), comp(n, none);
    std::vector<bool> on_stack(n, false);
    std::vector<stage_id> stack;
    std::uint32_t counter = 0;
    count = 0;
    struct frame {
        stage_id v;
        std::size_t edge;
    };
    for (stage_id root = 0; root < n; ++root) {
        if (index[root] != none) continue;
        std::vector<frame> calls{{root, 0}};
        index[root] = low[root] = counter++;
        stack.push_back(root);
        on_stack[root] = true;
        while (!calls.empty()) {
            frame& f = calls.back();
            if (f.edge < next[f.v].size()) {
                const stage_id w = next[f.v][f.edge++];
                if (index[w] == none) {
                    index[w] = low[w] = counter++;
                    stack.push_back(w);
                    on_stack[w] = true;
                    calls.push_back({w, 0});
                } else if (on_stack[w]) {
                    low[f.v] = std::min(low[f.v], index[w]);
                }
                continue;
            }
            const stage_id v = f.v;
            calls.pop_back();
            if (!calls.empty()) low[calls.back().v] = std::min(low[calls.back().v], low[v]);
            if (low[v] == index[v]) {
                stage_id w;
                do {
                    w = stack.back();
                    stack.pop_back();
                    on_stack[w] = false;
                    comp[w] = count;
                } while (w != v);
                ++count;
            }
        }
    }
    return comp;
}

// The visiting order and, per stage, the producers that must have finished before it runs.
struct bfs_plan {
    std::vector<stage_id> order;
    std::vector<std::vector<stage_id>> outside_producers;
};

bfs_plan plan_for(const program& g) {
    const std::size_t n = g.stages().size();
    const auto depth = g.depths();
    std::vector<std::vector<stage_id>> next(n), producers_of(n);
    for (queue_id q = 0; q < g.queues().size(); ++q) {
        const stage_id c = g.consumer(q);
        for (stage_id p : g.producers(q)) {
            next[p].push_back(c);
            producers_of[c].push_back(p);
        }
    }
    std::uint32_t count = 0;
    const auto comp = components(next, count);

    // Members of each component by (depth, declaration); the component's key is its first member.
    std::vector<std::vector<stage_id>> members(count);
    for (stage_id s = 0; s < n; ++s) members[comp[s]].push_back(s);
    for (auto& m : members)
        std::stable_sort(m.begin(), m.end(), [&](stage_id a, stage_id b) { return depth[a] < depth[b]; });
    // Kahn's algorithm over the component graph, shallowest ready component first.
    std::vector<std::uint32_t> indegree(count, 0);
    std::vector<std::vector<std::uint32_t>> comp_next(count);
    for (stage_id p = 0; p < n; ++p)
        for (stage_id c : next[p])
            if (comp[p] != comp[c]) {
                comp_next[comp[p]].push_back(comp[c]);
                ++indegree[comp[c]];
            }
    auto later = [&](std::uint32_t a, std::uint32_t b) {   // priority_queue: "a after b"
        const stage_id x = members[a].front(), y = members[b].front();
        return depth[x] != depth[y] ? depth[x] > depth[y] : x > y;
    };
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, decltype(later)> ready(later);
    for (std::uint32_t c = 0; c < count; ++c)
        if (indegree[c] == 0) ready.push(c);
    bfs_plan plan;
    while (!ready.empty()) {
        const std::uint32_t c = ready.top();
        ready.pop();
        plan.order.insert(plan.order.end(), members[c].begin(), members[c].end());
        for (std::uint32_t d : comp_next[c])
            if (--indegree[d] == 0) ready.push(d);
    }
    plan.outside_producers.resize(n);
    for (stage_id s = 0; s < n; ++s)
        for (stage_id p : producers_of[s])
            if (comp[p] != comp[s]) plan.outside_producers[s].push_back(p);
    return plan;
}

class breadth_first_scheduler final : public graph_policy {
public:
    engine_config configure(const program&, unsigned) override {
        engine_config c;
        c.bounds = queue_bounds::unbounded;   // seed 004 §IV-B: no backpressure
        c.preempt_after = 0;                  // a stage runs over all of its input
        return c;
    }

    void run(graph_engine& e) override {
        plan_ = plan_for(e.graph());
        engine_ = &e;
        position_ = -1;
        // The barrier's completion runs on one worker while the others wait, so it owns the plan state.
        worker_barrier sync(e.sched(), static_cast<std::ptrdiff_t>(e.workers()), [this] { pick_next(); });
        e.run_workers([&](unsigned) {
            for (;;) {
                sync.arrive_and_wait();   // lock-step: the completion picked what comes next
                if (mode_ == mode::stop) return;
                try {
                    if (mode_ == mode::wait_for_change) {
                        while (e.epoch() == seen_ && !e.stopping()) e.wait(seen_);
                    } else {
                        run_stage(e, current_);
                    }
                } catch (...) {   // keep meeting the others at the barrier; the next completion stops
                    e.fail(std::current_exception());
                }
            }
        });
    }

private:
    enum class mode { run_stage, wait_for_change, stop };

    bool runnable_in_pass(stage_id s) const {
        if (engine_->finished(s)) return false;
        for (stage_id p : plan_.outside_producers[s])
            if (!engine_->finished(p)) return false;
        return true;
    }

    std::size_t finished_count() const {
        std::size_t n = 0;
        for (stage_id s = 0; s < engine_->stage_count(); ++s) n += engine_->finished(s);
        return n;
    }

    void pick_next() noexcept {
        graph_engine& e = *engine_;
        if (e.all_finished() || e.stopping()) {
            mode_ = mode::stop;
            return;
        }
        const auto n = static_cast<std::ptrdiff_t>(plan_.order.size());
        if (position_ < 0) begin_pass();
        for (;;) {
            if (++position_ >= n) {   // the end of a pass: reset to the top of the graph
                const bool moved = progress_.load(std::memory_order_relaxed) || finished_count() != finished_at_pass_start_;
                if (!moved) {   // the next pass would do exactly the same: nothing can move
                    seen_ = e.epoch();
                    mode_ = mode::wait_for_change;
                    position_ = -1;
                    return;
                }
                begin_pass();
                position_ = 0;
            }
            const stage_id s = plan_.order[static_cast<std::size_t>(position_)];
            if (runnable_in_pass(s)) {
                current_ = s;
                mode_ = mode::run_stage;
                return;
            }
        }
    }

    void begin_pass() {
        progress_.store(false, std::memory_order_relaxed);
        finished_at_pass_start_ = finished_count();
    }

    // Every worker steps the stage until a step makes no progress: a drained input, a serial stage
    // that another worker runs or that blocked, the stage's end.
    void run_stage(graph_engine& e, stage_id s) {
        while (!e.stopping()) {
            const step_result r = e.step(s);
            if (!r.progressed) return;
            progress_.store(true, std::memory_order_relaxed);
        }
    }

    bfs_plan plan_;
    graph_engine* engine_ = nullptr;
    // Written by the barrier's completion only, read by the workers after the barrier.
    std::ptrdiff_t position_ = -1;
    stage_id current_ = 0;
    mode mode_ = mode::run_stage;
    std::uint64_t seen_ = 0;
    std::size_t finished_at_pass_start_ = 0;
    std::atomic<bool> progress_{false};
};

std::unique_ptr<graph_policy> make(policy_params&, std::uint64_t) { return std::make_unique<breadth_first_scheduler>(); }

}   // namespace

extern const policy_entry breadth_first_policy{
    .name = "breadth-first",
    .summary =
        "GPGPU style (seed 004 §IV-B): one stage at a time over all of its input, every worker on it, a barrier between "
        "stages; cycles restart from the top; unbounded queues",
    .parameters = "",
    .make = make,
    .order = 50,
};

}   // namespace pipescope::graph::detail
