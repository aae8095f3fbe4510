// The `graph-serial` policy: one worker steps the stages, furthest downstream first — the simplest
// schedule that drains the graph (the "serial elision" of a stage graph). Bounded queues, no
// preemption: a serial stage runs until it blocks. Useful as a baseline and to debug a program.
#include "../../engine.hpp"

#include <algorithm>

namespace pipescope::graph::detail {

namespace {

class serial_scheduler final : public graph_policy {
public:
    engine_config configure(const program&, unsigned) override { return {queue_bounds::bounded, 0}; }

    void run(graph_engine& e) override {
        auto order = e.graph().topological_order();
        std::reverse(order.begin(), order.end());   // downstream first: drain before producing more
        e.run_workers(
            [&](unsigned) {
                while (!e.all_finished() && !e.stopping()) {
                    const std::uint64_t seen = e.epoch();
                    if (!e.step_ready(order, true) && !e.all_finished()) e.wait(seen);
                }
            },
            1);
    }
};

std::unique_ptr<graph_policy> make(policy_params&, std::uint64_t) { return std::make_unique<serial_scheduler>(); }

}   // namespace

extern const policy_entry serial_policy{
    .name = "graph-serial",
    .summary = "one worker steps the stages, furthest downstream first (a baseline; bounded queues, no preemption)",
    .parameters = "",
    .make = make,
    .order = 10,
};

}   // namespace pipescope::graph::detail
