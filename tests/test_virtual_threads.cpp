// Threads on virtual cores (issue 19; docs/virtual.md, "Threads on virtual cores"): the executor's
// round-robin model with declared costs, and bind-to-stage's real threads on P virtual cores —
// fewer, as many or more threads than cores — giving the serial result, the same file every time,
// and the virtual time their costs add up to.
#include "../runtime/src/virtual/virtual_executor.hpp"

#include "support/test_traces.hpp"
#include "support/virtual_loops.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace_session.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace pipescope;
using pipescope::detail::virtual_executor;

namespace {

using testing::run_threads;

// The three-stage loop (support/virtual_loops.hpp) under bind-to-stage, n items, its middle stage
// serial (one thread) or parallel with c threads.
std::uint64_t three_stage_loop(scheduler& s, std::uint64_t n, bool serial_middle, unsigned c) {
    return testing::three_stage_loop(s,
                                     {.policy = "bind-to-stage",
                                      .declared_stages = {stage_kind::serial_in_order,
                                                          serial_middle ? stage_kind::serial_out_of_order
                                                                        : stage_kind::parallel,
                                                          stage_kind::serial_in_order},
                                      .stage_threads = c},
                                     n);
}

std::string file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}   // namespace

TEST_CASE("virtual cores: three CPU-bound threads on one core take turns, a quantum each", "[virtual][threads]") {
    // Quantum 100, switch 10, each thread one step of 250. Round robin: 0 runs [0, 100), 1 [110, 210),
    // 2 [220, 320), 0 [330, 430), 1 [440, 540), 2 [550, 650), then each finishes its last 50 after a
    // switch: 0 at 660 + 50, 1 at 720 + 50, 2 at 780 + 50.
    for (int round = 0; round < 2; ++round) {
        virtual_executor ex(3, {.cores = 1, .quantum_ns = 100, .context_switch_ns = 10}, 0);
        std::vector<std::uint64_t> started(3), done(3);
        run_threads(ex, [&](unsigned i, virtual_executor& x) {
            started[i] = x.clock(i);
            x.advance(i, 250);
            done[i] = x.clock(i);
        });
        CHECK(started == std::vector<std::uint64_t>{0, 110, 220});
        CHECK(done == std::vector<std::uint64_t>{710, 770, 830});
        CHECK(ex.context_switches() == 8);
        CHECK(ex.preemptions() == 6);
        CHECK(ex.now() == 830);   // all the demand (750) plus 8 switches: the core never idled
    }
}

TEST_CASE("virtual cores: with a core per thread nothing is sliced or switched", "[virtual][threads]") {
    virtual_executor ex(3, {.cores = 3, .quantum_ns = 100, .context_switch_ns = 10}, 1000);
    std::vector<std::uint64_t> done(3);
    run_threads(ex, [&](unsigned i, virtual_executor& x) {
        for (int k = 0; k < 4; ++k) x.advance(i, 250 + 10 * i);
        done[i] = x.clock(i);
    });
    CHECK(done == std::vector<std::uint64_t>{2000, 2040, 2080});   // from the start time 1000
    CHECK(ex.context_switches() == 0);
    CHECK(ex.preemptions() == 0);
}

TEST_CASE("virtual cores: a thread blocked on a queue does not use core time", "[virtual][threads]") {
    // Two threads, one core. Thread 0 parks at once (a consumer finding its queue empty); thread 1
    // gets the core after one switch, spends 1000, wakes thread 0 (latency 50) and ends. Thread 0
    // runs at 1010 + 50 + one switch: its wait took nothing from thread 1.
    virtual_executor ex(2, {.cores = 1, .quantum_ns = 100, .context_switch_ns = 10}, 0);
    std::uint64_t woken_at = 0, producer_done = 0;
    bool by_unpark = false;
    run_threads(ex, [&](unsigned i, virtual_executor& x) {
        if (i == 0) {
            by_unpark = x.park(0, 0);
            woken_at = x.clock(0);
        } else {
            x.advance(1, 1000);
            producer_done = x.clock(1);
            x.unpark(0, 1u, 50);
        }
    });
    CHECK(by_unpark);
    CHECK(producer_done == 1010);
    CHECK(woken_at == 1070);
    CHECK(ex.context_switches() == 2);
    CHECK(ex.preemptions() == 0);   // a quantum of 100 ran out 10 times, but nobody else was ready
}

