// What pipe_while does with bad programs and failing stages.
#include "support/invariant_observer.hpp"
#include "support/random_pipeline.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace pipescope;
using namespace pipescope::testing;

TEST_CASE("pipe_while: an exception in a stage stops the loop and reaches the caller", "[pipeline][errors]") {
    scheduler s({2});
    for (unsigned throw_at : {0u, 1u, 5u, 40u}) {
        for (unsigned stage : {0u, 1u, 2u}) {
            for (const char* policy : {"piper", "serial"}) {
                CAPTURE(throw_at, stage, policy);
                const unsigned k = 4;
                invariant_observer observer(1000, k);
                pipeline_options o;
                o.policy = policy;
                o.throttle = k;
                o.observer = &observer;
                unsigned next = 0;
                auto run = [&] {
                    pipe_while(
                        s, [&] { return next < 1000; },
                        [&](iteration& it) -> pipe_task {
                            const unsigned i = next++;
                            if (stage == 0 && i == throw_at) throw std::runtime_error("stage 0 failed");
                            co_await it.stage(1);
                            busy_work(i, 200);
                            if (stage == 1 && i == throw_at) throw std::runtime_error("stage 1 failed");
                            co_await it.stage_wait(2);
                            if (stage == 2 && i == throw_at) throw std::runtime_error("stage 2 failed");
                        },
                        o);
                };
                std::string expected = "stage ";   // built in steps: GCC 12 warns on "lit" + to_string()
                expected += std::to_string(stage);
                expected += " failed";
                CHECK_THROWS_WITH(run(), expected);
                // Nothing new started once the failing iteration was in flight (it occupies one of
                // the K slots until it retires), and every started iteration retired.
                CHECK(observer.started() <= throw_at + k);
                CHECK(observer.retired() == observer.started());
                CHECK(observer.violations() == 0);
            }
        }
    }
    // The scheduler is quiet and usable afterwards.
    unsigned next = 0;
    auto st = pipe_while(
        s, [&] { return next++ < 100; }, [](iteration& it) -> pipe_task { co_await it.stage(1); });
    CHECK(st.iterations == 100);
}

TEST_CASE("pipe_while: an exception in the loop condition is rethrown", "[pipeline][errors]") {
    scheduler s({2});
    unsigned calls = 0;
    auto run = [&] {
        pipe_while(
            s,
            [&] {
                if (++calls == 10) throw std::logic_error("condition failed");
                return true;
            },
            [](iteration& it) -> pipe_task { co_await it.stage_wait(1); });
    };
    CHECK_THROWS_WITH(run(), "condition failed");
}

TEST_CASE("pipe_while: an exception from nested fork-join inside a stage propagates", "[pipeline][errors]") {
    scheduler s({2});
    unsigned next = 0;
    auto run = [&] {
        pipe_while(
            s, [&] { return next < 50; },
            [&](iteration& it) -> pipe_task {
                const unsigned i = next++;
                co_await it.stage(1);
                task_group g(s);
                g.spawn([i] {
                    if (i == 20) throw std::out_of_range("nested task failed");
                });
                g.sync();
            });
    };
    CHECK_THROWS_WITH(run(), "nested task failed");
}

TEST_CASE("pipe_while: stage numbers must strictly increase", "[pipeline][errors]") {
    scheduler s({2});
    for (const char* policy : {"piper", "serial"}) {
        unsigned next = 0;
        pipeline_options o;
        o.policy = policy;
        auto run = [&] {
            pipe_while(
                s, [&] { return next < 10; },
                [&](iteration& it) -> pipe_task {
                    ++next;
                    co_await it.stage(3);
                    co_await it.stage_wait(2);
                },
                o);
        };
        CAPTURE(policy);
        CHECK_THROWS_WITH(run(),
                          Catch::Contains("went from stage 3 to stage 2") && Catch::Contains("must strictly increase"));
    }
}

TEST_CASE("pipe_while: bad options are refused with a message naming them", "[pipeline][errors]") {
    scheduler s({1});
    pipeline_options o;
    o.policy = "fifo";
    auto body = [](iteration&) -> pipe_task { co_return; };
    CHECK_THROWS_WITH(pipe_while(
                          s, [] { return false; }, body, o),
                      Catch::Contains("unknown policy 'fifo' (known: "));
    // The message lists every policy the registry knows (policy_registry.hpp).
    for (const auto& p : pipeline_policies())
        CHECK_THROWS_WITH(pipe_while(
                              s, [] { return false; }, body, o),
                          Catch::Contains(p.name));
    CHECK_THROWS_WITH(pipe_while(s, {}, body), Catch::Contains("condition is empty"));
}
