// trace_session: every loop started on the scheduler while a session lives is a run of its trace,
// named as the program named it; a loop that throws still ends its run, and the file is whole.
#include "support/graph_programs.hpp"
#include "support/test_traces.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace pipescope;
namespace vocab = pipescope::trace::vocab;

namespace {

// A three-stage loop over 0..n-1 summing squares in stage order (the serial reference is the formula).
std::uint64_t run_squares(scheduler& sched, std::uint64_t n, pipeline_options options) {
    std::uint64_t next = 0, sum = 0;
    std::vector<std::uint64_t> squares(n);
    pipe_while(
        sched, [&] { return next < n; },
        [&](iteration& it) -> pipe_task {
            const std::uint64_t i = next++;
            co_await it.stage(1);
            squares[i] = i * i;
            co_await it.stage_wait(2);
            sum += squares[i];
        },
        options);
    return sum;
}

std::uint64_t squares_reference(std::uint64_t n) {
    std::uint64_t s = 0;
    for (std::uint64_t i = 0; i < n; ++i) s += i * i;
    return s;
}

// Node slice names per run, counted.
std::map<std::string, std::uint64_t> node_names(const trace::trace_model& m, const trace::run& r) {
    std::map<std::string, std::uint64_t> names;
    for (std::uint32_t t : r.workers) {
        if (t == trace::no_index) continue;
        for (const trace::slice& s : m.tracks[t].slices)
            if (vocab::classify_slice(m.str(s.name)) == vocab::slice_class::node) ++names[m.str(s.name)];
    }
    return names;
}

// The "outcome" of a run's summary instant ("" if it completed).
std::string outcome_of(const trace::trace_model& m, const trace::run& r) {
    for (const trace::instant& i : m.tracks[r.track].instants)
        if (m.str(i.name) == vocab::run_summary) return std::string(m.string_arg(i, vocab::arg_key::outcome).value_or(""));
    FAIL("run " << r.name << " has no run summary");
    return {};
}

}   // namespace

TEST_CASE("trace_session: each loop is a run, named with its stages", "[trace_session][trace-file]") {
    const auto path = testing::checked_trace_path("trace-session-named.pftrace");
    std::filesystem::remove(path);
    scheduler sched({2});
    testing::square_sum graph_prog(2000, {.packet_elements = 16, .capacity_packets = 4});
    {
        trace_session rec(sched, path, {.name = "session test", .detail = trace::trace_detail::nodes});
        pipeline_options named{.policy = "piper", .name = "squares", .stage_names = {"next", "square", "sum"}};
        CHECK(run_squares(sched, 300, named) == squares_reference(300));
        // No loop name: the session's; stage 2 unnamed.
        CHECK(run_squares(sched, 200, {.policy = "piper-earliest", .stage_names = {"next", "square"}}) ==
              squares_reference(200));
        graph::run(sched, graph_prog.g, {.policy = "gramps"});
        CHECK(graph_prog.sum == graph_prog.expected());
        CHECK(!rec.run_open());
        CHECK(rec.runs() == 3);
        CHECK(!std::filesystem::exists(path));   // written whole at the end, not before
    }
    REQUIRE(std::filesystem::exists(path));
    const trace::trace_model m = trace::load_trace_file(path);
    CHECK(m.problems.empty());
    REQUIRE(m.runs.size() == 3);
    CHECK(m.runs[0].name == "squares \u00b7 piper \u00b7 P=2");
    CHECK(m.runs[1].name == "session test \u00b7 piper-earliest \u00b7 P=2");
    CHECK(m.runs[2].name == "session test \u00b7 gramps \u00b7 P=2");

    // Every node of the named loop is named; the counts are the loop's nodes (one per stage per iteration).
    const auto first = node_names(m, m.runs[0]);
    CHECK(first == std::map<std::string, std::uint64_t>{{"stage 0 \u00b7 next", 300},
                                                        {"stage 1 \u00b7 square", 300},
                                                        {"stage 2 \u00b7 sum", 300}});
    const auto second = node_names(m, m.runs[1]);
    CHECK(second == std::map<std::string, std::uint64_t>{{"stage 0 \u00b7 next", 200},
                                                         {"stage 1 \u00b7 square", 200},
                                                         {"stage 2", 200}});
    // Graph stages are named by the program.
    const auto third = node_names(m, m.runs[2]);
    std::set<std::string> graph_names;
    for (const auto& [name, count] : third) graph_names.insert(name);
    CHECK(graph_names == std::set<std::string>{"stage 0 \u00b7 source", "stage 1 \u00b7 square", "stage 2 \u00b7 sink"});

    // The metadata names the stages and the program as `pipescope run` does.
    REQUIRE(m.runs[0].metadata_valid);
    const auto meta = nlohmann::json::parse(m.runs[0].metadata_json);
    CHECK(meta["workload"] == "squares");
    CHECK(meta["policy"] == "piper");
    CHECK(meta["program"]["K"] == 8);
    CHECK(meta["program"]["stages"][1]["name"] == "stage 1 \u00b7 square");
    REQUIRE(m.runs[0].stages.size() == 3);
    CHECK(m.runs[0].stages[2].name == "stage 2 \u00b7 sum");
    const auto graph_meta = nlohmann::json::parse(m.runs[2].metadata_json);
    CHECK(graph_meta["program"]["kind"] == vocab::graph_program);
    CHECK(graph_meta["program"]["queues"].size() == 2);
    CHECK(graph_meta["program"]["queues"][0]["capacity_packets"] == 4);
    for (const trace::run& r : m.runs) CHECK(outcome_of(m, r).empty());
}

