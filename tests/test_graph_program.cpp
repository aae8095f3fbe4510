// Stage graphs: building, validating, and running small graphs under every graph policy.
#include "support/graph_programs.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
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

// instance_context::close_output on a queue the stage alone feeds: the instance that handles the
// last element closes the output while instances that reserved room before it are still running. The queue must close only after they commit — every element
// reaches the sink exactly once — and the run must end (the sink sees the end of its stream).
TEST_CASE("a parallel instance closes its only output while earlier instances still hold room in it", "[graph][program]") {
    constexpr std::uint64_t n = 600;
    for (const auto& p : graph::policies()) {
        for (unsigned workers : {1u, 2u, 4u}) {
            INFO("policy " << p.name << ", P = " << workers);
            scheduler s({workers});
            graph::program g;
            const auto in = g.add_queue<std::uint64_t>("in", {.packet_elements = 1, .capacity_packets = 8});
            const auto out = g.add_queue<std::uint64_t>("out", {.packet_elements = 1, .capacity_packets = 8});
            g.add_serial("source", {}, {in}, [](graph::thread_context& ctx) -> graph::stage_task {
                for (std::uint64_t v = 0; v < n; ++v) co_await ctx.push(0, v);
            });
            g.add_parallel("pass", in, {{out, 1}}, [](graph::instance_context& ctx) {
                const std::uint64_t v = ctx.in<std::uint64_t>(0);
                // Slow instances just before the last: with two workers or more, the last one reserves
                // after them, finishes first and closes while they still hold their room.
                if (v + 4 >= n && v + 1 < n) std::this_thread::sleep_for(std::chrono::milliseconds(2));
                ctx.push(0, v);
                if (v == n - 1) ctx.close_output(0);   // the source is done: nothing after this one
            });
            std::uint64_t count = 0, sum = 0;
            std::vector<int> seen(n, 0);
            g.add_serial("sink", {out}, {}, [&](graph::thread_context& ctx) -> graph::stage_task {
                for (;;) {
                    graph::pop_window w = co_await ctx.pop(0);
                    if (!w) break;
                    for (std::size_t i = 0; i < w.size(); ++i) {
                        const std::uint64_t v = w.at<std::uint64_t>(i);
                        ++count;
                        sum += v;
                        if (v < n) ++seen[v];
                    }
                    ctx.commit(w);
                }
            });
            graph::run(s, g, under(p.name));
            CHECK(count == n);
            CHECK(sum == n * (n - 1) / 2);
            CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(n));
        }
    }
}
