// The baseline graph schedulers of seed 004 §IV: task-stealing, breadth-first and static. Exact
// results against serial references at P = 1, 2, 4 on a chain and a fan-out/fan-in graph; a feedback
// cycle completes; breadth-first's footprint dwarfs the bounded baseline's (Table III); static runs
// every stage on exactly the workers its placement names, from given costs or from a recorded trace
// (the data-parallel split itself: test_graph_static_split.cpp);
// the partitioner on its own; bad parameters and bad profiles are refused by name.
#include "support/graph_programs.hpp"
#include "support/test_traces.hpp"

#include "../runtime/src/graph/policies/static_partition/partition.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace pipescope;
using pipescope::testing::collatz_cycle;
namespace gd = pipescope::graph::detail;

namespace {

const std::vector<std::string> baselines = {"task-stealing", "breadth-first", "static"};

graph::run_options under(const std::string& policy, std::vector<std::pair<std::string, std::string>> params = {}) {
    graph::run_options o;
    o.policy = policy;
    o.params = std::move(params);
    return o;
}

// Which workers ran each stage: a bit per worker, set from inside the bodies (on worker threads,
// where Catch's assertions must not run; a thread that is no worker sets bit 63, which no
// expected mask has).
struct worker_log {
    std::vector<std::unique_ptr<std::atomic<std::uint64_t>>> masks;
    explicit worker_log(std::size_t stages) {
        for (std::size_t s = 0; s < stages; ++s) masks.push_back(std::make_unique<std::atomic<std::uint64_t>>(0));
    }
    void note(std::size_t stage) {
        const int w = this_worker_index();
        const unsigned bit = w >= 0 && w < 63 ? static_cast<unsigned>(w) : 63u;
        masks[stage]->fetch_or(std::uint64_t{1} << bit, std::memory_order_relaxed);
    }
};

// source -> scale (parallel, x * 3) -> offset (parallel, x + 7) -> sink (serial): a 4-stage chain.
struct chain4 {
    graph::program g;
    std::uint64_t n;
    std::vector<std::uint64_t> seen;
    worker_log log{4};

    chain4(std::uint64_t count, graph::queue_shape shape) : n(count) {
        const auto a = g.add_queue<std::uint64_t>("a", shape);
        const auto b = g.add_queue<std::uint64_t>("b", shape);
        const auto c = g.add_queue<std::uint64_t>("c", shape);
        g.add_serial("source", {}, {a}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < n; ++i) {
                log.note(0);
                co_await ctx.push(0, i);
            }
            log.note(0);
        });
        g.add_parallel("scale", a, {{b, 1}}, [this](graph::instance_context& ctx) {
            log.note(1);
            for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) * 3);
        });
        g.add_parallel("offset", b, {{c, 1}}, [this](graph::instance_context& ctx) {
            log.note(2);
            for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) + 7);
        });
        g.add_serial("sink", {c}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                log.note(3);
                auto w = co_await ctx.pop(0);
                log.note(3);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) seen.push_back(w.at<std::uint64_t>(i));
                ctx.commit(w);
            }
        });
    }
    std::vector<std::uint64_t> expected() const {
        std::vector<std::uint64_t> out;
        for (std::uint64_t i = 0; i < n; ++i) out.push_back(i * 3 + 7);
        return out;
    }
};

// source fans out (evens to one queue, odds to another) -> square / cube (parallel) -> both fan in to
// one queue with two producers -> sink (serial).
struct fan_graph {
    graph::program g;
    std::uint64_t n;
    std::vector<std::uint64_t> seen;
    worker_log log{4};

