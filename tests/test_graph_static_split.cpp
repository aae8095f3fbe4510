// static's data-parallel split (seed 004 §II-C "filter fusion and fission", §V-C): a parallel stage
// whose cost exceeds the mean load per worker is replicated on several workers, instance i on the
// (i mod k)-th replica; a serial stage never is. The placement on its own (exact replica counts,
// invariants on random graphs, errors), and runs on real and virtual workers: exact results against
// the serial reference, every instance on the worker its turn names, the placement in run_stats.
#include "../runtime/src/graph/policies/static_partition/partition.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace pipescope;
namespace gd = pipescope::graph::detail;

namespace {

std::vector<gd::stage_edge> chain_edges(std::size_t n) {
    std::vector<gd::stage_edge> e;
    for (std::size_t s = 0; s + 1 < n; ++s)
        e.push_back({static_cast<graph::stage_id>(s), static_cast<graph::stage_id>(s + 1)});
    return e;
}

// source (serial) -> map (parallel, x * x + 1) -> sink (serial): a histogram-shaped chain. The map
// notes which worker ran each instance (on worker threads, where Catch's assertions must not run).
struct map_chain {
    graph::program g;
    std::uint64_t n;
    std::vector<std::uint64_t> seen;
    std::vector<std::unique_ptr<std::atomic<int>>> instance_worker;   // -2: never ran

    explicit map_chain(std::uint64_t count, bool ordered = false) : n(count) {
        for (std::uint64_t i = 0; i < n; ++i) instance_worker.push_back(std::make_unique<std::atomic<int>>(-2));
        const graph::queue_shape shape{.packet_elements = 1, .capacity_packets = 8, .ordered = ordered};
        const auto a = g.add_queue<std::uint64_t>("a", shape);
        const auto b = g.add_queue<std::uint64_t>("b", shape);
        g.add_serial("source", {}, {a}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < n; ++i) co_await ctx.push(0, i);
        });
        g.add_parallel("map", a, {{b, 1}}, [this](graph::instance_context& ctx) {
            if (ctx.instance() < instance_worker.size()) instance_worker[ctx.instance()]->store(ctx.worker());
            const std::uint64_t x = ctx.in<std::uint64_t>(0);
            ctx.push(0, x * x + 1);
        });
        g.add_serial("sink", {b}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            while (auto w = co_await ctx.pop(0)) {
                for (std::size_t i = 0; i < w.size(); ++i) seen.push_back(w.at<std::uint64_t>(i));
                ctx.commit(w);
            }
        });
    }
    std::vector<std::uint64_t> expected() const {   // in order; unordered queues: compare sorted
        std::vector<std::uint64_t> out;
        for (std::uint64_t i = 0; i < n; ++i) out.push_back(i * i + 1);
        return out;
    }
};

graph::run_stats run_static(scheduler& s, map_chain& prog, const std::string& costs) {
    graph::run_options o;
    o.policy = "static";
    o.params = {{"costs", costs}};
    return graph::run(s, prog.g, o);
}

}   // namespace

TEST_CASE("static splits a data-parallel stage heavier than the mean load, never a serial one", "[graph][static-split]") {
    const std::vector<bool> map_only{false, true, false};
    SECTION("replica counts: ceil(cost / mean load), at most one per worker") {
        // mean = 12 / 4 = 3: the map's 10 needs ceil(10 / 3) = 4 replicas.
        CHECK(gd::replica_counts({1, 10, 1}, map_only, 4) == std::vector<unsigned>{1, 4, 1});
        CHECK(gd::replica_counts({1, 10, 1}, map_only, 16) == std::vector<unsigned>{1, 14, 1});
        CHECK(gd::replica_counts({1, 10, 1}, map_only, 1) == std::vector<unsigned>{1, 1, 1});
        // A stage of exactly two means is two replicas, not three.
        CHECK(gd::replica_counts({1, 2, 1}, map_only, 4) == std::vector<unsigned>{1, 2, 1});
        // Equal costs: each stage is one stage's share of the machine.
        CHECK(gd::replica_counts({1, 1, 1}, map_only, 12) == std::vector<unsigned>{1, 4, 1});
        CHECK(gd::replica_counts({1, 1, 1}, map_only, 3) == std::vector<unsigned>{1, 1, 1});
        // The heavy stage is serial: it stays whole, however heavy.
        CHECK(gd::replica_counts({10, 1, 1}, map_only, 4) == std::vector<unsigned>{1, 1, 1});
        CHECK(gd::replica_counts({1, 10, 1}, {false, false, false}, 4) == std::vector<unsigned>{1, 1, 1});
    }
    SECTION("the replicas go to distinct workers, the serial stages to one each") {
        const auto p = gd::place_stages({1, 10, 1}, map_only, chain_edges(3), 4);
        REQUIRE(p.size() == 3);
        CHECK(p[1] == std::vector<unsigned>{0, 1, 2, 3});
        CHECK(p[0].size() == 1);
        CHECK(p[2].size() == 1);
        // Without the split (old static) the map had one worker and the load was 10 of 12 on it.
        CHECK(gd::place_stages({1, 10, 1}, map_only, chain_edges(3), 2)[1].size() == 2);
        for (const auto& workers : gd::place_stages({10, 1, 1}, map_only, chain_edges(3), 4)) CHECK(workers.size() == 1);
    }
    SECTION("random graphs: serial stages whole, replicas within the workers, the load within the bound") {
        std::mt19937_64 rng(7);
        for (int round = 0; round < 200; ++round) {
            const std::size_t n = 1 + rng() % 20;
            const unsigned P = 1 + static_cast<unsigned>(rng() % 16);
            std::vector<double> costs(n);
            std::vector<bool> parallel(n);
            for (std::size_t s = 0; s < n; ++s) costs[s] = static_cast<double>(rng() % 1000), parallel[s] = rng() % 2;
            std::vector<gd::stage_edge> edges;
            for (std::size_t k = 0; k < 2 * n; ++k)
                edges.push_back({static_cast<graph::stage_id>(rng() % n), static_cast<graph::stage_id>(rng() % n)});
            const auto p = gd::place_stages(costs, parallel, edges, P);
            const auto k = gd::replica_counts(costs, parallel, P);
            CHECK(gd::place_stages(costs, parallel, edges, P) == p);   // deterministic
            REQUIRE(p.size() == n);
            const auto eff = gd::effective_costs(costs);
            double total = 0, largest_piece = 0;
            std::vector<double> load(P, 0.0);
            for (std::size_t s = 0; s < n; ++s) {
                // k pieces on k workers, or all on one (then the stage is not split after all)
                REQUIRE((p[s].size() == k[s] || p[s].size() == 1));
                if (!parallel[s]) CHECK(k[s] == 1);
                CHECK(k[s] <= P);
                CHECK(std::is_sorted(p[s].begin(), p[s].end()));
                for (unsigned w : p[s]) {
                    REQUIRE(w < P);
                    load[w] += eff[s] / static_cast<double>(p[s].size());
                }
                total += eff[s];
                largest_piece = std::max(largest_piece, eff[s] / k[s]);
            }
            // A list schedule of the pieces (total / P + largest piece), refinement adding <= 10 %.
            CHECK(*std::max_element(load.begin(), load.end()) <= 1.1 * (total / P + largest_piece) * (1 + 1e-9));
        }
    }
    SECTION("bad input is refused by name") {
        CHECK_THROWS_WITH(gd::place_stages({1, 2}, {true}, {}, 2), Catch::Contains("1 stage kinds for 2 stages"));
        CHECK_THROWS_WITH(gd::place_stages({1, 2}, {true, true}, {{0, 5}}, 2), Catch::Contains("stage 5, but there are 2"));
        CHECK_THROWS_WITH(gd::place_stages({1, 2}, {true, true}, {}, 0), Catch::Contains("no workers"));
        CHECK_THROWS_WITH(gd::place_stages({}, {}, {}, 2), Catch::Contains("no stages"));
    }
}

