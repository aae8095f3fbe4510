// pipe_while on virtual workers (issue 19): the real policies on 1 to 64 virtual workers give the
// serial result, keep their invariants, and take the virtual time their costs add up to.
#include "support/invariant_observer.hpp"
#include "support/random_pipeline.hpp"
#include "support/test_scale.hpp"
#include "support/test_traces.hpp"
#include "support/virtual_loops.hpp"

#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace_session.hpp>

#include <sched.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace pipescope;
using namespace pipescope::testing;

namespace {

scheduler_options virtual_pool(unsigned p) { return {.workers = p, .virtual_time = true, .measure_jobs = false}; }

// The three-stage loop (support/virtual_loops.hpp) under `policy`, its stages declared.
std::uint64_t three_stage_loop(scheduler& s, const std::string& policy, std::uint64_t n = 256) {
    return testing::three_stage_loop(s,
                                     {.policy = policy,
                                      .declared_stages = {stage_kind::serial_in_order, stage_kind::parallel,
                                                          stage_kind::serial_in_order}},
                                     n);
}

}   // namespace

TEST_CASE("virtual workers: a pipeline with a 1 ms parallel stage speeds up 16x on 16 virtual workers",
          "[virtual][pipeline]") {
    for (const char* policy : {"piper", "piper-earliest", "tbb"}) {
        INFO(policy);
        scheduler one(virtual_pool(1));
        const std::uint64_t t1 = three_stage_loop(one, policy);
        // One worker: every node one after the other, plus the scheduler's own steps.
        CHECK(t1 >= 256 * 1020000);
        CHECK(t1 < 256 * 1020000 + 5000000);
        scheduler sixteen(virtual_pool(16));
        const std::uint64_t t16 = three_stage_loop(sixteen, policy);
        INFO("T1 " << t1 << " ns, T16 " << t16 << " ns");
        // The parallel stage bounds it: 256 ms of work on 16 workers, a few serial nodes to fill up.
        CHECK(t16 >= 16000000);
        CHECK(t16 < 16000000 * 115 / 100);
        scheduler again(virtual_pool(16));
        CHECK(three_stage_loop(again, policy) == t16);   // the same costs, the same schedule
    }
}

TEST_CASE("virtual workers: each loop's virtual span is its own, also after an earlier loop", "[virtual][pipeline]") {
    scheduler s(virtual_pool(16));
    const std::uint64_t first = three_stage_loop(s, "piper");
    // The thread holds virtual time from the first loop's end: the second loop's span starts at
    // its own start, not at the first one's.
    const std::uint64_t second = three_stage_loop(s, "piper");
    // Not to the nanosecond: the workers' clocks, sleep order and steal choices differ at its start.
    CHECK(second > first * 99 / 100);
    CHECK(second < first * 101 / 100);   // counted from the first loop's start it would be twice as long
    CHECK(s.last_virtual_span().begin_ns >= first);
}

TEST_CASE("virtual workers: random programs give the serial result on 1, 3, 16 and 64 virtual workers",
          "[virtual][pipeline][random]") {
    const int cases = scaled(40, 8);
    for (unsigned p : {1u, 3u, 16u, 64u}) {
        scheduler s({.workers = p, .virtual_time = true});   // measured CPU time: the costs vary, not the results
        scheduler reference({1});
        for (int c = 0; c < cases; ++c) {
            const std::uint64_t seed = static_cast<std::uint64_t>(c) * 7 + p;
            const random_program program = random_program::make(seed);
            for (const char* policy : {"piper", "piper-earliest", "tbb"}) {
                INFO(program.describe() << " · P=" << p << " · " << policy);
                const program_state expected = run_program(reference, program, {.policy = "serial"});
                pipeline_options o{.policy = policy};
                const unsigned k = 4 * p;
                invariant_observer observer(program.iterations, k);
                if (std::string(policy) == "tbb") o.declared_stages = declare_random_stages(program, seed);
                else o.observer = &observer;
                pipeline_stats stats;
                const program_state got = run_program(s, program, o, &stats);
                INFO(observer.first_violation());
                REQUIRE(observer.violations() == 0);
                REQUIRE(got.stage0_chain == expected.stage0_chain);
                REQUIRE(got.chain == expected.chain);
                REQUIRE(got.results == expected.results);
                REQUIRE(stats.peak_live <= k);
            }
        }
    }
}