    fan_graph(std::uint64_t count, graph::queue_shape shape) : n(count) {
        const auto evens = g.add_queue<std::uint64_t>("evens", shape);
        const auto odds = g.add_queue<std::uint64_t>("odds", shape);
        const auto merged = g.add_queue<std::uint64_t>("merged", shape);
        g.add_serial("split", {}, {evens, odds}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < n; ++i) {
                log.note(0);
                co_await ctx.push(i % 2, i);
            }
            log.note(0);
        });
        g.add_parallel("square", evens, {{merged, 1}}, [this](graph::instance_context& ctx) {
            log.note(1);
            for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) * ctx.in<std::uint64_t>(i));
        });
        g.add_parallel("cube", odds, {{merged, 1}}, [this](graph::instance_context& ctx) {
            log.note(2);
            for (std::size_t i = 0; i < ctx.size(); ++i) {
                const std::uint64_t v = ctx.in<std::uint64_t>(i);
                ctx.push(0, v * v * v);
            }
        });
        g.add_serial("sink", {merged}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                log.note(3);
                auto w = co_await ctx.pop(0);
                log.note(3);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) seen.push_back(w.at<std::uint64_t>(i));
                ctx.commit(w);
            }
        });
    }
    std::vector<std::uint64_t> expected() const {   // sorted: the fan-in interleaves the two branches
        std::vector<std::uint64_t> out;
        for (std::uint64_t i = 0; i < n; ++i) out.push_back(i % 2 ? i * i * i : i * i);
        std::sort(out.begin(), out.end());
        return out;
    }
};

// The stage each bit of a worker mask names, for messages.
std::string workers_in(std::uint64_t mask) {
    std::string out;
    for (unsigned w = 0; w < 64; ++w)
        if (mask >> w & 1) out += (out.empty() ? "" : ",") + std::to_string(w);
    return "{" + out + "}";
}

// The mask of a stage's workers (static's placement).
std::uint64_t mask_of(const std::vector<unsigned>& workers) {
    std::uint64_t m = 0;
    for (unsigned w : workers) m |= std::uint64_t{1} << w;
    return m;
}

// Records a run of `g` under `policy` into a .pftrace at `path`, with the program metadata that lets
// a profile reader match the stages.
void record_trace(const std::filesystem::path& path, const graph::program& g, const std::string& policy, unsigned P,
                  const std::function<void()>& check) {
    scheduler s({P});
    trace::recorder rec(s.workers(), 64u << 20);
    s.attach_recorder(&rec);
    graph::run(s, g, under(policy));
    s.attach_recorder(nullptr);
    check();
    REQUIRE(rec.dropped_total() == 0);
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t k = 0; k < g.stages().size(); ++k)
        stages.push_back({{"index", k},
                          {"name", g.stages()[k].name},
                          {"kind", g.stages()[k].kind == graph::stage_kind::serial ? "serial" : "parallel"}});
    const std::string meta = nlohmann::json{{"format", "pipescope-run/1"},
                                            {"workload", "baselines-test"},
                                            {"policy", policy},
                                            {"workers", P},
                                            {"program", {{"kind", "graph"}, {"stages", stages}}}}
                                 .dump();
    std::filesystem::remove(path);
    trace::perfetto_writer out(path);
    out.begin_run({"baselines-test · " + policy + " · P=" + std::to_string(P), P, meta, graph::counter_names(g)},
                  trace::run_clock::calibrating(rec.start_clock()));
    rec.flush(out.sink());
    out.end_run();
    out.finish();
}

}   // namespace

TEST_CASE("the baseline graph policies are registered", "[graph][baselines]") {
    for (const std::string& name : baselines) {
        INFO(name);
        bool found = false;
        for (const auto& p : graph::policies()) found = found || p.name == name;
        CHECK(found);
    }
    for (const auto& p : graph::policies())
        if (p.name == "static") {
            CHECK(p.parameters.find("profile=") != std::string::npos);
            CHECK(p.parameters.find("costs=") != std::string::npos);
        }
    // task-stealing and breadth-first never apply backpressure; static keeps every queue bounded.
    chain4 prog(10, {.packet_elements = 4, .capacity_packets = 2});
    for (bool u : graph::unbounded_queues(prog.g, under("task-stealing"), 2)) CHECK(u);
    for (bool u : graph::unbounded_queues(prog.g, under("breadth-first"), 2)) CHECK(u);
    for (bool u : graph::unbounded_queues(prog.g, under("static"), 2)) CHECK_FALSE(u);
}

