// Stage graphs on virtual workers (issue 19): every graph policy on 1 to 16 virtual workers gives the
// recursion's result, and a graph whose parallel stage dominates speeds up with the virtual workers.
#include "support/random_graph_check.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/node_costs.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace pipescope;

namespace {

scheduler_options virtual_pool(unsigned p) { return {.workers = p, .virtual_time = true, .measure_jobs = false}; }

// n packets of one element: a serial source (2 µs per element), a parallel stage of 1 ms per
// instance, a serial sink (2 µs) that sums; costs declared in virtual time. Returns the makespan.
std::uint64_t source_work_sink(scheduler& s, const std::string& policy,
                               std::vector<std::pair<std::string, std::string>> params = {}, std::uint64_t n = 256) {
    graph::program g;
    const auto in = g.add_queue<std::uint64_t>("in", {.packet_elements = 1, .capacity_packets = 32});
    const auto out = g.add_queue<std::uint64_t>("out", {.packet_elements = 1, .capacity_packets = 32});
    g.add_serial("source", {}, {in}, [n](graph::thread_context& ctx) -> graph::stage_task {
        for (std::uint64_t k = 0; k < n; ++k) {
            virtual_work(2000);
            co_await ctx.push(0, k);
        }
    });
    g.add_parallel("square", in, {{out, 1}}, [](graph::instance_context& ctx) {
        virtual_work(1000000);
        for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) * ctx.in<std::uint64_t>(i));
    });
    std::uint64_t sum = 0;
    g.add_serial("sum", {out}, {}, [&](graph::thread_context& ctx) -> graph::stage_task {
        while (auto window = co_await ctx.pop(0)) {
            for (std::size_t i = 0; i < window.size(); ++i) sum += window.at<std::uint64_t>(i);
            virtual_work(2000);
            ctx.commit(window);
        }
    });
    graph::run(s, g, {.policy = policy, .params = std::move(params)});
    std::uint64_t want = 0;
    for (std::uint64_t k = 0; k < n; ++k) want += k * k;
    CHECK(sum == want);
    const auto span = s.last_virtual_span();
    return span.end_ns - span.begin_ns;
}

}   // namespace

TEST_CASE("virtual workers: random stage graphs give the recursion's result under every graph policy", "[virtual][graph]") {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        auto g = testing::random_graph::make(seed);
        const testing::graph_result want = g->expected();
        for (const auto& p : graph::policies()) {
            for (unsigned workers : {1u, 3u, 16u}) {
                INFO(g->describe() << " under " << p.name << " on " << workers << " virtual workers");
                scheduler s(virtual_pool(workers));
                testing::check_random_graph_run(*g, s, p.name, seed, want);
            }
        }
    }
}

TEST_CASE("virtual workers: a graph with a 1 ms parallel stage speeds up on 16 virtual workers", "[virtual][graph]") {
    // 256 instances of 1 ms: 256 ms on one worker; on 16, about 16 ms plus the serial stages' 2 µs
    // steps and the engine's modelled costs. graph-serial runs one stage at a time on one worker.
    // static gets the costs the bodies declare (2 µs, 1 ms, 2 µs a node) and splits the parallel
    // stage over all 16 workers, its instances dealt round-robin (seed 004 §II-C fission); before
    // the split it ran the whole stage on one worker, at no speedup at all.
    using params = std::vector<std::pair<std::string, std::string>>;
    for (const auto& [policy, with] : std::vector<std::pair<std::string, params>>{
             {"gramps", {}}, {"task-stealing", {}}, {"danbi", {}}, {"static", {{"costs", "2,1000,2"}}}}) {
        INFO(policy);
        scheduler one(virtual_pool(1));
        const std::uint64_t t1 = source_work_sink(one, policy, with);
        CHECK(t1 >= 256'000'000);
        scheduler sixteen(virtual_pool(16));
        const std::uint64_t t16 = source_work_sink(sixteen, policy, with);
        CHECK(t16 >= 16'000'000);
        CHECK(t1 > 12 * t16);   // at least 12x of the ideal 16x
    }
}

// Prices every stage-graph node at `ns` (a recording's node slices, as `pipescope run --costs` reads them).
struct flat_graph_costs final : node_cost_source {
    explicit flat_graph_costs(std::uint64_t n) : ns(n) {}
    std::uint64_t pipeline_node_ns(std::uint64_t, std::uint64_t) const noexcept override { return 0; }
    std::uint64_t graph_node_ns(std::uint64_t, std::uint64_t) const noexcept override { return ns; }
    std::uint64_t ns;
};

TEST_CASE("virtual workers: priced from a cost source, a parallel instance is charged its queue operations",
          "[virtual][graph][costs]") {
    // A recorded instance's slice holds its body only; its reserve and commit on the input and on
    // its output are charged queue_op_ns each. On one worker every charge adds to the span: 256
    // instances of "square", two queue operations each.
    const flat_graph_costs costs(1000);
    auto span = [&](const char* policy, std::uint64_t queue_op_ns) {
        scheduler_options o = virtual_pool(1);
        o.node_costs = &costs;
        o.costs.queue_op_ns = queue_op_ns;
        scheduler s(o);
        return source_work_sink(s, policy);
    };
    for (const char* policy : {"gramps", "task-stealing", "danbi", "breadth-first"}) {
        INFO(policy);
        CHECK(span(policy, 700) - span(policy, 0) == 256 * 2 * 700);
    }
}

TEST_CASE("virtual workers: a stage graph with declared costs takes the same virtual time every run", "[virtual][graph]") {
    for (const char* policy : {"gramps", "task-stealing", "danbi", "breadth-first"}) {
        INFO(policy);
        scheduler a(virtual_pool(8));
        scheduler b(virtual_pool(8));
        CHECK(source_work_sink(a, policy, {}, 64) == source_work_sink(b, policy, {}, 64));
    }
}

TEST_CASE("virtual workers: the graph workloads match their serial references under every graph policy",
          "[virtual][graph]") {
    // fm-radio's lockstep serial stages are held by one worker across its yield point while others
    // retry them: under task-stealing that livelocked until a failed step cost virtual time.
    for (const char* name : {"fm-radio", "mergesort", "ray-1"}) {
        const workloads::workload* w = workloads::find_workload(name);
        REQUIRE(w != nullptr);
        for (const auto& p : graph::policies()) {
            for (unsigned workers : {2u, 5u}) {
                INFO(name << " under " << p.name << " on " << workers << " virtual workers");
                scheduler s({.workers = workers, .virtual_time = true});
                workloads::run_request r;
                r.policy = p.name;
                r.size = workloads::input_size::tiny;
                const workloads::run_report rep = w->run(s, r);
                CHECK(rep.matches_reference);
                CHECK(s.last_virtual_span().end_ns > s.last_virtual_span().begin_ns);
            }
        }
    }
}