TEST_CASE("trace_session: a loop that throws ends its run, and the file says so", "[trace_session][trace-file]") {
    const auto path = testing::checked_trace_path("trace-session-exception.pftrace");
    std::filesystem::remove(path);
    scheduler sched({2});
    try {
        trace_session rec(sched, path, {.name = "failing"});
        std::uint64_t next = 0;
        pipe_while(
            sched, [&] { return next < 1000; },
            [&](iteration& it) -> pipe_task {
                const std::uint64_t i = next++;
                co_await it.stage(1);
                if (i == 123) throw std::runtime_error("bad item 123");
            });
        FAIL("the stage's exception did not reach the caller");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "bad item 123");
    }
    REQUIRE(std::filesystem::exists(path));
    const trace::trace_model m = trace::load_trace_file(path);
    CHECK(m.problems.empty());
    REQUIRE(m.runs.size() == 1);
    CHECK(outcome_of(m, m.runs[0]) == "exception: bad item 123");
    bool marked = false;   // the runtime's own instant where the stage threw
    for (std::uint32_t t : m.runs[0].workers)
        if (t != trace::no_index)
            for (const trace::instant& i : m.tracks[t].instants) marked = marked || m.str(i.name) == vocab::stage_exception;
    CHECK(marked);
}

TEST_CASE("trace_session: runs the caller opens hold every loop between", "[trace_session]") {
    const auto path = std::filesystem::temp_directory_path() / "pipescope-trace-session-explicit.pftrace";
    std::filesystem::remove(path);
    scheduler sched({2});
    trace_session rec(sched, path, {.loops_are_runs = false});
    CHECK_THROWS_AS(rec.end_run(), std::logic_error);
    rec.begin_run({.name = "two loops", .metadata_json = "{}"});
    CHECK_THROWS_AS(rec.begin_run({.name = "again"}), std::logic_error);
    CHECK(run_squares(sched, 100, {}) == squares_reference(100));
    CHECK(run_squares(sched, 50, {.policy = "piper-earliest"}) == squares_reference(50));
    rec.end_run();
    rec.close();
    rec.close();   // idempotent
    CHECK_THROWS_AS(rec.begin_run({.name = "late"}), std::logic_error);
    const trace::trace_model m = trace::load_trace_file(path);
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].name == "two loops");
    std::uint64_t nodes = 0;
    for (const auto& [name, count] : node_names(m, m.runs[0])) nodes += count;
    CHECK(nodes == 3 * 150);
    CHECK(rec.report().find(path.string() + ": 1 run,") == 0);
    std::filesystem::remove(path);
}

TEST_CASE("trace_session: wrong use is refused with a reason", "[trace_session]") {
    scheduler sched({2});
    const auto path = std::filesystem::temp_directory_path() / "pipescope-trace-session-refused.pftrace";
    CHECK_THROWS_WITH(trace_session(sched, path, {.buffer_mib = 0}), Catch::Contains("buffer_mib must be 1..1048576"));
    trace_session first(sched, path);
    CHECK_THROWS_WITH(trace_session(sched, path), Catch::Contains("already has a recording session"));
    // A loop nested in a stage belongs to the run of its parent: one run, both loops' nodes.
    std::atomic<std::uint64_t> inner_sum{0};
    std::uint64_t next = 0;
    pipe_while(
        sched, [&] { return next < 4; },
        [&](iteration& it) -> pipe_task {
            next++;
            co_await it.stage(1);
            inner_sum += run_squares(sched, 10, {});
        });
    CHECK(inner_sum == 4 * squares_reference(10));
    first.close();
    const trace::trace_model m = trace::load_trace_file(path);
    CHECK(m.runs.size() == 1);
    std::filesystem::remove(path);
}