TEST_CASE("the baseline policies compute a chain and a fan-out/fan-in graph exactly", "[graph][baselines]") {
    for (const std::string& policy : baselines) {
        for (unsigned P : {1u, 2u, 4u}) {
            for (bool ordered : {false, true}) {
                INFO("policy " << policy << ", P = " << P << ", ordered " << ordered);
                scheduler s({P});
                chain4 chain(3000, {.packet_elements = 16, .capacity_packets = 4, .ordered = ordered});
                const graph::run_stats st = graph::run(s, chain.g, under(policy));
                std::vector<std::uint64_t> got = chain.seen;
                if (!ordered) std::sort(got.begin(), got.end());
                CHECK(got == chain.expected());   // ordered queues keep the source's order end to end
                CHECK(st.instances == 2 * ((chain.n + 15) / 16));
                for (const auto& q : st.queues)
                    if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);

                fan_graph fan(3001, {.packet_elements = 8, .capacity_packets = 3, .ordered = ordered});
                graph::run(s, fan.g, under(policy));
                std::vector<std::uint64_t> fan_got = fan.seen;
                std::sort(fan_got.begin(), fan_got.end());
                CHECK(fan_got == fan.expected());
            }
        }
    }
}

TEST_CASE("the baseline policies also pass the shared square-sum program", "[graph][baselines]") {
    for (const std::string& policy : baselines)
        for (unsigned P : {1u, 4u}) {
            INFO("policy " << policy << ", P = " << P);
            scheduler s({P});
            testing::square_sum prog(4000, {.packet_elements = 16, .capacity_packets = 4, .ordered = true});
            graph::run(s, prog.g, under(policy));
            CHECK(prog.sum == prog.expected());
            REQUIRE(prog.seen.size() == prog.n);
            for (std::uint64_t i = 0; i < prog.n; ++i) REQUIRE(prog.seen[i] == i * i);
        }
}

TEST_CASE("a feedback cycle completes under every baseline policy", "[graph][baselines]") {
    for (const std::string& policy : baselines)
        for (unsigned P : {1u, 2u, 4u}) {
            INFO("policy " << policy << ", P = " << P);
            scheduler s({P});
            collatz_cycle prog(150, 64, 16);   // 16 values in the loop: bounded queues never fill around it
            graph::run(s, prog.g, under(policy));
            REQUIRE(prog.result.size() == prog.n);
            for (std::uint64_t i = 1; i <= prog.n; ++i) REQUIRE(prog.result[i] == collatz_cycle::steps(i));
        }
}

TEST_CASE("task-stealing preempts serial stages after every output packet", "[graph][baselines]") {
    scheduler s({2});
    chain4 prog(1600, {.packet_elements = 16, .capacity_packets = 4});
    const graph::run_stats st = graph::run(s, prog.g, under("task-stealing"));
    // The source commits 100 packets and is preempted at the reserve after each but the last.
    CHECK(st.preemptions >= 99);
    std::vector<std::uint64_t> got = prog.seen;
    std::sort(got.begin(), got.end());
    CHECK(got == prog.expected());
}

TEST_CASE("breadth-first holds a whole stage's output: its footprint dwarfs the bounded baseline's", "[graph][baselines]") {
    const graph::queue_shape shape{.packet_elements = 16, .capacity_packets = 4};
    std::size_t bounded_peak = 0;
    {
        scheduler s({2});
        chain4 prog(20000, shape);
        bounded_peak = graph::run(s, prog.g, under("graph-serial")).peak_packets;
        REQUIRE(prog.seen.size() == prog.n);
    }
    for (unsigned P : {1u, 2u}) {
        INFO("P = " << P);
        scheduler s({P});
        chain4 prog(20000, shape);
        const graph::run_stats st = graph::run(s, prog.g, under("breadth-first"));
        REQUIRE(prog.seen.size() == prog.n);
        INFO("breadth-first peak " << st.peak_packets << " packets, graph-serial " << bounded_peak);
        CHECK(bounded_peak <= 3 * shape.capacity_packets);
        CHECK(st.peak_packets >= 10 * bounded_peak);
        // The source ran to its end before anything consumed: every packet it made was alive at once.
        CHECK(st.queues[0].stats.peak_packets_in_use == (prog.n + 15) / 16);
    }
}

