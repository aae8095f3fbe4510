// A pipeline with costs declared in virtual time, for the tests of virtual workers and virtual cores
// (test_virtual_pipeline.cpp, test_virtual_threads.cpp, test_sharing_costs.cpp), and the threads that
// drive a virtual_executor directly.
#pragma once

#include <pipescope/pipescope.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>
#include <vector>

namespace pipescope::testing {

// n iterations: serial stage 0 (10 µs), stage 1 (1 ms), serial stage 2 (10 µs), costs declared in
// virtual time, under `o` (its policy, and the stages a construct-and-run policy is told). Returns
// the virtual makespan; checks the in-order sum.
inline std::uint64_t three_stage_loop(scheduler& s, const pipeline_options& o, std::uint64_t n = 256) {
    std::uint64_t next = 0, sum = 0, order_violations = 0, last = 0;
    std::vector<std::uint64_t> squares(n);
    pipe_while(
        s, [&] { return next < n; },
        [&](iteration& it) -> pipe_task {
            const std::uint64_t i = next++;
            virtual_work(10000);
            co_await it.stage(1);
            squares[i] = i * i;
            virtual_work(1000000);
            co_await it.stage_wait(2);
            if (i > 0 && last != i - 1) ++order_violations;
            last = i;
            sum += squares[i];
            virtual_work(10000);
        },
        o);
    std::uint64_t want = 0;
    for (std::uint64_t i = 0; i < n; ++i) want += i * i;
    CHECK(sum == want);
    CHECK(order_violations == 0);
    const auto span = s.last_virtual_span();
    return span.end_ns - span.begin_ns;
}

// Runs `body(i, ex)` on one thread per slot of a virtual_executor `ex`, each entering and leaving it.
template <class Executor, class Body>
void run_threads(Executor& ex, Body body) {
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < ex.size(); ++i)
        threads.emplace_back([&, i] {
            ex.enter(i);
            body(i, ex);
            ex.leave(i);
        });
    for (auto& t : threads) t.join();
}

}   // namespace pipescope::testing
