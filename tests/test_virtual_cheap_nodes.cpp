// Nodes cheaper than a read of the thread CPU clock, on virtual workers (docs/virtual.md, "Pricing
// nodes cheaper than a clock read"): an interval is priced by the wall clock read inside the CPU
// clock's reads while the thread kept its CPU, else by the CPU clock as before.
#include "../runtime/src/scheduler_impl.hpp"
#include "../runtime/src/virtual/interval_price.hpp"
#include "../runtime/src/virtual/virtual_executor.hpp"

#include "support/test_traces.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace_session.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <thread>

using namespace pipescope;
using detail::price_interval;

namespace {

std::uint64_t cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Spends `ns` of the calling thread's CPU time.
void burn_cpu(std::uint64_t ns) {
    const std::uint64_t until = cpu_now() + ns;
    while (cpu_now() < until) {
    }
}

// Virtual workers whose jobs are measured, with the given scheduler costs (no context switches).
scheduler_options measured_workers(unsigned workers, virtual_costs costs) {
    costs.context_switch_ns = 0;
    return {.workers = workers, .virtual_time = true, .measure_jobs = true, .costs = costs};
}

// `iterations` of two cheap nodes, the second after the previous iteration's (a serial chain):
// a few dozen ns of work each. Returns the sum the nodes computed (iterations * 32).
std::uint64_t cheap_chain(scheduler& s, unsigned iterations, pipeline_observer* observer = nullptr) {
    std::uint64_t sum = 0;
    unsigned next = 0;
    pipe_while(
        s, [&] { return next < iterations; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            co_await it.stage_wait(1);
            for (unsigned k = 0; k < 64; ++k) sum += (i ^ k) & 1u;
        },
        {.policy = "piper", .observer = observer});
    return sum;
}

}   // namespace

TEST_CASE("cheap nodes: an interval the thread kept its CPU for is priced by the wall clock", "[virtual][cheap-nodes]") {
    // A 150 ns node between two CPU-clock reads of ~430 ns and two wall reads of 20 ns: the CPU
    // interval holds the node, one CPU read and both wall reads, the wall interval the node and one
    // wall read. With clock_read calibrated at 434 ns (a read costs 418-531 ns on the loaded machine
    // of docs/virtual.md) the CPU clock priced it 0; the wall clock prices what it took.
    const auto cheap = price_interval({.cpu_ns = 420, .wall_ns = 170}, 434, 20);
    CHECK(cheap.ns == 150);
    CHECK_FALSE(cheap.by_cpu_clock);
    // The same node, the CPU read dearer this time than calibrated: still 150, not inflated by it.
    CHECK(price_interval({.cpu_ns = 700, .wall_ns = 170}, 434, 20).ns == 150);
    // Equal intervals cannot hold another thread's time either.
    CHECK(price_interval({.cpu_ns = 500, .wall_ns = 500}, 434, 20).ns == 480);
    // Nothing between the wall reads: 0, not an underflow.
    CHECK(price_interval({.cpu_ns = 440, .wall_ns = 15}, 434, 20).ns == 0);
}

TEST_CASE("cheap nodes: a node's measure may start after its interval, and the check still sees all of it",
          "[virtual][cheap-nodes]") {
    // 1 µs of the interval's start skipped (the way back from a yield point): the node is priced
    // from there on, 150 ns.
    CHECK(price_interval({.cpu_ns = 1600, .wall_ns = 170, .skipped_wall_ns = 1000}, 434, 20).ns == 150);
    // The whole wall interval, skipped part included, longer than the CPU interval: another thread
    // ran meanwhile, in the skipped part or not, and the CPU clock prices it.
    const auto preempted = price_interval({.cpu_ns = 1100, .wall_ns = 170, .skipped_wall_ns = 1000}, 434, 20);
    CHECK(preempted.by_cpu_clock);
    CHECK(preempted.ns == 666);
}