TEST_CASE("the static partitioner balances the load, then cuts few queues", "[graph][baselines][partition]") {
    auto chain_edges = [](std::size_t n) {
        std::vector<gd::stage_edge> e;
        for (std::size_t s = 0; s + 1 < n; ++s)
            e.push_back({static_cast<graph::stage_id>(s), static_cast<graph::stage_id>(s + 1)});
        return e;
    };
    SECTION("one worker gets everything") {
        const auto a = gd::partition_stages({3, 1, 2}, chain_edges(3), 1);
        CHECK(a == std::vector<unsigned>{0, 0, 0});
    }
    SECTION("a chain of equal stages is cut once per worker boundary") {
        const auto e = chain_edges(8);
        const std::vector<double> costs(8, 1.0);
        const auto a = gd::partition_stages(costs, e, 2);
        CHECK(gd::worker_loads(costs, a, 2) == std::vector<double>{4, 4});
        CHECK(gd::cut_edges(a, e) == 1);
        // Balance alone alternates equal stages between the workers: every edge is cut.
        CHECK(gd::cut_edges(gd::balance_stages(costs, 2), e) == 7);
        const auto b = gd::partition_stages(costs, e, 4);
        CHECK(gd::worker_loads(costs, b, 4) == std::vector<double>{2, 2, 2, 2});
        CHECK(gd::cut_edges(b, e) == 3);
    }
    SECTION("more workers than stages: one stage each, some workers idle") {
        const auto a = gd::partition_stages({1, 1, 1}, chain_edges(3), 5);
        std::vector<unsigned> sorted = a;
        std::sort(sorted.begin(), sorted.end());
        CHECK(std::unique(sorted.begin(), sorted.end()) == sorted.end());
        for (unsigned w : a) CHECK(w < 5);
    }
    SECTION("a heavy stage: neighbours join it only while the load stays within 10 %") {
        const std::vector<double> costs{1, 10, 1, 1, 1};
        // LPT: the heavy stage alone, the four light ones together (cut 2); then stage 0 joins its
        // consumer (load 11 = 10 + 10 %), stage 2 cannot (12).
        CHECK(gd::balance_stages(costs, 2) == std::vector<unsigned>{1, 0, 1, 1, 1});
        const auto a = gd::partition_stages(costs, chain_edges(5), 2);
        CHECK(a == std::vector<unsigned>{0, 0, 1, 1, 1});
        CHECK(gd::cut_edges(a, chain_edges(5)) == 1);
        CHECK(gd::partition_stages(costs, chain_edges(5), 2, 0.0) == std::vector<unsigned>{1, 0, 1, 1, 1});
    }
    SECTION("zero costs (stages that never ran) still spread out") {
        const auto a = gd::partition_stages({0, 0, 0, 0}, chain_edges(4), 2);
        CHECK(gd::worker_loads({0, 0, 0, 0}, a, 2) == std::vector<double>{2, 2});
        const auto b = gd::partition_stages({5, 0, 5, 0}, chain_edges(4), 2);
        CHECK(gd::worker_loads({5, 0, 5, 0}, b, 2)[0] == Approx(gd::worker_loads({5, 0, 5, 0}, b, 2)[1]));
    }
    SECTION("random graphs: every stage assigned, the load within the bound, deterministic") {
        std::mt19937_64 rng(42);
        for (int round = 0; round < 200; ++round) {
            const std::size_t n = 1 + rng() % 30;
            const unsigned P = 1 + static_cast<unsigned>(rng() % 8);
            std::vector<double> costs(n);
            for (double& c : costs) c = static_cast<double>(rng() % 1000);
            std::vector<gd::stage_edge> edges;
            for (std::size_t k = 0; k < 2 * n; ++k)
                edges.push_back({static_cast<graph::stage_id>(rng() % n), static_cast<graph::stage_id>(rng() % n)});
            const auto a = gd::partition_stages(costs, edges, P);
            REQUIRE(a.size() == n);
            for (unsigned w : a) REQUIRE(w < P);
            CHECK(gd::partition_stages(costs, edges, P) == a);
            // LPT is a list schedule (max load <= total / P + largest), and refinement adds at most 10 %.
            const auto eff = gd::effective_costs(costs);
            double total = 0, largest = 0;
            for (double c : eff) total += c, largest = std::max(largest, c);
            const auto loads = gd::worker_loads(costs, a, P);
            CHECK(*std::max_element(loads.begin(), loads.end()) <= 1.1 * (total / P + largest) * (1 + 1e-9));
            // Against balance alone: never a larger cut, never more than 10 % more load.
            const auto lpt = gd::balance_stages(costs, P);
            const auto lpt_loads = gd::worker_loads(costs, lpt, P);
            CHECK(gd::cut_edges(a, edges) <= gd::cut_edges(lpt, edges));
            CHECK(*std::max_element(loads.begin(), loads.end()) <=
                  1.1 * *std::max_element(lpt_loads.begin(), lpt_loads.end()) * (1 + 1e-9));
        }
    }
    SECTION("bad input is refused by name") {
        CHECK_THROWS_WITH(gd::partition_stages({1, -2}, {}, 2), Catch::Contains("stage 1"));
        CHECK_THROWS_WITH(gd::partition_stages({1, 2}, {}, 0), Catch::Contains("no workers"));
        CHECK_THROWS_WITH(gd::partition_stages({1, 2}, {{0, 5}}, 2), Catch::Contains("stage 5"));
        CHECK(gd::parse_stage_costs(" 1, 2.5 ,0") == std::vector<double>{1, 2.5, 0});
        CHECK_THROWS_WITH(gd::parse_stage_costs("1,x,3"), Catch::Contains("entry 2 ('x')"));
        CHECK_THROWS_WITH(gd::parse_stage_costs("1,,3"), Catch::Contains("entry 2"));
        CHECK_THROWS_WITH(gd::parse_stage_costs("1,-3"), Catch::Contains("entry 2 ('-3')"));
    }
}