namespace {

// Every worker's slices of the only run of `path`: (name, begin, end), in track order.
std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> worker_slices(const std::filesystem::path& path) {
    const trace::trace_model m = trace::load_trace_file(path);
    CHECK(m.problems.empty());
    REQUIRE(m.runs.size() == 1);
    std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> out;
    for (std::uint32_t t : m.runs[0].workers)
        if (t != trace::no_index)
            for (const trace::slice& s : m.tracks[t].slices) out.emplace_back(m.str(s.name), s.begin, s.end);
    return out;
}

}   // namespace

TEST_CASE("virtual workers: a recorded virtual run is in virtual time, marked, and the same every time",
          "[virtual][pipeline][trace-file]") {
    std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> first;
    for (int round = 0; round < 2; ++round) {
        const auto path = testing::checked_trace_path("virtual-16-" + std::to_string(round) + ".pftrace");
        std::filesystem::remove(path);
        std::uint64_t makespan = 0;
        {
            scheduler s(virtual_pool(16));
            trace_session rec(s, path, {.name = "virtual", .detail = trace::trace_detail::nodes});
            makespan = three_stage_loop(s, "piper");
        }
        const auto slices = worker_slices(path);
        std::uint64_t nodes = 0, last_end = 0, first_begin = UINT64_MAX;
        for (const auto& [name, b, e] : slices)
            if (name.rfind("stage ", 0) == 0) {
                ++nodes;
                first_begin = std::min(first_begin, b);
                last_end = std::max(last_end, e);
            }
        CHECK(nodes == 3 * 256);
        // The nodes span the loop's virtual makespan (less the control's last steps).
        CHECK(last_end - first_begin <= makespan);
        CHECK(last_end - first_begin > makespan * 9 / 10);
        const trace::trace_model m = trace::load_trace_file(path);
        CHECK(m.runs[0].metadata_json.find("\"virtual\"") != std::string::npos);
        if (round == 0) first = slices;
        else CHECK(slices == first);   // the same costs: the same schedule, to the nanosecond
    }
}

TEST_CASE("virtual workers: the automatic detail level measures nodes in virtual ns", "[virtual][pipeline][trace-file]") {
    // Nodes of 1 ms and 10 µs of virtual time are far above the 2 µs below which the automatic level
    // folds them: every node stays a slice of its own (reading virtual ns as CPU ticks folded them).
    const auto path = testing::checked_trace_path("virtual-16-auto.pftrace");
    std::filesystem::remove(path);
    {
        scheduler s(virtual_pool(16));
        trace_session rec(s, path, {.name = "virtual", .detail = trace::trace_detail::automatic});
        three_stage_loop(s, "piper", 512);   // past the 1024 nodes the level decides after
    }
    std::uint64_t nodes = 0;
    for (const auto& [name, b, e] : worker_slices(path)) nodes += name.rfind("stage ", 0) == 0;
    CHECK(nodes == 3 * 512);
}

// Only the token holder runs, so the executor keeps its threads on one CPU (virtual_executor.cpp,
// pin_to): every node of a run on 8 virtual workers, bind-to-stage's threads on 4 virtual cores
// included, runs on a thread allowed one CPU, the same one. (Without the pinning, the threads inherit
// the process's CPUs: two or more on any machine where this test can tell the difference.)
TEST_CASE("virtual workers: every thread of a virtual run runs on one CPU", "[virtual][pipeline]") {
    for (const char* policy : {"piper", "tbb", "bind-to-stage"}) {
        INFO(policy);
        scheduler s(virtual_pool(policy == std::string("bind-to-stage") ? 4 : 8));
        std::mutex m;
        std::set<int> cpus;
        int widest = 0;   // the most CPUs a node's thread was allowed on
        std::uint64_t next = 0;
        pipe_while(
            s, [&] { return next < 64; },
            [&](iteration& it) -> pipe_task {
                ++next;
                virtual_work(1000);
                co_await it.stage(1);
                cpu_set_t mine;
                CPU_ZERO(&mine);
                sched_getaffinity(0, sizeof mine, &mine);
                {
                    std::lock_guard lock(m);
                    widest = std::max(widest, CPU_COUNT(&mine));
                    cpus.insert(sched_getcpu());
                }
                virtual_work(20000);
                co_await it.stage_wait(2);
            },
            {.policy = policy,
             .declared_stages = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order}});
        CHECK(widest == 1);
        CHECK(cpus.size() == 1);
    }
}