TEST_CASE("static deals a split stage's packets round-robin over its replicas' workers", "[graph][static-split]") {
    for (const bool virtual_time : {false, true}) {
        for (unsigned P : {2u, 3u, 4u}) {
            for (const std::string costs : {"1,20,1", "0,1,0"}) {
                INFO((virtual_time ? "virtual" : "real") << " workers, P = " << P << ", costs = " << costs);
                scheduler s({.workers = P, .virtual_time = virtual_time, .measure_jobs = false});
                map_chain prog(600);
                const graph::run_stats stats = run_static(s, prog, costs);
                std::vector<std::uint64_t> got = prog.seen;
                std::sort(got.begin(), got.end());
                CHECK(got == prog.expected());

                const auto want =
                    gd::place_stages(gd::parse_stage_costs(costs), gd::parallel_stages(prog.g), gd::stage_edges(prog.g), P);
                REQUIRE(stats.placement.size() == 3);
                CHECK(stats.placement[1].stage == "map");
                CHECK(stats.placement[1].workers == want[1]);
                // The map outweighs the mean load at every P here: one replica per worker.
                CHECK(stats.placement[1].workers.size() == P);
                CHECK(stats.placement[0].workers.size() == 1);   // serial: never split
                CHECK(stats.placement[2].workers.size() == 1);
                const std::vector<unsigned>& turns = stats.placement[1].workers;
                std::size_t off_turn = 0;
                for (std::uint64_t i = 0; i < prog.n; ++i)
                    off_turn += prog.instance_worker[i]->load() != static_cast<int>(turns[i % turns.size()]);
                CHECK(off_turn == 0);
            }
        }
    }
}

TEST_CASE("a split stage keeps an ordered queue's order", "[graph][static-split]") {
    // Ordered queues hand out tickets in input order (seed 002 §II), whichever replica commits first.
    for (const bool virtual_time : {false, true}) {
        INFO((virtual_time ? "virtual" : "real") << " workers");
        scheduler s({.workers = 4, .virtual_time = virtual_time, .measure_jobs = false});
        map_chain prog(500, true);
        const graph::run_stats stats = run_static(s, prog, "1,20,1");
        REQUIRE(stats.placement.size() == 3);
        CHECK(stats.placement[1].workers.size() == 4);
        CHECK(prog.seen == prog.expected());
    }
}

TEST_CASE("static keeps a heavy serial stage whole, and an even graph unsplit", "[graph][static-split]") {
    scheduler s({3});
    map_chain heavy_source(300);
    const graph::run_stats a = run_static(s, heavy_source, "20,1,1");
    std::vector<std::uint64_t> got = heavy_source.seen;
    std::sort(got.begin(), got.end());
    CHECK(got == heavy_source.expected());
    for (const graph::stage_placement& p : a.placement) CHECK(p.workers.size() == 1);

    // Equal costs on three workers: one stage each, as before the split.
    map_chain even(300);
    const graph::run_stats b = run_static(s, even, "1,1,1");
    REQUIRE(b.placement.size() == 3);
    for (const graph::stage_placement& p : b.placement) CHECK(p.workers.size() == 1);
    for (std::uint64_t i = 0; i < even.n; ++i)
        CHECK(even.instance_worker[i]->load() == static_cast<int>(b.placement[1].workers[0]));
}