TEST_CASE("static runs every stage on exactly the workers its placement names", "[graph][baselines]") {
    for (unsigned P : {1u, 2u, 3u, 4u}) {
        for (const std::string costs : {"1,1,1,1", "1,6,6,1", "10,1,1,1", "0,5,0,5"}) {
            INFO("P = " << P << ", costs = " << costs);
            scheduler s({P});
            chain4 prog(2000, {.packet_elements = 16, .capacity_packets = 3});
            const graph::run_stats stats = graph::run(s, prog.g, under("static", {{"costs", costs}}));
            // Unordered queues: a split stage's replicas may commit out of order.
            std::vector<std::uint64_t> got = prog.seen;
            std::sort(got.begin(), got.end());
            CHECK(got == prog.expected());
            // "1,6,6,1" at P = 4 splits both parallel stages in two (their 6 exceeds the mean 3.5).
            const auto placement =
                gd::place_stages(gd::parse_stage_costs(costs), gd::parallel_stages(prog.g), gd::stage_edges(prog.g), P);
            REQUIRE(stats.placement.size() == 4);
            for (std::size_t st = 0; st < 4; ++st) {
                INFO("stage " << st << " ran on workers " << workers_in(prog.log.masks[st]->load()) << ", partition says "
                              << workers_in(mask_of(placement[st])));
                CHECK(prog.log.masks[st]->load() == mask_of(placement[st]));
                CHECK(stats.placement[st].workers == placement[st]);
            }
        }
    }
    // Without costs: equal costs.
    scheduler s({2});
    fan_graph fan(999, {.packet_elements = 8, .capacity_packets = 2});
    graph::run(s, fan.g, under("static"));
    std::vector<std::uint64_t> got = fan.seen;
    std::sort(got.begin(), got.end());
    CHECK(got == fan.expected());
    const auto placement =
        gd::place_stages(std::vector<double>(4, 1.0), gd::parallel_stages(fan.g), gd::stage_edges(fan.g), 2);
    for (std::size_t st = 0; st < 4; ++st) CHECK(fan.log.masks[st]->load() == mask_of(placement[st]));
}

TEST_CASE("static takes its costs from a trace recorded earlier", "[graph][baselines][trace-file]") {
    const auto path = testing::checked_trace_path("baselines-profile.pftrace");
    {
        chain4 recorded(3000, {.packet_elements = 16, .capacity_packets = 4});
        record_trace(path, recorded.g, "graph-serial", 2, [&] { REQUIRE(recorded.seen == recorded.expected()); });
    }
    chain4 prog(2500, {.packet_elements = 16, .capacity_packets = 4});
    const std::vector<double> costs = gd::profile_stage_costs(path.string(), prog.g);
    REQUIRE(costs.size() == 4);
    for (double c : costs) CHECK(c > 0);   // every stage ran, so each has node time

    for (unsigned P : {1u, 2u, 4u}) {
        INFO("P = " << P);
        chain4 run_prog(2500, {.packet_elements = 16, .capacity_packets = 4});
        scheduler s({P});
        graph::run(s, run_prog.g, under("static", {{"profile", path.string()}}));
        CHECK(run_prog.seen == run_prog.expected());
        const auto placement = gd::place_stages(costs, gd::parallel_stages(run_prog.g), gd::stage_edges(run_prog.g), P);
        for (std::size_t st = 0; st < 4; ++st) CHECK(run_prog.log.masks[st]->load() == mask_of(placement[st]));
    }
}

