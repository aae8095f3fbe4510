// A stage that blocks for a long time (I/O, a lock, a sleep), under every policy: the loop still
// gives exactly the serial result, and the workers with nothing to do go to sleep (park) instead of
// spinning for the whole time — the runtime's parking, not a timing assertion: with one iteration
// held for 300 ms and at most K = 4 in flight, every other worker runs out of work long before.
#include "support/random_pipeline.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace pipescope;
using namespace pipescope::testing;

namespace {

std::uint64_t parks(const scheduler& s) {
    std::uint64_t n = 0;
    for (unsigned w = 0; w < s.workers(); ++w) n += s.counters(w).parks;
    return n;
}

}   // namespace

TEST_CASE("blocking: a stage that blocks for 300 ms, the result is exact and idle workers park", "[pipeline][blocking]") {
    scheduler s({2});
    for (const auto& p : pipeline_policies()) {
        INFO("policy " << p.name);
        pipeline_options o;
        o.policy = p.name;
        o.throttle = 4;
        if (p.needs_declared_stages)
            o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order};
        const std::uint64_t parks_before = parks(s);
        unsigned next = 0;
        std::uint64_t chain = 0;
        const pipeline_stats st = pipe_while(
            s, [&] { return next < 40; },
            [&](iteration& it) -> pipe_task {
                const unsigned i = next++;
                co_await it.stage(1);
                if (i == 5) std::this_thread::sleep_for(std::chrono::milliseconds(300));
                const std::uint64_t v = busy_work(i, 200);
                co_await it.stage_wait(2);
                chain = mix(chain, v);
            },
            o);
        std::uint64_t want = 0;
        for (unsigned i = 0; i < 40; ++i) want = mix(want, busy_work(i, 200));
        CHECK(st.iterations == 40);
        CHECK(chain == want);
        // Policies that run on the workers (not serial, which runs on the caller; not bind-to-stage,
        // whose own threads block on their queues and leave the workers parked from the start).
        if (p.name != "serial" && p.name != "bind-to-stage") CHECK(parks(s) > parks_before);
    }
}