TEST_CASE("trace_session: a budget above the machine's memory is refused with the figure", "[trace_session]") {
    scheduler sched({1});
    const auto path = std::filesystem::temp_directory_path() / "pipescope-trace-session-too-big.pftrace";
    std::filesystem::remove(path);
    const std::size_t above = static_cast<std::size_t>(trace::physical_memory_bytes() >> 20) + 1;
    if (above > (std::size_t{1} << 20)) {   // more than 1 TiB of memory: the range check refuses first
        WARN("this machine has more than 1 TiB of memory: not checked");
        return;
    }
    CHECK_THROWS_WITH(trace_session(sched, path, {.buffer_mib = above}),
                      Catch::Contains("buffer_mib " + std::to_string(above) + " MiB is more than this machine's") &&
                          Catch::Contains("GiB of memory"));
    CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("trace_session: discard() leaves an existing file as it was and no temporary file", "[trace_session]") {
    scheduler sched({2});
    const auto dir = std::filesystem::temp_directory_path() / "pipescope-trace-session-discard";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto path = dir / "kept.pftrace";
    const std::string before = "the trace the user already has\n";
    {
        std::ofstream out(path, std::ios::binary);
        out << before;
    }
    {
        trace_session rec(sched, path, {.loops_are_runs = false});
        rec.begin_run({.name = "cancelled at once"});
        CHECK(run_squares(sched, 100, {}) == squares_reference(100));
        rec.discard();
        CHECK_FALSE(rec.run_open());
        rec.discard();   // idempotent
        rec.close();     // nothing left to finish
    }
    std::ifstream in(path, std::ios::binary);
    const std::string after{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    CHECK(after == before);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
    CHECK(files == 1);   // no temporary file left
    std::filesystem::remove_all(dir);
}

TEST_CASE("trace_session: task groups spawned while no loop runs are a run of their own", "[trace_session][trace-file]") {
    const auto path = testing::checked_trace_path("trace-session-tasks.pftrace");
    std::filesystem::remove(path);
    scheduler sched({2});
    constexpr int tasks = 64;
    std::atomic<std::uint64_t> sum{0};
    {
        trace_session rec(sched, path, {.name = "forks", .detail = trace::trace_detail::nodes});
        task_group g(sched);
        for (int t = 0; t < tasks; ++t) g.spawn([&sum, t] { sum += squares_reference(1000 + t); });
        g.sync();
        // The next loop ends the tasks run and is a run of its own; tasks after it open another.
        CHECK(run_squares(sched, 100, {.name = "after"}) == squares_reference(100));
        task_group h(sched);
        h.spawn([&sum] { sum += 1; });
        h.sync();
        CHECK(rec.runs() == 2);   // the second tasks run ends at close
    }
    std::uint64_t want = 1;
    for (int t = 0; t < tasks; ++t) want += squares_reference(1000 + t);
    CHECK(sum == want);
    const trace::trace_model m = trace::load_trace_file(path);
    CHECK(m.problems.empty());
    REQUIRE(m.runs.size() == 3);
    CHECK(m.runs[0].name == "forks \u00b7 tasks \u00b7 P=2");
    CHECK(m.runs[1].name == "after \u00b7 piper \u00b7 P=2");
    CHECK(m.runs[2].name == "forks \u00b7 tasks \u00b7 P=2");
    const auto task_slices = [&](const trace::run& r) {
        std::uint64_t n = 0;
        for (std::uint32_t t : r.workers)
            if (t != trace::no_index)
                for (const trace::slice& s : m.tracks[t].slices)
                    n += vocab::classify_slice(m.str(s.name)) == vocab::slice_class::task;
        return n;
    };
    CHECK(task_slices(m.runs[0]) == tasks);   // every task ran on a worker: the waiting thread only blocks
    CHECK(task_slices(m.runs[2]) == 1);
    for (const trace::run& r : m.runs) CHECK(outcome_of(m, r).empty());
}
