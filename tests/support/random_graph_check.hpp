// One run of a random stage graph (random_graph.hpp) under a policy, checked: the sink got the
// recursion's multiset, no packet is left in use, and no bounded queue held more than its capacity.
#pragma once

#include "random_graph.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

namespace pipescope::testing {

inline void check_random_graph_run(random_graph& g, scheduler& s, const std::string& policy, std::uint64_t seed,
                                   const graph_result& want) {
    g.reset();
    graph::run_options o;
    o.policy = policy;
    o.seed = seed;
    const graph::run_stats st = graph::run(s, g.program(), o);
    CHECK(g.result() == want);
    for (const auto& q : st.queues) {
        INFO("queue " << q.name);
        CHECK(q.stats.packets_in_use == 0);
        if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
    }
}

}   // namespace pipescope::testing
