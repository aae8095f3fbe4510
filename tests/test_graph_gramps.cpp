// The `gramps` graph policy (seed 004 §III) and the buffer managers (§III-B): results equal the
// serial reference with every buffer manager and worker count, bounded queues never exceed their
// capacity, a cycle completes with its backward queue unbounded, serial stages are preempted, bad
// parameters are refused by name; and the packet allocators on their own.
#include "support/graph_programs.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/graph/queue.hpp>
#include <pipescope/scheduler.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace pipescope;
using pipescope::testing::collatz_cycle;

namespace {

graph::run_options gramps(std::vector<std::pair<std::string, std::string>> params = {}) {
    graph::run_options o;
    o.policy = "gramps";
    o.params = std::move(params);
    return o;
}

// source (serial) -> triple (parallel, 0..2 outputs per input) -> offset (parallel) -> sink (serial).
// A variable output rate (like GRAMPS' push queues) makes packets short and instances uneven.
struct chain {
    graph::program g;
    std::uint64_t n;
    std::vector<std::uint64_t> seen;

    chain(std::uint64_t count, bool ordered) : n(count) {
        const graph::queue_shape shape{.packet_elements = 8, .capacity_packets = 6, .ordered = ordered};
        const auto numbers = g.add_queue<std::uint64_t>("numbers", shape);
        const auto kept = g.add_queue<std::uint64_t>("kept", shape);
        const auto shifted = g.add_queue<std::uint64_t>("shifted", shape);
        g.add_serial("source", {}, {numbers}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < n; ++i) co_await ctx.push(0, i);
        });
        // Each input i yields i % 3 copies of 3i: up to 16 outputs per 8-element packet = 2 packets.
        g.add_parallel("triple", numbers, {{kept, 2}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) {
                const auto v = ctx.in<std::uint64_t>(i);
                for (std::uint64_t k = 0; k < v % 3; ++k) ctx.push(0, 3 * v);
            }
        });
        g.add_parallel("offset", kept, {{shifted, 1}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) + 1);
        });
        g.add_serial("sink", {shifted}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                auto w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) seen.push_back(w.at<std::uint64_t>(i));
                ctx.commit(w);
            }
        });
    }
    std::vector<std::uint64_t> reference() const {
        std::vector<std::uint64_t> out;
        for (std::uint64_t v = 0; v < n; ++v)
            for (std::uint64_t k = 0; k < v % 3; ++k) out.push_back(3 * v + 1);
        return out;
    }
};

}   // namespace

TEST_CASE("gramps is registered with its parameters", "[graph][gramps]") {
    bool found = false;
    for (const auto& p : graph::policies())
        if (p.name == "gramps") {
            found = true;
            CHECK(p.parameters.find("preempt=32") != std::string::npos);
            CHECK(p.parameters.find("buffers=packet-stealing") != std::string::npos);
        }
    CHECK(found);
}

TEST_CASE("gramps computes the serial result with every buffer manager, P = 1, 2, 4, within every bound",
          "[graph][gramps]") {
    for (const char* buffers : {"packet-stealing", "per-queue", "malloc"}) {
        for (unsigned workers : {1u, 2u, 4u}) {
            for (bool ordered : {false, true}) {
                INFO("buffers " << buffers << ", P = " << workers << ", ordered " << ordered);
                scheduler s({workers});
                chain prog(3000, ordered);
                const graph::run_stats st = graph::run(s, prog.g, gramps({{"buffers", buffers}}));
                std::vector<std::uint64_t> expected = prog.reference();
                if (!ordered) {
                    std::sort(prog.seen.begin(), prog.seen.end());
                    std::sort(expected.begin(), expected.end());
                }
                CHECK(prog.seen == expected);
                // One instance per input packet: 375 of "triple", one per packet it published of "offset".
                CHECK(st.instances == (3000 + 7) / 8 + st.queues[1].stats.packets_pushed);
                std::size_t capacity = 0;
                for (const auto& q : st.queues) {
                    INFO("queue " << q.name);
                    CHECK_FALSE(q.unbounded);   // no cycle: every queue keeps its bound
                    CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
                    CHECK(q.stats.packets_in_use == 0);
                    capacity += q.capacity_packets;
                }
                CHECK(st.peak_packets <= capacity);
            }
        }
    }
}