TEST_CASE("cheap nodes: an interval the thread lost its CPU in is priced by the thread CPU clock",
          "[virtual][cheap-nodes]") {
    // Preempted for 4 ms: the wall interval holds the other thread's time, the CPU interval only
    // the thread's own.
    const auto preempted = price_interval({.cpu_ns = 3000, .wall_ns = 4'002'600}, 434, 20);
    CHECK(preempted.ns == 2566);
    CHECK(preempted.by_cpu_clock);
    // One nanosecond more wall than CPU is enough to distrust the wall clock.
    CHECK(price_interval({.cpu_ns = 600, .wall_ns = 601}, 434, 20).by_cpu_clock);
    CHECK(price_interval({.cpu_ns = 300, .wall_ns = 400}, 434, 20).ns == 0);
}

TEST_CASE("cheap nodes: on a virtual worker, nodes cheaper than the CPU clock's read are not priced 0",
          "[virtual][cheap-nodes][trace-file]") {
    // clock_read_ns of 10 s: a read of the thread CPU clock dearer than any node here, as ~430 ns
    // is dearer than pipe-fib's nodes. Taking it off every interval priced every node 0 (the
    // makespan was 0); the wall clock prices each one but those whose thread lost its CPU meanwhile
    // (a preemption, rare: the nodes are a few µs at most).
    const auto path = testing::checked_trace_path("virtual-cheap-nodes.pftrace");
    std::filesystem::remove(path);
    const scheduler_options options = measured_workers(
        1, {.clock_read_ns = 10'000'000'000, .failed_steal_ns = 0, .steal_ns = 0, .yield_ns = 0, .wake_ns = 0});
    constexpr unsigned iterations = 400;
    std::uint64_t makespan = 0, sum = 0;
    {
        scheduler s(options);
        trace_session rec(s, path, {.name = "cheap", .detail = trace::trace_detail::nodes});
        sum = cheap_chain(s, iterations);
        makespan = s.last_virtual_span().end_ns - s.last_virtual_span().begin_ns;
    }
    CHECK(sum == iterations * 32);
    CHECK(makespan > 0);
    const trace::trace_model m = trace::load_trace_file(path);
    REQUIRE(m.runs.size() == 1);
    std::uint64_t nodes = 0, free_nodes = 0;
    for (std::uint32_t t : m.runs[0].workers)
        if (t != trace::no_index)
            for (const trace::slice& sl : m.tracks[t].slices)
                if (m.str(sl.name).rfind("stage ", 0) == 0) {
                    ++nodes;
                    free_nodes += sl.end == sl.begin;
                }
    CHECK(nodes == 2 * iterations);
    INFO(free_nodes << " of " << nodes << " nodes priced 0");
    CHECK(free_nodes * 10 <= nodes);   // a few preempted ones at most
}

TEST_CASE("idle workers: an interval never holds the wait for the token", "[virtual][cheap-nodes][idle]") {
    // A serial chain of cheap nodes on 4 virtual workers: three of them idle all along, searching
    // (each search charged its steal attempts, and the token handed to another worker), spinning,
    // yielding and parking. Every interval a yield point measures must lie between two yield points
    // of its own thread: one that held a hand-over (another thread ran meanwhile) is priced by the
    // thread CPU clock, which then counted the hand-over's system calls as the worker's time, ~2 µs
    // per search on the machine of docs/virtual.md. The worker loop's search advanced its clock
    // without restarting the measure, so every idle yield and park after it was such an interval.
    scheduler s(
        measured_workers(4, {.clock_read_ns = 0, .failed_steal_ns = 50, .steal_ns = 100, .yield_ns = 100, .wake_ns = 1000}));
    constexpr unsigned iterations = 2000;
    CHECK(cheap_chain(s, iterations) == iterations * 32);
    const detail::virtual_executor& ex = *s.impl().virtual_time();
    const std::uint64_t measured = ex.measured_intervals(), by_cpu = ex.cpu_priced_intervals();
    INFO(by_cpu << " of " << measured << " measured intervals priced by the thread CPU clock");
    CHECK(measured >= 2 * iterations);   // every node at least
    CHECK(by_cpu * 20 <= measured);      // preemptions only: a few in a thousand here
}

namespace {
// Burns `ns` of the calling thread's CPU time when a stage-1 node begins: an observer is an
// instrument, and what it does is not the node's work.
class slow_observer final : public pipeline_observer {
public:
    explicit slow_observer(std::uint64_t ns) : ns_(ns) {}
    void on_node_begin(std::uint64_t, std::uint64_t stage, bool, int) override {
        if (stage == 1) burn_cpu(ns_);
    }

private:
    std::uint64_t ns_;
};
}   // namespace

TEST_CASE("virtual nodes begin in the body: the way back from the yield point is not their work",
          "[virtual][cheap-nodes][pipeline]") {
    // A node's boundary is a yield point deep in the runtime; the next node's measure used to start
    // there, so it held the way back up (on a virtual worker after a hand-over: returns mispredicted
    // after the context switch) and the node-begin hooks. Here the hook burns 200 µs of CPU at every
    // stage-1 node's begin: 40 of them, 8 ms, against nodes of a few dozen ns. Priced from where the
    // body resumes, the run costs a small part of that (a node whose thread lost its CPU is priced by
    // the CPU clock, hook included: a few at most).
    constexpr unsigned iterations = 40;
    constexpr std::uint64_t burn_ns = 200'000;
    slow_observer observer(burn_ns);
    scheduler s(measured_workers(1, {.clock_read_ns = 0, .failed_steal_ns = 0, .steal_ns = 0, .yield_ns = 0, .wake_ns = 0}));
    CHECK(cheap_chain(s, iterations, &observer) == iterations * 32);
    const std::uint64_t makespan = s.last_virtual_span().end_ns - s.last_virtual_span().begin_ns;
    INFO("virtual makespan " << makespan << " ns; the hooks burnt " << iterations * burn_ns << " ns");
    CHECK(makespan > 0);
    CHECK(makespan * 2 < iterations * burn_ns);
}

TEST_CASE("virtual nodes: the wall interval priced runs from node_begins to node_ends", "[virtual][cheap-nodes]") {
    // An actor on a one-worker executor, measured: 200 µs of CPU before node_begins and after
    // node_ends (the way up from and down to a yield point, made long), 20 µs between them (the
    // body). An interval the thread kept its CPU for is priced the body's time; one it lost its CPU
    // in is priced by the CPU clock, all of it, and counted by the executor: such attempts are
    // retried. The intervals are short (0.42 ms) and the attempts many, so that a loaded machine
    // (load 6 on 2 cores took the CPU away in each of 50 attempts of 2.05 ms) still gives one.
    const scheduler_options options =
        measured_workers(1, {.clock_read_ns = 0, .failed_steal_ns = 0, .steal_ns = 0, .yield_ns = 0, .wake_ns = 0});
    detail::virtual_executor ex(1);
    std::uint64_t price = 0, attempts = 0;
    bool kept_cpu = false;
    std::thread t([&] {
        ex.enter(0);   // pins this thread, not the test's
        detail::virtual_actor a{.executor = &ex, .index = 0, .options = &options};
        while (!kept_cpu && attempts < 500) {
            ++attempts;
            const std::uint64_t by_cpu = ex.cpu_priced_intervals();
            a.mark();
            burn_cpu(200'000);
            a.node_begins();
            burn_cpu(20'000);
            a.node_ends();
            burn_cpu(200'000);
            price = a.take_measured();
            kept_cpu = ex.cpu_priced_intervals() == by_cpu;
        }
        ex.leave(0);
    });
    t.join();
    CHECK(ex.measured_intervals() == attempts);
    INFO("priced " << price << " ns; " << attempts << " attempts");
    REQUIRE(kept_cpu);
    CHECK(price >= 20'000);
    CHECK(price < 200'000);   // not the 0.42 ms around the body
}
