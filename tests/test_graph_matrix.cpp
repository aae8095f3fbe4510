// Issue 6's matrix: every graph workload (and every pipeline with a chain-graph form) under every
// graph policy, P = 1 and 2, at size tiny: the output equals the serial reference; and wherever a
// policy bounds a queue (GRAMPS' forward queues, DANBI, static, graph-serial), its peak occupancy
// never exceeds its capacity (seed 004 §III-A backpressure).
#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/graph_workload.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

using namespace pipescope;
using namespace pipescope::workloads;

TEST_CASE("every graph workload under every graph policy equals its serial reference", "[graph][matrix]") {
    std::size_t graph_workloads = 0, runs = 0;
    for (const workload* w : all_workloads()) {
        if (!w->is_graph() && !w->has_chain_graph()) continue;
        ++graph_workloads;
        for (const auto& p : graph::policies()) {
            if (!w->cannot_run_under(p.name).empty()) continue;
            for (unsigned workers : {1u, 2u}) {
                INFO(w->name() << " under " << p.name << ", P = " << workers);
                scheduler s({workers});
                run_request r;
                r.policy = p.name;
                r.size = input_size::tiny;
                const run_report rep = w->run(s, r);
                CHECK(rep.matches_reference);
                REQUIRE(rep.graph.has_value());
                for (const auto& q : rep.graph->queues) {
                    INFO("queue " << q.name);
                    if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
                    CHECK(q.stats.packets_in_use == 0);   // every packet went back when the run ended
                    CHECK(q.stats.elements_pushed == q.stats.elements_popped);
                }
                ++runs;
            }
        }
    }
    // The workloads: merge sort, histogram, FM radio, ray-0, ray-1, and ferret and dedup as chains.
    CHECK(graph_workloads >= 7);
    CHECK(runs >= graph_workloads * 2 * 6);
}

TEST_CASE("a stage graph refuses pipe_while policies and a pipeline without graph form refuses graph policies",
          "[graph][matrix]") {
    for (const workload* w : all_workloads()) {
        INFO(w->name());
        for (const auto& p : graph::policies()) {
            const std::string why = w->cannot_run_under(p.name);
            CHECK(why.empty() == (w->is_graph() || w->has_chain_graph()));
        }
        for (const auto& p : pipeline_policies())
            if (w->is_graph()) CHECK(w->cannot_run_under(p.name).find("stage graph") != std::string::npos);
    }
}
