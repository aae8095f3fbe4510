// How a loop stops early, under every policy: cancellation from outside (pipeline_options::cancel)
// and an exception in a stage — the caller gets control back with every thread quiet, and the
// trace is valid and says what happened and where.
#include "support/invariant_observer.hpp"
#include "support/random_pipeline.hpp"
#include "support/test_traces.hpp"

#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <thread>

using namespace pipescope;
using namespace pipescope::testing;

namespace {

// An endless three-stage loop (serial, parallel, serial in order), declared for construct-and-run.
pipeline_options options_for(const pipeline_policy_info& p, std::stop_token cancel = {}) {
    pipeline_options o;
    o.policy = p.name;
    o.throttle = 4;
    o.cancel = std::move(cancel);
    if (p.needs_declared_stages)
        o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order};
    return o;
}

struct endless_loop {
    std::atomic<std::uint64_t> passed{0};   // iterations that reached stage 2
    std::uint64_t next = 0;
    // `on_stage2(i)` runs in stage 2 of iteration i (serial, in order).
    template <class F>
    pipeline_stats run(scheduler& s, const pipeline_options& o, F on_stage2) {
        return pipe_while(
            s, [] { return true; },
            [this, on_stage2](iteration& it) -> pipe_task {
                const std::uint64_t i = next++;
                co_await it.stage(1);
                busy_work(i, 300);
                co_await it.stage_wait(2);
                passed.fetch_add(1, std::memory_order_relaxed);
                on_stage2(i);
            },
            o);
    }
};

// The instants of a model named `name`, as (iteration, stage) pairs from their annotations.
std::vector<std::pair<std::uint64_t, std::uint64_t>> instants_named(const trace::trace_model& m, const std::string& name) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (const auto& t : m.tracks)
        for (const auto& in : t.instants) {
            if (m.str(in.name) != name) continue;
            std::uint64_t i = ~0ull, j = ~0ull;
            for (std::uint32_t a = in.args_first; a < in.args_first + in.args_count; ++a) {
                if (m.str(m.args[a].name) == "iteration") i = m.args[a].bits();
                if (m.str(m.args[a].name) == "stage") j = m.args[a].bits();
            }
            out.emplace_back(i, j);
        }
    return out;
}

// Records `run` on a fresh recorder and returns the trace model of what was written.
template <class F>
trace::trace_model record(scheduler& s, const std::string& name, F run) {
    trace::recorder rec(s.workers(), 32u << 20);
    s.attach_recorder(&rec);
    rec.restart_clock();
    run();
    s.attach_recorder(nullptr);
    std::ostringstream bytes;
    {
        trace::perfetto_writer out(bytes);
        out.begin_run({name, s.workers(), R"({"program":{"kind":"pipeline"}})", {}},
                      trace::run_clock::calibrating(rec.start_clock()));
        rec.flush(out.sink());
        out.end_run();
        out.finish();
    }
    save_for_checks(name + ".pftrace", bytes.str());
    return trace::load_trace(bytes.str());
}

}   // namespace

TEST_CASE("cancel: a stop requested from another thread ends an endless loop under every policy",
          "[pipeline][errors][cancel]") {
    scheduler s({2});
    for (const auto& p : pipeline_policies()) {
        INFO("policy " << p.name);
        std::stop_source stop;
        endless_loop loop;
        std::thread canceller([&] {
            while (loop.passed.load(std::memory_order_relaxed) < 50) std::this_thread::yield();
            stop.request_stop();
        });
        const pipeline_stats st = loop.run(s, options_for(p, stop.get_token()), [](std::uint64_t) {});
        canceller.join();
        CHECK(st.cancelled);
        CHECK(loop.passed.load() >= 50);
        CHECK(st.iterations >= loop.passed.load());   // every iteration that passed stage 2 retired
    }
    // The scheduler is quiet and usable afterwards.
    unsigned next = 0;
    CHECK(pipe_while(
              s, [&] { return next++ < 100; }, [](iteration& it) -> pipe_task { co_await it.stage(1); })
              .iterations == 100);
}

