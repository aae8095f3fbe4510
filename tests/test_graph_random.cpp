// Random stage graphs (tests/support/random_graph.hpp: fan-out, fan-in, variable rates, ordered and
// unordered queues, peeking, serial and parallel stages) under every graph policy: the sink receives
// exactly the multiset the plain recursion computes, and no packet is left in use.
#include "support/random_graph_check.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>

#include <catch2/catch.hpp>

using namespace pipescope;

TEST_CASE("random stage graphs give the recursion's result under every graph policy", "[graph][random]") {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        auto g = testing::random_graph::make(seed);
        const testing::graph_result want = g->expected();
        for (const auto& p : graph::policies()) {
            // 4 and 8 oversubscribe a small machine: workers are preempted inside the queues' and the
            // stages' spinning locks, which must then park rather than spin forever.
            for (unsigned workers : {1u, 2u, 4u, 8u}) {
                INFO(g->describe() << " under " << p.name << ", P = " << workers);
                scheduler s({workers});
                testing::check_random_graph_run(*g, s, p.name, seed, want);
            }
        }
    }
}
