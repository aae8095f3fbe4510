// Serial equivalence and invariants of pipe_while over hundreds of random programs.
#include "support/invariant_observer.hpp"
#include "support/random_pipeline.hpp"
#include "support/test_scale.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <memory>

using namespace pipescope;
using namespace pipescope::testing;

namespace {

scheduler& pool(unsigned p) {
    static std::map<unsigned, std::unique_ptr<scheduler>> pools;
    auto& s = pools[p];
    if (!s) s = std::make_unique<scheduler>(scheduler_options{p});
    return *s;
}

struct configuration {
    unsigned workers;
    pipeline_options options;
    std::string describe() const {
        return "P=" + std::to_string(workers) + " K=" + std::to_string(options.throttle) +
               " lazy=" + (options.lazy_enabling ? "on" : "off") + " folding=" + (options.dependency_folding ? "on" : "off");
    }
};

configuration pick_configuration(std::uint64_t seed) {
    rng r{seed ^ 0xC0FFEE};
    static const unsigned workers[] = {1, 2, 3, 4};
    static const unsigned throttles[] = {1, 2, 3, 5, 16, 0};
    configuration c{workers[r.below(4)], {}};
    c.options.throttle = throttles[r.below(6)];
    c.options.lazy_enabling = r.below(2) == 0;
    c.options.dependency_folding = r.below(2) == 0;
    return c;
}

}   // namespace

TEST_CASE("pipe_while: random programs give exactly the serial result, with every invariant held", "[pipeline][random]") {
    const int cases = scaled(300, 40);
    for (int c = 0; c < cases; ++c) {
        const std::uint64_t seed = static_cast<std::uint64_t>(c);
        const random_program program = random_program::make(seed);
        configuration config = pick_configuration(seed);
        INFO(program.describe() << " · " << config.describe() << "  (rerun: this seed)");

        pipeline_options serial;
        serial.policy = "serial";
        const program_state expected = run_program(pool(1), program, serial);

        scheduler& s = pool(config.workers);
        const unsigned k = config.options.throttle ? config.options.throttle : 4 * s.workers();
        invariant_observer observer(program.iterations, k);
        config.options.observer = &observer;
        pipeline_stats stats;
        const program_state got = run_program(s, program, config.options, &stats);

        INFO(observer.first_violation());
        REQUIRE(observer.violations() == 0);
        REQUIRE(got.stage0_chain == expected.stage0_chain);
        REQUIRE(got.chain == expected.chain);
        REQUIRE(got.results == expected.results);
        REQUIRE(stats.iterations == program.iterations);
        REQUIRE(observer.started() == program.iterations);
        REQUIRE(observer.retired() == program.iterations);
        REQUIRE(stats.peak_live <= k);
        REQUIRE(stats.throttle == k);
    }
}

TEST_CASE("pipe_while: the serial policy is the serial elision", "[pipeline]") {
    // The same program, written as a plain loop, gives the same state as policy=serial.
    const random_program program = random_program::make(12345, false);
    pipeline_options serial;
    serial.policy = "serial";
    invariant_observer observer(program.iterations, 1);
    serial.observer = &observer;
    const program_state a = run_program(pool(1), program, serial);
    serial.observer = nullptr;
    const program_state b = run_program(pool(1), program, serial);
    CHECK(a == b);
    INFO(observer.first_violation());
    CHECK(observer.violations() == 0);
    CHECK(observer.peak_live() == 1);
}

TEST_CASE("pipe_while: throttling keeps at most K iterations in flight even when stages are long", "[pipeline]") {
    scheduler& s = pool(4);
    for (unsigned k : {1u, 2u, 7u}) {
        invariant_observer observer(200, k);
        pipeline_options o;
        o.throttle = k;
        o.observer = &observer;
        unsigned next = 0;
        std::vector<std::uint64_t> out(200);
        auto st = pipe_while(
            s, [&] { return next < 200; },
            [&](iteration& it) -> pipe_task {
                const unsigned i = next++;
                co_await it.stage(1);
                out[i] = busy_work(i, 2000);
            },
            o);
        CAPTURE(k);
        CHECK(observer.violations() == 0);
        CHECK(st.peak_live <= k);
        CHECK(st.iterations == 200);
        for (unsigned i = 0; i < 200; ++i) REQUIRE(out[i] == busy_work(i, 2000));
    }
}

TEST_CASE("pipe_while: a loop with no iterations, and iterations that are only stage 0", "[pipeline]") {
    scheduler& s = pool(2);
    auto st = pipe_while(
        s, [] { return false; }, [](iteration&) -> pipe_task { co_return; });
    CHECK(st.iterations == 0);
    unsigned next = 0;
    std::vector<unsigned> order;
    st = pipe_while(
        s, [&] { return next < 1000; },
        [&](iteration&) -> pipe_task {
            order.push_back(next++);
            co_return;
        });
    CHECK(st.iterations == 1000);
    REQUIRE(order.size() == 1000);
    for (unsigned i = 0; i < 1000; ++i) REQUIRE(order[i] == i);
}

TEST_CASE("pipe_while: nested pipelines inside a pipeline stage", "[pipeline]") {
    scheduler& s = pool(2);
    unsigned next = 0;
    std::vector<std::uint64_t> got(30), want(30);
    pipeline_options serial;
    serial.policy = "serial";
    for (unsigned i = 0; i < 30; ++i) want[i] = nested_pipeline(s, i, serial);
    pipe_while(
        s, [&] { return next < 30; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            co_await it.stage(1);
            got[i] = nested_pipeline(s, i, {});
        });
    CHECK(got == want);
}