TEST_CASE("static refuses bad costs and bad profiles by name", "[graph][baselines]") {
    scheduler s({2});
    chain4 prog(100, {.packet_elements = 16, .capacity_packets = 4});
    CHECK_THROWS_WITH(graph::run(s, prog.g, under("static", {{"costs", "1,2,3"}})),
                      Catch::Contains("costs=1,2,3 gives 3 numbers, but the program has 4 stages"));
    CHECK_THROWS_WITH(graph::run(s, prog.g, under("static", {{"costs", "1,2,x,4"}})),
                      Catch::Contains("graph policy 'static': costs=1,2,x,4: entry 3 ('x') is not a non-negative number"));
    CHECK_THROWS_WITH(graph::run(s, prog.g, under("static", {{"costs", "1,1,1,1"}, {"profile", "p.pftrace"}})),
                      Catch::Contains("not both"));
    CHECK_THROWS_AS(graph::run(s, prog.g, under("static", {{"costs", "1,2,3"}})), std::invalid_argument);

    const auto missing = std::filesystem::temp_directory_path() / "pipescope-no-such-profile.pftrace";
    std::filesystem::remove(missing);
    CHECK_THROWS_WITH(graph::run(s, prog.g, under("static", {{"profile", missing.string()}})),
                      Catch::Contains("profile '" + missing.string() + "' cannot be read as a trace"));

    const auto corrupt = std::filesystem::temp_directory_path() / "pipescope-corrupt-profile.pftrace";
    {
        std::ofstream out(corrupt, std::ios::binary | std::ios::trunc);
        out << "\x0a\xff\xff\xff\xff\x0f this is not a trace";
    }
    CHECK_THROWS_WITH(graph::run(s, prog.g, under("static", {{"profile", corrupt.string()}})),
                      Catch::Contains("graph policy 'static': profile '" + corrupt.string() + "'"));
    std::filesystem::remove(corrupt);

    // A trace of another program (other stage names) is not a profile of this one.
    const auto other = testing::checked_trace_path("baselines-other-program.pftrace");
    {
        testing::square_sum recorded(500, {.packet_elements = 16, .capacity_packets = 4});
        record_trace(other, recorded.g, "graph-serial", 1, [&] { REQUIRE(recorded.sum == recorded.expected()); });
    }
    CHECK_THROWS_WITH(graph::run(s, prog.g, under("static", {{"profile", other.string()}})),
                      Catch::Contains("records another program (stages source, square, sink), not this one (stages source, "
                                      "scale, offset, sink)"));
    // The program itself still runs after the refusals.
    graph::run(s, prog.g, under("static"));
    CHECK(prog.seen == prog.expected());
}

TEST_CASE("the baseline policies report deadlocks and exceptions like every policy", "[graph][baselines]") {
    // A stage waiting on a queue that only it feeds: every policy must fail with the engine's report.
    graph::program g;
    const auto a = g.add_queue<int>("a", {.packet_elements = 1, .capacity_packets = 2});
    const auto b = g.add_queue<int>("b", {.packet_elements = 1, .capacity_packets = 2});
    g.add_serial("source", {}, {a}, [](graph::thread_context& ctx) -> graph::stage_task { co_await ctx.push(0, 1); });
    g.add_serial("loop", {a, b}, {b}, [](graph::thread_context& ctx) -> graph::stage_task {
        auto w = co_await ctx.pop(1);
        (void)w;
    });
    for (const std::string& policy : baselines)
        for (unsigned P : {1u, 3u}) {
            INFO(policy << ", P = " << P);
            scheduler s({P});
            CHECK_THROWS_WITH(graph::run(s, g, under(policy)), Catch::Contains("stage 'loop': waits for data in queue 'b'"));
        }
}
