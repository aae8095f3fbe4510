#include <pipescope/pipescope.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

long fib(pipescope::scheduler& s, int n) {
    if (n < 2) return n;
    long a = 0;
    pipescope::task_group g(s);
    g.spawn([&] { a = fib(s, n - 1); });
    const long b = fib(s, n - 2);
    g.sync();
    return a + b;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

}   // namespace

TEST_CASE("task_group: recursive fork-join computes fib exactly", "[task_group]") {
    for (unsigned p : {1u, 2u, 4u}) {
        pipescope::scheduler s({p});
        CAPTURE(p);
        CHECK(fib(s, 20) == fib_serial(20));
        // Spawned from a worker too: run the whole recursion inside a task.
        long r = 0;
        pipescope::task_group outer(s);
        outer.spawn([&] { r = fib(s, 18); });
        outer.sync();
        CHECK(r == fib_serial(18));
    }
}

TEST_CASE("task_group: many tasks from several outside threads all run once", "[task_group]") {
    pipescope::scheduler s({2});
    std::atomic<long> sum{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 3; ++t)
        callers.emplace_back([&, t] {
            pipescope::task_group g(s);
            for (int i = 1; i <= 2000; ++i) g.spawn([&sum, i, t] { sum.fetch_add(i * (t + 1)); });
            g.sync();
        });
    for (auto& c : callers) c.join();
    CHECK(sum.load() == 2000L * 2001 / 2 * (1 + 2 + 3));
}

TEST_CASE("task_group: an exception in a task is rethrown at sync, after all tasks ran", "[task_group][errors]") {
    pipescope::scheduler s({2});
    std::atomic<int> ran{0};
    pipescope::task_group g(s);
    for (int i = 0; i < 100; ++i)
        g.spawn([&ran, i] {
            ran.fetch_add(1);
            if (i == 37) throw std::runtime_error("task 37 failed");
        });
    CHECK_THROWS_WITH(g.sync(), "task 37 failed");
    CHECK(ran.load() == 100);
    // The group is reusable and the exception is not reported twice.
    g.spawn([&ran] { ran.fetch_add(1); });
    CHECK_NOTHROW(g.sync());
    CHECK(ran.load() == 101);
}

TEST_CASE("scheduler: idle workers park, and wake when work arrives", "[scheduler]") {
    pipescope::scheduler s({2});
    auto parks = [&] {
        std::uint64_t n = 0;
        for (unsigned w = 0; w < s.workers(); ++w) n += s.counters(w).parks;
        return n;
    };
    // Both workers have nothing to do; wait (up to 10 s, normally microseconds) until they park.
    for (int i = 0; i < 1000 && parks() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(parks() >= 2);
    CHECK(fib(s, 15) == fib_serial(15));   // parked workers came back
}