TEST_CASE("virtual cores: bind-to-stage takes the virtual time its stages add up to", "[virtual][threads][pipeline]") {
    // 64 items, stages of 10 µs, 1 ms, 10 µs. Three threads (a serial middle stage) on 3 cores: the
    // 1 ms stage is the bottleneck, 64 ms plus filling and draining. On 1 core the threads share
    // it: the work adds up (65.3 ms), plus switches and wake-ups, but no thread waiting on a queue
    // holds the core.
    const std::uint64_t work = 64 * 1020000;
    {
        scheduler s({.workers = 3, .virtual_time = true, .measure_jobs = false});
        const std::uint64_t span = three_stage_loop(s, 64, true, 0);
        CHECK(span >= 64 * 1000000);
        CHECK(span < 64 * 1000000 + 200000);
    }
    {
        scheduler s({.workers = 1, .virtual_time = true, .measure_jobs = false});
        const std::uint64_t span = three_stage_loop(s, 64, true, 0);
        CHECK(span >= work);
        CHECK(span < work + work / 20);
    }
    {   // four parallel threads on 4 cores (6 threads in all, on 6 cores): about 16 ms
        scheduler s({.workers = 6, .virtual_time = true, .measure_jobs = false});
        const std::uint64_t span = three_stage_loop(s, 64, false, 4);
        CHECK(span >= 16 * 1000000);
        CHECK(span < 17 * 1000000);
    }
}

TEST_CASE("virtual cores: bind-to-stage with fixed costs writes the same file every time",
          "[virtual][threads][trace-file]") {
    // Two parallel threads per middle stage: four threads on two cores, sliced (quantum 300 µs).
    std::string first;
    for (int round = 0; round < 2; ++round) {
        const auto path = testing::checked_trace_path("virtual-threads-" + std::to_string(round) + ".pftrace");
        std::filesystem::remove(path);
        std::uint64_t span = 0;
        {
            scheduler_options o{.workers = 2, .virtual_time = true, .measure_jobs = false};
            o.costs.quantum_ns = 300000;
            scheduler s(o);
            trace_session rec(s, path, {.name = "bts", .detail = trace::trace_detail::nodes});
            span = three_stage_loop(s, 32, false, 2);
        }
        CHECK(span > 0);
        const std::string bytes = file_bytes(path);
        REQUIRE(!bytes.empty());
        if (round == 0) first = bytes;
        else CHECK(bytes == first);
    }
}

TEST_CASE("virtual cores: ferret and dedup under bind-to-stage match the serial reference", "[virtual][threads]") {
    // c = P (default: more threads than cores) and c = 1 (one thread per stage: as many as 6 cores,
    // more than 1 or 2).
    for (const char* name : {"ferret", "dedup"}) {
        const workloads::workload* w = workloads::find_workload(name);
        REQUIRE(w != nullptr);
        for (unsigned cores : {1u, 2u, 6u}) {
            for (const char* c : {"0", "1"}) {
                INFO(name << " on " << cores << " virtual cores, c = " << c);
                scheduler s({.workers = cores, .virtual_time = true});
                workloads::run_request r;
                r.policy = "bind-to-stage";
                r.size = workloads::input_size::tiny;
                r.params = workloads::param_set(std::map<std::string, std::string>{{"c", c}});
                const workloads::run_report rep = w->run(s, r);
                CHECK(rep.matches_reference);
                CHECK(s.last_virtual_span().end_ns > s.last_virtual_span().begin_ns);
            }
        }
    }
}