TEST_CASE("cancel: a stop requested before the loop starts runs nothing, a token never stopped changes nothing",
          "[pipeline][errors][cancel]") {
    scheduler s({2});
    for (const auto& p : pipeline_policies()) {
        INFO("policy " << p.name);
        std::stop_source stop;
        stop.request_stop();
        endless_loop loop;
        const pipeline_stats st = loop.run(s, options_for(p, stop.get_token()), [](std::uint64_t) {});
        CHECK(st.cancelled);
        CHECK(st.iterations == 0);
        CHECK(loop.passed.load() == 0);

        std::stop_source unused;
        unsigned next = 0;
        std::uint64_t chain = 0;
        const pipeline_stats all = pipe_while(
            s, [&] { return next < 200; },
            [&](iteration& it) -> pipe_task {
                const unsigned i = next++;
                co_await it.stage(1);
                co_await it.stage_wait(2);
                chain = mix(chain, i);
            },
            options_for(p, unused.get_token()));
        CHECK(!all.cancelled);
        CHECK(all.iterations == 200);
        std::uint64_t want = 0;
        for (unsigned i = 0; i < 200; ++i) want = mix(want, i);
        CHECK(chain == want);
    }
}

// The fast path of a boundary reads no engine state (iteration::slow_): the stop reaches a running
// iteration through its own flags. One iteration that never suspends — a long chain of stage()
// boundaries — cancels its own loop at stage 100; the request runs the engine's cancel() before it
// returns, so boundary 101 must already unwind the iteration. Without the flag it would run all of
// its stages (and the test would see them).
TEST_CASE("cancel: an iteration that never suspends unwinds at its very next boundary", "[pipeline][errors][cancel]") {
    for (unsigned p : {1u, 2u}) {
        scheduler s({p});
        for (const auto& policy : pipeline_policies()) {
            if (policy.needs_declared_stages) continue;   // on the fly: any number of stages
            INFO("policy " << policy.name << " P=" << p);
            std::stop_source stop;
            pipeline_options o;
            o.policy = policy.name;
            o.cancel = stop.get_token();
            std::uint64_t ran_after = 0, last = 0;
            unsigned next = 0;
            const pipeline_stats st = pipe_while(
                s, [&] { return next < 1; },
                [&](iteration& it) -> pipe_task {
                    ++next;
                    for (std::uint64_t j = 1; j <= 100000; ++j) {
                        co_await it.stage(j);
                        last = j;
                        if (stop.stop_requested()) ++ran_after;
                        if (j == 100) stop.request_stop();
                    }
                },
                o);
            CHECK(st.cancelled);
            CHECK(last == 100);
            CHECK(ran_after == 0);   // no stage ran after the one that asked
        }
    }
}

TEST_CASE("cancel: a stage may cancel its own loop, the trace marks where the loop saw it",
          "[pipeline][errors][cancel][trace-file]") {
    scheduler s({2});
    for (const auto& p : pipeline_policies()) {
        if (p.name == "serial") continue;   // no workers: nothing is recorded
        INFO("policy " << p.name);
        std::stop_source stop;
        endless_loop loop;
        pipeline_stats st;
        const trace::trace_model m = record(s, "cancel-" + p.name, [&] {
            st = loop.run(s, options_for(p, stop.get_token()), [&](std::uint64_t i) {
                if (i == 30) stop.request_stop();
            });
        });
        CHECK(st.cancelled);
        CHECK(st.iterations >= 31);   // iterations 0..30 had passed stage 2 when it stopped
        for (const auto& problem : m.problems) FAIL_CHECK(problem);
        CHECK(m.unmatched_ends == 0);
        CHECK(instants_named(m, "cancelled").size() == 1);
        CHECK(instants_named(m, "exception in a stage").empty());
    }
}

TEST_CASE("errors: an exception in a stage under every policy reaches the caller and is marked in the trace",
          "[pipeline][errors][trace-file]") {
    scheduler s({2});
    for (const auto& p : pipeline_policies()) {
        if (p.name == "serial") continue;
        INFO("policy " << p.name);
        endless_loop loop;
        std::optional<std::string> what;
        const trace::trace_model m = record(s, "exception-" + p.name, [&] {
            try {
                loop.run(s, options_for(p), [](std::uint64_t i) {
                    if (i == 25) throw std::runtime_error("stage 2 of iteration 25 failed");
                });
            } catch (const std::runtime_error& e) {
                what = e.what();
            }
        });
        REQUIRE(what);
        CHECK(*what == "stage 2 of iteration 25 failed");
        for (const auto& problem : m.problems) FAIL_CHECK(problem);
        CHECK(m.unmatched_ends == 0);
        const auto marks = instants_named(m, "exception in a stage");
        REQUIRE(marks.size() == 1);
        CHECK(marks[0] == std::pair<std::uint64_t, std::uint64_t>{25, 2});
        CHECK(instants_named(m, "cancelled").empty());
    }
}
