// The virtual-time token (issue 19): one worker runs at a time, in the order of their clocks, and
// the same costs give the same order every time.
#include "../runtime/src/virtual/virtual_executor.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>
#include <tuple>
#include <vector>

using pipescope::detail::virtual_executor;

namespace {

struct step {
    unsigned worker;
    std::uint64_t clock;
    bool operator==(const step&) const = default;
};

// Runs `body(i, ex, log)` on one thread per worker; `log` is only written by the token holder.
template <class Body>
std::vector<step> run_workers(unsigned n, Body body) {
    virtual_executor ex(n);
    std::vector<step> log;
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            ex.enter(i);
            body(i, ex, log);
            ex.leave(i);
        });
    for (auto& t : threads) t.join();
    return log;
}

}   // namespace

TEST_CASE("virtual_executor: workers take turns in the order of their clocks", "[virtual]") {
    // Worker i's steps cost 10 + 7i ns; every worker logs its clock before each step.
    const auto body = [](unsigned i, virtual_executor& ex, std::vector<step>& log) {
        for (int k = 0; k < 50; ++k) {
            log.push_back({i, ex.clock(i)});
            ex.advance(i, 10 + 7 * i);
        }
    };
    const std::vector<step> first = run_workers(4, body);
    REQUIRE(first.size() == 200);
    for (std::size_t k = 1; k < first.size(); ++k) {
        // Nondecreasing clocks; at equal clocks the lower index goes first.
        INFO("step " << k);
        CHECK(std::tie(first[k - 1].clock, first[k - 1].worker) < std::tie(first[k].clock, first[k].worker));
    }
    for (unsigned i = 0; i < 4; ++i) {   // each worker's own steps are exactly its costs apart
        std::uint64_t expect = 0;
        for (const step& s : first)
            if (s.worker == i) {
                CHECK(s.clock == expect);
                expect += 10 + 7 * i;
            }
    }
    CHECK(run_workers(4, body) == first);   // same costs, same schedule
}

TEST_CASE("virtual_executor: an unpark wakes a parked worker at the waker's time plus the latency", "[virtual]") {
    std::uint64_t woken_at = 0;
    bool by_unpark = false;
    run_workers(2, [&](unsigned i, virtual_executor& ex, std::vector<step>&) {
        if (i == 0) {
            by_unpark = ex.park(0, 0);
            woken_at = ex.clock(0);
        } else {
            ex.advance(1, 500);
            ex.unpark(0, 1u, 40);
        }
    });
    CHECK(by_unpark);
    CHECK(woken_at == 540);
}

TEST_CASE("virtual_executor: a timed park ends at its timer unless unparked first", "[virtual]") {
    std::uint64_t woken_at = 0;
    bool by_unpark = true;
    run_workers(2, [&](unsigned i, virtual_executor& ex, std::vector<step>&) {
        if (i == 0) {
            ex.advance(0, 100);
            by_unpark = ex.park(0, 200);
            woken_at = ex.clock(0);
        } else {
            ex.advance(1, 1000);   // later than the timer: too late to wake worker 0
            ex.unpark(0, 1u, 0);
        }
    });
    CHECK_FALSE(by_unpark);
    CHECK(woken_at == 300);
}

TEST_CASE("virtual_executor: an unpark of a running worker ends its next park at once", "[virtual]") {
    bool by_unpark = false;
    std::uint64_t clock_after = 0;
    run_workers(2, [&](unsigned i, virtual_executor& ex, std::vector<step>&) {
        if (i == 1) {
            ex.unpark(0, 1u, 0);   // worker 0 is runnable, not parked: the wake is kept
        } else {
            ex.advance(0, 10);   // worker 1 runs its unpark in between (its clock 0 < 10)
            by_unpark = ex.park(0, 0);
            clock_after = ex.clock(0);
        }
    });
    CHECK(by_unpark);
    CHECK(clock_after == 10);
}

TEST_CASE("virtual_executor: parked workers wait for an outside thread, at the current time", "[virtual]") {
    virtual_executor ex(3);
    std::vector<std::uint64_t> woke(3, 0);
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < 3; ++i)
        threads.emplace_back([&, i] {
            ex.enter(i);
            ex.advance(i, 100 * (i + 1));
            ex.park(i, 0);   // the first park: quiescent once all three are here
            woke[i] = ex.clock(i);
            ex.leave(i);
        });
    ex.wait_quiescent();
    CHECK(ex.now() == 300);   // the last hand-over went to worker 2 at its clock
    for (unsigned i = 0; i < 3; ++i) ex.unpark(i, std::nullopt, 0);
    for (auto& t : threads) t.join();
    CHECK(woke == std::vector<std::uint64_t>{300, 300, 300});
}

// ---- a scheduler on virtual workers ----------------------------------------------------------

#include <pipescope/scheduler.hpp>
#include <pipescope/task_group.hpp>

#include <atomic>

namespace {

// 4 * workers tasks of `task_ns` declared virtual time each, spawned from outside; returns the
// virtual span and checks that every task ran once.
pipescope::scheduler::virtual_span run_tasks(pipescope::scheduler& s, int tasks, std::uint64_t task_ns) {
    std::vector<std::atomic<int>> ran(static_cast<std::size_t>(tasks));
    pipescope::task_group g(s);
    for (int t = 0; t < tasks; ++t)
        g.spawn([&ran, t, task_ns] {
            ++ran[static_cast<std::size_t>(t)];
            pipescope::virtual_work(task_ns);
        });
    g.sync();
    for (auto& r : ran) CHECK(r == 1);
    return s.last_virtual_span();
}

}   // namespace

TEST_CASE("virtual workers: 64 tasks of 1 ms on 16 virtual workers take 4 ms, on any machine", "[virtual]") {
    pipescope::scheduler s({.workers = 16, .virtual_time = true, .measure_jobs = false});
    const auto span = run_tasks(s, 64, 1000000);
    const std::uint64_t makespan = span.end_ns - span.begin_ns;
    INFO("virtual makespan " << makespan << " ns");
    // Four waves of 1 ms; the rest is the scheduler's own steps (steals, wake-ups) at their costs.
    CHECK(makespan >= 4000000);
    CHECK(makespan < 4000000 + 200000);
    // Deterministic: the same program on a fresh scheduler gives the same span.
    pipescope::scheduler again({.workers = 16, .virtual_time = true, .measure_jobs = false});
    const auto span2 = run_tasks(again, 64, 1000000);
    CHECK(span2.end_ns - span2.begin_ns == makespan);
    // One virtual worker runs them one after the other.
    pipescope::scheduler one({.workers = 1, .virtual_time = true, .measure_jobs = false});
    const auto serial = run_tasks(one, 64, 1000000);
    CHECK(serial.end_ns - serial.begin_ns == 64000000);
}

TEST_CASE("virtual workers need a worker count", "[virtual]") {
    CHECK_THROWS_WITH(pipescope::scheduler({.workers = 0, .virtual_time = true}),
                      Catch::Contains("virtual workers need a worker count"));
}