TEST_CASE("gramps runs a graph with a cycle, the backward queue is unbounded", "[graph][gramps]") {
    std::map<std::uint64_t, std::uint32_t> expected;
    const std::uint64_t n = 1500;
    for (std::uint64_t i = 1; i <= n; ++i) expected[i] = collatz_cycle::steps(i);
    for (const char* buffers : {"packet-stealing", "per-queue", "malloc"}) {
        for (unsigned workers : {1u, 2u, 4u}) {
            INFO("buffers " << buffers << ", P = " << workers);
            scheduler s({workers});
            collatz_cycle prog(n, 4, 64);
            CHECK(graph::unbounded_queues(prog.g, gramps()) == std::vector<bool>{false, false, true, false});
            const graph::run_stats st = graph::run(s, prog.g, gramps({{"buffers", buffers}}));
            CHECK(prog.result == expected);
            for (const auto& q : st.queues) {
                INFO("queue " << q.name);
                CHECK(q.unbounded == (q.name == "feedback"));
                if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
                CHECK(q.stats.packets_in_use == 0);
            }
        }
    }
}

TEST_CASE("gramps preempts a serial stage after `preempt` output packets", "[graph][gramps]") {
    // A serial source with a roomy output and a sink that keeps up: without preemption the source
    // would run until its queue is full; with preempt=1 it gives its worker back after every packet.
    for (unsigned workers : {1u, 2u}) {
        INFO("P = " << workers);
        graph::program g;
        const auto q = g.add_queue<int>("q", {.packet_elements = 4, .capacity_packets = 64});
        std::int64_t sum = 0;
        g.add_serial("source", {}, {q}, [](graph::thread_context& ctx) -> graph::stage_task {
            for (int i = 0; i < 2000; ++i) co_await ctx.push(0, i);
        });
        g.add_serial("sink", {q}, {}, [&sum](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                auto w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) sum += w.at<int>(i);
                ctx.commit(w);
            }
        });
        scheduler s({workers});
        const graph::run_stats one = graph::run(s, g, gramps({{"preempt", "1"}}));
        CHECK(sum == 1999 * 2000 / 2);
        CHECK(one.preemptions > 0);
        CHECK(one.queues[0].stats.peak_packets_in_use <= 64);
        sum = 0;
        const graph::run_stats never = graph::run(s, g, gramps({{"preempt", "0"}}));
        CHECK(sum == 1999 * 2000 / 2);
        CHECK(never.preemptions == 0);
        CHECK(one.preemptions > never.preemptions);
    }
}

TEST_CASE("gramps refuses bad parameters with a message naming them", "[graph][gramps]") {
    graph::program g;
    const auto q = g.add_queue<int>("q", {});
    g.add_serial("source", {}, {q}, [](graph::thread_context&) -> graph::stage_task { co_return; });
    g.add_serial("sink", {q}, {}, [](graph::thread_context&) -> graph::stage_task { co_return; });
    scheduler s({1});
    CHECK_THROWS_WITH(graph::run(s, g, gramps({{"preempt", "x"}})),
                      "graph policy 'gramps': preempt=x is not a whole number in [0, 1048576]");
    CHECK_THROWS_WITH(graph::run(s, g, gramps({{"preempt", "-1"}})), Catch::Contains("preempt=-1 is not a whole number"));
    CHECK_THROWS_WITH(graph::run(s, g, gramps({{"buffers", "bogus"}})),
                      "graph policy 'gramps': buffers=bogus is not one of packet-stealing, per-queue, malloc");
    CHECK_THROWS_WITH(graph::run(s, g, gramps({{"bogus", "1"}})), "graph policy 'gramps' has no parameter bogus");
}

