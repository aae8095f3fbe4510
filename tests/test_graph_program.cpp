// Stage graphs: building, validating, and running small graphs under every graph policy.
#include "support/graph_programs.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <vector>

using namespace pipescope;
using pipescope::testing::square_sum;

namespace {

graph::run_options under(const std::string& policy) {
    graph::run_options o;
    o.policy = policy;
    return o;
}

}   // namespace

TEST_CASE("a chain graph computes the serial result under every graph policy", "[graph][program]") {
    for (const auto& p : graph::policies()) {
        for (unsigned workers : {1u, 2u}) {
            for (bool ordered : {false, true}) {
                INFO("policy " << p.name << ", P = " << workers << ", ordered " << ordered);
                scheduler s({workers});
                square_sum prog(5000, {.packet_elements = 16, .capacity_packets = 4, .ordered = ordered});
                const graph::run_stats st = graph::run(s, prog.g, under(p.name));
                CHECK(prog.sum == prog.expected());
                REQUIRE(prog.seen.size() == prog.n);
                if (ordered)
                    for (std::uint64_t i = 0; i < prog.n; ++i) REQUIRE(prog.seen[i] == i * i);
                CHECK(st.instances == (prog.n + 15) / 16);
                for (const auto& q : st.queues)
                    if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
            }
        }
    }
}

// The registry (policy_registry.hpp) names what it knows, as pipe_while's does (test_pipeline_errors.cpp).
TEST_CASE("an unknown graph policy is refused with the names of every graph policy", "[graph][program]") {
    scheduler s({1});
    square_sum prog(10, {.packet_elements = 4, .capacity_packets = 2});
    try {
        graph::run(s, prog.g, under("fifo"));
        FAIL("graph::run accepted the policy 'fifo'");
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        CHECK(what.find("unknown graph policy 'fifo' (known: ") != std::string::npos);
        for (const auto& p : graph::policies()) CHECK(what.find(p.name) != std::string::npos);
    }
    CHECK(prog.seen.empty());
}

TEST_CASE("graph programs are validated with messages that name the culprit", "[graph][program]") {
    graph::program g;
    const auto q = g.add_queue<int>("orphan", {});
    g.add_serial("source", {}, {q}, [](graph::thread_context&) -> graph::stage_task { co_return; });
    try {
        g.validate();
        FAIL("validate accepted a queue without consumer");
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("queue 'orphan' has 0 consuming stages") != std::string::npos);
    }
}

TEST_CASE("a graph that cannot make progress fails with what each stage waits for", "[graph][program]") {
    // The sink peeks further than the queue can ever hold... no: it waits for a second input that
    // nobody closes. A cycle nobody closes: stage 'loop' feeds itself and never closes.
    graph::program g;
    const auto a = g.add_queue<int>("a", {.packet_elements = 1, .capacity_packets = 2});
    const auto b = g.add_queue<int>("b", {.packet_elements = 1, .capacity_packets = 2});
    g.add_serial("source", {}, {a}, [](graph::thread_context& ctx) -> graph::stage_task { co_await ctx.push(0, 1); });
    g.add_serial("loop", {a, b}, {b}, [](graph::thread_context& ctx) -> graph::stage_task {
        auto w = co_await ctx.pop(1);   // b: only this stage produces it, and it never does
        (void)w;
    });
    for (const auto& p : graph::policies()) {
        INFO(p.name);
        scheduler s({2});
        try {
            graph::run(s, g, under(p.name));
            FAIL("a deadlocked graph returned");
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            CHECK(what.find("graph deadlocked") != std::string::npos);
            CHECK(what.find("stage 'loop': waits for data in queue 'b'") != std::string::npos);
        }
    }
}

TEST_CASE("an exception in a stage reaches the caller of graph::run", "[graph][program]") {
    for (const auto& p : graph::policies()) {
        INFO(p.name);
        graph::program g;
        const auto q = g.add_queue<int>("q", {.packet_elements = 4, .capacity_packets = 2});
        g.add_serial("source", {}, {q}, [](graph::thread_context& ctx) -> graph::stage_task {
            for (int i = 0; i < 1000; ++i) co_await ctx.push(0, i);
        });
        g.add_parallel("boom", q, {}, [](graph::instance_context& ctx) {
            if (ctx.in<int>(0) == 400) throw std::domain_error("stage boom saw 400");
        });
        scheduler s({2});
        try {
            graph::run(s, g, under(p.name));
            FAIL("the exception was lost");
        } catch (const std::domain_error& e) {
            CHECK(std::string(e.what()) == "stage boom saw 400");
        }
    }
}
