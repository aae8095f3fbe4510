// Fixed costs on virtual workers (issue 19; docs/virtual.md, "Determinism", "Cost sources"): the
// same costs give the same file byte for byte, task groups included; a cost source charges each
// node what it says; cost files read back what was written and refuse what is wrong.
#include <pipescope/recording/cost_table.hpp>
#include <pipescope/recording/trace_costs.hpp>

#include "support/test_traces.hpp"

#include <pipescope/node_costs.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace_session.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

using namespace pipescope;

namespace {

// 64 iterations: serial stage 0, parallel stage 1 that forks two tasks, serial stage 2.
std::uint64_t forking_loop(scheduler& s) {
    std::uint64_t next = 0, sum = 0;
    pipe_while(
        s, [&] { return next < 64; },
        [&](iteration& it) -> pipe_task {
            const std::uint64_t i = next++;
            virtual_work(2000);
            co_await it.stage(1);
            std::uint64_t parts[2] = {};
            task_group g(s);
            for (int k = 0; k < 2; ++k)
                g.spawn([&parts, k, i] {
                    virtual_work(50000);
                    parts[k] = i * (k + 1);
                });
            g.sync();
            co_await it.stage_wait(2);
            sum += parts[0] + parts[1];
            virtual_work(3000);
        },
        {.policy = "piper"});
    return sum;
}

std::string file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Charges node (i, j) 1000 * (j + 1) + i ns and counts what it was asked.
struct table_costs final : node_cost_source {
    std::uint64_t pipeline_node_ns(std::uint64_t i, std::uint64_t j) const noexcept override {
        ++asked;
        return 1000 * (j + 1) + i;
    }
    std::uint64_t graph_node_ns(std::uint64_t, std::uint64_t) const noexcept override { return 0; }
    mutable std::uint64_t asked = 0;
};

}   // namespace

TEST_CASE("virtual workers: the same fixed costs write the same file, byte for byte", "[virtual][costs][trace-file]") {
    std::string first;
    for (int round = 0; round < 2; ++round) {
        const auto path = testing::checked_trace_path("virtual-costs-tasks-" + std::to_string(round) + ".pftrace");
        std::filesystem::remove(path);
        {
            scheduler s({.workers = 6, .virtual_time = true, .measure_jobs = false});
            trace_session rec(s, path, {.name = "forking", .detail = trace::trace_detail::nodes});
            CHECK(forking_loop(s) == 3 * (63 * 64 / 2));
        }
        const std::string bytes = file_bytes(path);
        REQUIRE(!bytes.empty());
        if (round == 0) first = bytes;
        else CHECK(bytes == first);
    }
    // Task slices are named by per-worker sequence numbers, not addresses: (worker + 1) << 40 | n.
    const trace::trace_model m = trace::load_trace_file(testing::checked_trace_path("virtual-costs-tasks-0.pftrace"));
    std::uint64_t tasks = 0;
    for (std::uint32_t t : m.runs.at(0).workers)
        for (const trace::slice& s : m.tracks[t].slices)
            if (m.str(s.name) == "task") {
                const auto id = m.uint_arg(s, "task");
                REQUIRE(id);
                CHECK((*id >> 40) >= 1);
                CHECK((*id >> 40) <= 6);
                CHECK((*id & 0xFFFFFFFFFFull) >= 1);
                ++tasks;
            }
    CHECK(tasks == 128);
}

TEST_CASE("virtual workers: a cost source charges every node what it says", "[virtual][costs][trace-file]") {
    const auto path = testing::checked_trace_path("virtual-costs-source.pftrace");
    std::filesystem::remove(path);
    table_costs costs;
    {
        // measure_jobs stays on: the nodes' cost still comes from the source alone.
        scheduler s({.workers = 4, .virtual_time = true, .node_costs = &costs});
        trace_session rec(s, path, {.name = "costed", .detail = trace::trace_detail::nodes});
        CHECK(forking_loop(s) == 3 * (63 * 64 / 2));
    }
    CHECK(costs.asked == 64 * 3);
    const trace::trace_model m = trace::load_trace_file(path);
    std::uint64_t nodes = 0;
    for (std::uint32_t t : m.runs.at(0).workers)
        for (const trace::slice& s : m.tracks[t].slices) {
            const auto i = m.uint_arg(s, trace::vocab::arg_key::iteration);
            const auto j = m.uint_arg(s, trace::vocab::arg_key::stage);
            if (!i || !j) continue;
            INFO("node (" << *i << ", " << *j << ")");
            // Stage 1's slice holds its tasks, which ran on this worker or were waited for.
            if (*j != 1) CHECK(s.duration() == 1000 * (*j + 1) + *i);
            else CHECK(s.duration() >= 1000 * 2 + *i);
            ++nodes;
        }
    CHECK(nodes == 64 * 3);
}

TEST_CASE("cost files: what is written reads back, bad files say what is wrong", "[virtual][costs]") {
    const auto dir = std::filesystem::temp_directory_path() / "pipescope-test-cost-files";
    std::filesystem::create_directories(dir);
    virtual_costs written;
    written.steal_ns = 321;
    written.clock_read_ns = 42;
    written.wall_clock_read_ns = 23;
    written.context_switch_ns = 1500;
    {
        std::ofstream out(dir / "costs.json");
        out << nlohmann::json{{"costs_ns", recording::costs_json(written)}}.dump(2);
    }
    virtual_costs read;
    const nlohmann::json taken = recording::read_cost_file(dir / "costs.json", read);
    CHECK(recording::costs_json(read) == recording::costs_json(written));
    CHECK(taken.size() == recording::cost_entries().size());

    const std::map<std::string, std::string> bad = {
        {"{\"costs_ns\": {\"steal\": -3}}", "costs_ns.steal: -3 is not a whole number of ns"},
        {"{\"costs_ns\": {\"steal\": 1.5}}", "costs_ns.steal: 1.5 is not a whole number of ns"},
        {"{\"costs_ns\": {\"stael\": 1}}", "costs_ns.stael: unknown cost (known: steal, failed_steal"},
        {"{\"steal\": 1}", "expected a JSON object with a \"costs_ns\" object"},
        {"{\"costs_ns\": {\"steal\": 1}", "not JSON, at byte"},
    };
    for (const auto& [text, message] : bad) {
        INFO(text);
        {
            std::ofstream out(dir / "bad.json");
            out << text;
        }
        virtual_costs c;
        CHECK_THROWS_WITH(recording::read_cost_file(dir / "bad.json", c), Catch::Contains(message));
        CHECK(recording::costs_json(c) == recording::costs_json(virtual_costs{}));   // the bad entry was not applied
    }
    virtual_costs c;
    // As every reader says it (trace_file.hpp): the file, then the OS's reason.
    CHECK_THROWS_WITH(recording::read_cost_file(dir / "missing.json", c),
                      Catch::Equals("cannot open " + (dir / "missing.json").string() + ": no such file or directory"));

    std::vector<std::string> params = {"K=3", "steal_ns=300", "wake_ns=7"};
    const std::vector<std::string> cost_params = recording::take_cost_params(params);
    CHECK(params == std::vector<std::string>{"K=3"});
    CHECK(recording::apply_cost_params(cost_params, c) == nlohmann::json{{"steal", 300}, {"wake", 7}});
    CHECK(c.steal_ns == 300);
    std::vector<std::string> wrong = {"steal_ns=3us"};
    CHECK_THROWS_WITH(recording::take_cost_params(wrong),
                      Catch::Contains("--param steal_ns=3us: expected a whole number of ns"));
}