TEST_CASE("packet-stealing buffers: own partition first, steal half from a neighbour, grow after a failed round",
          "[graph][gramps]") {
    graph::packet_stealing_allocator a(3, 16, 4);
    a.provision(64, 6);   // evenly divided: 2 packets per partition
    for (unsigned k = 0; k < 3; ++k) CHECK(a.free_packets(64, k) == 2);

    std::set<std::byte*> mine;
    mine.insert(a.allocate(64, 0));
    mine.insert(a.allocate(64, 0));
    CHECK(a.free_packets(64, 0) == 0);
    CHECK(a.stats().steals == 0);
    // Partition 0 is empty: it steals from its neighbour 1 first, half of its 2 packets.
    mine.insert(a.allocate(64, 0));
    CHECK(a.stats().steals == 1);
    CHECK(a.stats().packets_stolen == 1);
    CHECK(a.free_packets(64, 1) == 1);
    CHECK(a.free_packets(64, 0) == 0);
    // A worker beyond the partitions wraps around (worker 4 uses partition 1).
    CHECK(a.partition_of(4) == 1);
    CHECK(a.partition_of(-1) == 0);
    // Released packets go to the releasing worker's partition, and come back LIFO.
    std::byte* p = *mine.begin();
    a.release(p, 64, 2);
    CHECK(a.free_packets(64, 2) == 3);
    CHECK(a.allocate(64, 2) == p);
    // Take everything, then one more: a round of stealing finds nothing and the pool grows by 4.
    while (a.free_packets(64, 0) + a.free_packets(64, 1) + a.free_packets(64, 2) > 0) mine.insert(a.allocate(64, 1));
    mine.insert(p);
    CHECK(mine.size() == 6);   // six distinct packets
    CHECK(a.stats().failed_rounds == 0);
    std::byte* extra = a.allocate(64, 1);
    CHECK(extra != nullptr);
    CHECK(mine.count(extra) == 0);
    CHECK(a.stats().failed_rounds == 1);
    CHECK(a.stats().packets_grown == 4);
    CHECK(a.free_packets(64, 1) == 3);
    // Other sizes have their own pool; an unprovisioned size starts empty and grows.
    CHECK(a.free_packets(32, 0) == 0);
    CHECK(a.allocate(32, 0) != nullptr);
    CHECK(a.free_packets(32, 0) == 3);
    CHECK_THROWS_AS(a.free_packets(64, 3), std::out_of_range);
}

TEST_CASE("a queue gives every packet back to a shared buffer manager, even abandoned windows", "[graph][gramps]") {
    auto m = std::make_shared<graph::malloc_packet_allocator>();
    graph::queue_config c;
    c.name = "q";
    c.element_size = sizeof(int);
    c.packet_elements = 4;
    c.capacity_packets = 8;
    c.ordered = true;
    c.allocator = m;
    {
        graph::packet_queue q(c);
        auto a = q.try_reserve_push(2);
        auto b = q.try_reserve_push(3);
        REQUIRE(a);
        REQUIRE(b);
        for (std::size_t i = 0; i < b.capacity(); ++i) b.at<int>(i) = static_cast<int>(100 + i);
        q.commit_push(b, 5);   // waits for ticket 0; its third packet goes back now
        CHECK(m->releases() == 1);
        CHECK(q.try_reserve_push(5).status() == graph::reserve_status::full);   // 4 in use, capacity 8
        for (std::size_t i = 0; i < a.capacity(); ++i) a.at<int>(i) = static_cast<int>(i);
        q.commit_push(a);   // publishes both, in ticket order
        auto r = q.try_reserve_pop(3);
        REQUIRE(r);
        CHECK(r.at<int>(0) == 0);
        CHECK(r.at<int>(8) == 100);
        CHECK(q.stats().packets_in_use == 4);
        // r is never committed, one published packet is never popped, a new window never committed.
        auto open = q.try_reserve_push(1);
        REQUIRE(open);
        CHECK(m->allocations() == 6);
    }
    CHECK(m->releases() == m->allocations());
}
