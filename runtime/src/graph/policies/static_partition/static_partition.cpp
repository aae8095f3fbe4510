// The `static` graph policy: the stream-programming scheduler of seed 004 §IV-C.
//
// "To generate a static schedule, the application is first profiled [...]. We then run METIS to
// compute a graph partitioning that minimizes the communication to computation ratio, while
// balancing the computational load in each partition. [...] The Static scheduler does no load
// balancing; instead, worker threads have producer-consumer queues that they use to send and
// receive work. Once a thread runs out of work, it simply waits until it receives more work."
//
// - Costs: `profile` = a trace recorded earlier (per-stage total node time, partition.hpp); without
//   it `costs` = one number per stage; without either, equal costs.
// - Partition: place_stages() (partition.hpp): partition_stages(), our stand-in for METIS (balanced
//   load first, then as few queues between workers as the balance allows), over the stages with
//   each heavy parallel stage split into replicas — the fission of a data-parallel filter (§II-C,
//   "filter fusion and fission [15]"). A serial stage belongs to exactly one worker; a split
//   parallel stage to several, instance i on the (i mod k)-th of its k replicas (the engine
//   enforces the deal, graph_engine::place): the packets are dealt out statically, not balanced.
// - Execution: worker w only ever steps the stages of its partition, one step each in turn, the
//   furthest downstream first, and waits for the engine's epoch when none of them could step.
//   Queues are bounded and nothing is preempted: a serial stage runs until it blocks. A worker that
//   owns a producer and its consumer therefore alternates between them — the producer fills the
//   queue and blocks, the consumer drains it — which is what keeps a bounded graph on one worker
//   from deadlocking (and why downstream goes first: drain before producing more).
// - Workers beyond the partitions (more workers than stages) have nothing to do; they wait for the
//   run to end, so that every worker thread runs exactly one loop and its own partition.
#include "../../engine.hpp"
#include "partition.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::graph::detail {

namespace {

class static_scheduler final : public graph_policy {
public:
    static_scheduler(std::optional<std::string> profile, std::optional<std::vector<double>> costs, std::string costs_text)
        : profile_(std::move(profile)), costs_(std::move(costs)), costs_text_(std::move(costs_text)) {}

    engine_config configure(const program& g, unsigned workers) override {
        placement_ = place_stages(stage_costs(g), parallel_stages(g), stage_edges(g), std::max(workers, 1u));
        workers_ = std::max(workers, 1u);
        engine_config c;
        c.bounds = queue_bounds::bounded;   // producer-consumer queues with backpressure
        c.preempt_after = 0;
        return c;
    }

    void run(graph_engine& e) override {
        const program& g = e.graph();
        if (workers_ != e.workers()) configure(g, e.workers());
        // Per worker: its stages (a split stage on each of its replicas' workers), furthest
        // downstream first.
        std::vector<std::vector<stage_id>> mine(e.workers());
        auto order = g.topological_order();
        std::reverse(order.begin(), order.end());
        for (stage_id s : order) {
            e.place(s, placement_[s]);
            for (unsigned w : placement_[s])
                if (mine[w].empty() || mine[w].back() != s) mine[w].push_back(s);   // (sorted: repeats adjacent)
        }

        e.run_workers([&](unsigned w) {
            const std::vector<stage_id>& stages = mine[w];
            while (!e.all_finished() && !e.stopping()) {
                const std::uint64_t seen = e.epoch();
                // Round robin over the partition, one step each; no load balancing: with nothing
                // to run, wait for our own stages' queues.
                if (!e.step_ready(stages, false)) e.wait(seen);
            }
        });
    }

private:
    std::vector<double> stage_costs(const program& g) const {
        const std::size_t n = g.stages().size();
        if (profile_) {
            try {
                return profile_stage_costs(*profile_, g);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(std::string("graph policy 'static': ") + e.what());
            }
        }
        if (costs_) {
            if (costs_->size() != n)
                throw std::invalid_argument("graph policy 'static': costs=" + costs_text_ + " gives " +
                                            std::to_string(costs_->size()) + " numbers, but the program has " +
                                            std::to_string(n) + " stages (one cost per stage, in declaration order)");
            return *costs_;
        }
        return std::vector<double>(n, 1.0);
    }

    std::optional<std::string> profile_;
    std::optional<std::vector<double>> costs_;
    std::string costs_text_;
    std::vector<std::vector<unsigned>> placement_;   // per stage: its replicas' workers
    unsigned workers_ = 0;
};

std::unique_ptr<graph_policy> make(policy_params& params, std::uint64_t) {
    std::optional<std::string> profile = params.take_string("profile");
    std::optional<std::string> costs_text = params.take_string("costs");
    if (profile && costs_text)
        throw std::invalid_argument(
            "graph policy 'static': give profile= or costs=, not both (the profile measures the costs)");
    std::optional<std::vector<double>> costs;
    if (costs_text) {
        try {
            costs = parse_stage_costs(*costs_text);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("graph policy 'static': ") + e.what());
        }
    }
    return std::make_unique<static_scheduler>(std::move(profile), std::move(costs), costs_text.value_or(""));
}

}   // namespace

extern const policy_entry static_partition_policy{
    .name = "static",
    .summary = "stream-programming style (seed 004 §IV-C): stages partitioned across workers from measured costs, "
               "heavy data-parallel stages split into replicas with a fixed deal of packets, no load balancing; "
               "bounded queues",
    .parameters = "profile=: a .pftrace recorded earlier; per-stage cost = total time of its node slices\n"
                  "costs=: without profile, one cost per stage, comma-separated (default: equal costs)",
    .make = make,
    .order = 60,
};

}   // namespace pipescope::graph::detail
