// The `tbb` policy (seed 000 §2.3, Fig. 5; seed 001 §10): construct-and-run filters with tokens.
//  - random programs with declared stages give exactly the serial result at P = 1, 2, 3, with the
//    policy's invariants checked on every run (an observer): at most N items in flight, stage 0 and
//    serial_in_order filters run one item at a time in increasing order, serial_out_of_order
//    filters one item at a time, items retire in order;
//  - the refusals: no declared stages (with the reason), stage 0 not serial_in_order, too many
//    tokens, and a stage beyond the declaration (naming the iteration and the stage);
//  - the trace: tokens in flight never above N in any record, items parked in and taken from a
//    serial filter's buffer, the Perfetto file reading back with its counter tracks.
#include "support/violation_log.hpp"
#include "support/random_pipeline.hpp"
#include "support/test_scale.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include "support/test_traces.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

using namespace pipescope;
using namespace pipescope::testing;
using trace::event_kind;
using trace::event_record;

namespace {

scheduler& pool(unsigned p) {
    static std::map<unsigned, std::unique_ptr<scheduler>> pools;
    auto& s = pools[p];
    if (!s) s = std::make_unique<scheduler>(scheduler_options{p});
    return *s;
}

// Checks the filter semantics of every node the runtime reports.
class tbb_observer final : public pipeline_observer {
public:
    tbb_observer(std::vector<stage_kind> kinds, unsigned tokens)
        : kinds_(std::move(kinds)),
          tokens_(tokens),
          inside_(kinds_.size()),
          last_begun_(kinds_.size()),
          peak_inside_(kinds_.size()) {
        for (auto& l : last_begun_) l.store(-1);
    }

    void on_iteration_start(std::uint64_t i, int) override {
        const std::uint64_t live = started_.fetch_add(1) + 1 - retired_.load();
        std::uint64_t peak = peak_live_.load();
        while (live > peak && !peak_live_.compare_exchange_weak(peak, live)) {
        }
        if (live > tokens_)
            fail("item " + std::to_string(i) + " starts with " + std::to_string(live) +
                 " tokens in flight, N = " + std::to_string(tokens_));
    }
    void on_node_begin(std::uint64_t i, std::uint64_t stage, bool, int) override {
        if (stage >= kinds_.size())
            return fail("node (" + std::to_string(i) + ", " + std::to_string(stage) + ") undeclared");
        if (kinds_[stage] == stage_kind::parallel) return;
        const int in = inside_[stage].fetch_add(1) + 1;
        int peak = peak_inside_[stage].load();
        while (in > peak && !peak_inside_[stage].compare_exchange_weak(peak, in)) {
        }
        if (in > 1) fail("serial stage " + std::to_string(stage) + " runs " + std::to_string(in) + " items at once");
        if (kinds_[stage] == stage_kind::serial_in_order) {
            const std::int64_t before = last_begun_[stage].exchange(static_cast<std::int64_t>(i));
            if (before >= static_cast<std::int64_t>(i))
                fail("serial_in_order stage " + std::to_string(stage) + " runs item " + std::to_string(i) + " after item " +
                     std::to_string(before));
        }
    }
    void on_node_end(std::uint64_t, std::uint64_t stage, std::uint64_t, int) override {
        if (stage < kinds_.size() && kinds_[stage] != stage_kind::parallel) inside_[stage].fetch_sub(1);
    }
    void on_iteration_retire(std::uint64_t i, int) override {
        if (i != retired_.load())
            fail("item " + std::to_string(i) + " retires while " + std::to_string(retired_.load()) + " is the oldest");
        retired_.fetch_add(1);
    }

    std::uint64_t violations() const { return log_.violations(); }
    std::string first_violation() const { return log_.first_violation(); }
    std::uint64_t started() const { return started_.load(); }
    std::uint64_t retired() const { return retired_.load(); }
    std::uint64_t peak_live() const { return peak_live_.load(); }
    int peak_inside(std::size_t stage) const { return peak_inside_[stage].load(); }

private:
    void fail(const std::string& what) { log_.fail(what); }

    std::vector<stage_kind> kinds_;
    unsigned tokens_;
    std::vector<std::atomic<int>> inside_;
    std::vector<std::atomic<std::int64_t>> last_begun_;
    std::vector<std::atomic<int>> peak_inside_;
    std::atomic<std::uint64_t> started_{0}, retired_{0}, peak_live_{0};
    pipescope::testing::violation_log log_;
};

// The declaration of a random program: its ordered stages (the ones whose order the result depends
// on) must be serial_in_order; every other stage gets any kind, whatever the body says (stage or
// stage_wait), since the policy ignores the body's choice.
std::vector<stage_kind> declare(const random_program& p, std::uint64_t salt) {
    rng r{p.seed ^ salt};
    std::vector<stage_kind> kinds(p.max_stage + 1, stage_kind::parallel);
    kinds[0] = stage_kind::serial_in_order;
    for (unsigned s = 1; s <= p.max_stage; ++s) {
        if (p.ordered[s]) kinds[s] = stage_kind::serial_in_order;
        else kinds[s] = static_cast<stage_kind>(r.below(3));
    }
    return kinds;
}

std::string describe(const std::vector<stage_kind>& kinds) {
    std::string out;
    for (stage_kind k : kinds)
        out += k == stage_kind::serial_in_order ? 'I' : k == stage_kind::serial_out_of_order ? 'O' : 'P';
    return out;
}

pipeline_options tbb_options(std::vector<stage_kind> kinds, unsigned tokens = 0) {
    pipeline_options o;
    o.policy = "tbb";
    o.throttle = tokens;
    o.declared_stages = std::move(kinds);
    return o;
}

}   // namespace

TEST_CASE("tbb: random programs with declared stages give exactly the serial result at P = 1, 2, 3",
          "[pipeline][tbb][random]") {
    const int cases = scaled(240, 30);
    static const unsigned throttles[] = {1, 2, 3, 5, 0};
    for (int c = 0; c < cases; ++c) {
        const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(c);
        const random_program program = random_program::make(seed);
        const unsigned workers = 1 + static_cast<unsigned>(c % 3);
        rng r{seed ^ 0x7BB};
        pipeline_options options = tbb_options(declare(program, 0x5EED), throttles[r.below(5)]);
        scheduler& s = pool(workers);
        const unsigned n = effective_throttle(options, s.workers());
        INFO(program.describe() << " · P=" << workers << " N=" << n << " stages " << describe(options.declared_stages));

        pipeline_options serial;
        serial.policy = "serial";
        const program_state expected = run_program(pool(1), program, serial);

        tbb_observer observer(options.declared_stages, n);
        options.observer = &observer;
        pipeline_stats stats;
        const program_state got = run_program(s, program, options, &stats);

        INFO(observer.first_violation());
        REQUIRE(observer.violations() == 0);
        REQUIRE(got.stage0_chain == expected.stage0_chain);
        REQUIRE(got.chain == expected.chain);
        REQUIRE(got.results == expected.results);
        REQUIRE(stats.iterations == program.iterations);
        REQUIRE(observer.started() == program.iterations);
        REQUIRE(observer.retired() == program.iterations);
        REQUIRE(stats.peak_live <= n);
        REQUIRE(observer.peak_live() <= n);
        REQUIRE(stats.throttle == n);
    }
}

TEST_CASE("tbb: the same body runs under the declared kinds, whatever it says at its boundaries", "[pipeline][tbb]") {
    // The body says stage() (no wait) everywhere; the declaration makes stage 2 serial in order, so
    // the order-dependent fold still equals the serial loop's.
    for (unsigned p : {1u, 2u, 3u}) {
        for (unsigned tokens : {1u, 4u, 0u}) {
            CAPTURE(p, tokens);
            pipeline_options o =
                tbb_options({stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order}, tokens);
            tbb_observer observer(o.declared_stages, effective_throttle(o, p));
            o.observer = &observer;
            unsigned next = 0;
            std::uint64_t chain = 0, want = 0;
            std::vector<std::uint64_t> value(400);
            pipe_while(
                pool(p), [&] { return next < 400; },
                [&](iteration& it) -> pipe_task {
                    const unsigned i = next++;
                    co_await it.stage(1);
                    value[i] = busy_work(i, 50 + 400 * (i % 7 == 0));
                    co_await it.stage(2);
                    chain = mix(chain, value[i]);
                },
                o);
            for (unsigned i = 0; i < 400; ++i) want = mix(want, busy_work(i, 50 + 400 * (i % 7 == 0)));
            INFO(observer.first_violation());
            CHECK(observer.violations() == 0);
            CHECK(chain == want);
        }
    }
}

TEST_CASE("tbb: a serial_out_of_order stage never runs two items at once", "[pipeline][tbb]") {
    const std::vector<stage_kind> kinds = {stage_kind::serial_in_order, stage_kind::parallel,
                                           stage_kind::serial_out_of_order, stage_kind::parallel};
    for (unsigned p : {2u, 3u}) {
        CAPTURE(p);
        pipeline_options o = tbb_options(kinds, 3 * p);
        tbb_observer observer(kinds, 3 * p);
        o.observer = &observer;
        std::atomic<int> inside{0};
        std::atomic<int> overlaps{0};
        std::uint64_t unguarded = 0;   // a data race (TSan) if two items ever were inside together
        std::atomic<unsigned> entered{0};
        unsigned next = 0;
        const auto st = pipe_while(
            pool(p), [&] { return next < 300; },
            [&](iteration& it) -> pipe_task {
                const unsigned i = next++;
                co_await it.stage(1);
                std::uint64_t v = busy_work(i, 100 + 300 * (i % 5));
                co_await it.stage_wait(2);   // the wait is ignored: the stage is serial out of order
                if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
                unguarded = mix(unguarded, busy_work(v, 200));
                entered.fetch_add(1);
                inside.fetch_sub(1);
                co_await it.stage(3);
                (void)busy_work(v, 100);
            },
            o);
        INFO(observer.first_violation());
        CHECK(observer.violations() == 0);
        CHECK(overlaps.load() == 0);
        CHECK(entered.load() == 300);
        CHECK(observer.peak_inside(2) == 1);
        CHECK(st.iterations == 300);
        CHECK(st.peak_live <= 3 * p);
    }
}

TEST_CASE("tbb: a loop without declared stages is refused, with the reason", "[pipeline][tbb]") {
    pipeline_options o;
    o.policy = "tbb";
    unsigned next = 0;
    auto body = [&](iteration& it) -> pipe_task {
        ++next;
        co_await it.stage_wait(1);
    };
    REQUIRE_THROWS_AS(pipe_while(
                          pool(2), [&] { return next < 5; }, body, o),
                      std::invalid_argument);
    REQUIRE_THROWS_WITH(pipe_while(
                            pool(2), [&] { return next < 5; }, body, o),
                        Catch::Contains("construct-and-run") && Catch::Contains("declared_stages") &&
                            Catch::Contains("on the fly"));
    CHECK(next == 0);   // refused before the first item

    // pipe-fib decides its stages on the fly: it cannot run under tbb.
    REQUIRE_THROWS_WITH(workloads::pipe_fib_pipeline(pool(2), 100, 8, o), Catch::Contains("construct-and-run"));

    o.declared_stages = {stage_kind::parallel, stage_kind::serial_in_order};
    REQUIRE_THROWS_WITH(pipe_while(
                            pool(2), [&] { return next < 5; }, body, o),
                        Catch::Contains("declared_stages[0] must be serial_in_order"));
    o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel};
    o.throttle = 100000;
    REQUIRE_THROWS_WITH(pipe_while(
                            pool(2), [&] { return next < 5; }, body, o),
                        Catch::Contains("throttle N = 100000"));
    CHECK(next == 0);
    o.throttle = 0;
    CHECK(pipe_while(
              pool(2), [&] { return next < 5; }, body, o)
              .iterations == 5);   // declared: runs
}

TEST_CASE("tbb: entering a stage beyond the declared ones is an error naming the iteration and the stage",
          "[pipeline][tbb]") {
    for (unsigned p : {1u, 2u, 3u}) {
        CAPTURE(p);
        pipeline_options o =
            tbb_options({stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order}, 4);
        unsigned next = 0;
        std::atomic<unsigned> finished{0};
        REQUIRE_THROWS_WITH(pipe_while(
                                pool(p), [&] { return next < 50; },
                                [&](iteration& it) -> pipe_task {
                                    const unsigned i = next++;
                                    co_await it.stage(1);
                                    co_await it.stage_wait(i == 17 ? 4 : 2);
                                    finished.fetch_add(1);
                                },
                                o),
                            Catch::Contains("iteration 17 entered stage 4") && Catch::Contains("0..2"));
        CHECK(finished.load() < 50);
        // The pool is quiet and usable afterwards.
        o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel};
        next = 0;
        CHECK(pipe_while(
                  pool(p), [&] { return next < 20; },
                  [&](iteration& it) -> pipe_task {
                      ++next;
                      co_await it.stage(1);
                  },
                  o)
                  .iterations == 20);
    }
}

TEST_CASE("tbb: an exception in a filter reaches the caller after every item has drained", "[pipeline][tbb]") {
    pipeline_options o = tbb_options({stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_out_of_order,
                                      stage_kind::serial_in_order},
                                     3);
    unsigned next = 0;
    REQUIRE_THROWS_WITH(pipe_while(
                            pool(3), [&] { return next < 200; },
                            [&](iteration& it) -> pipe_task {
                                const unsigned i = next++;
                                co_await it.stage(1);
                                (void)busy_work(i, 200);
                                co_await it.stage(2);
                                if (i == 40) throw std::runtime_error("boom in item 40");
                                co_await it.stage(3);
                            },
                            o),
                        Catch::Contains("boom in item 40"));
}

// ---------------------------------------------------------------------------------------------
// The trace

TEST_CASE("tbb: tokens in flight never exceed N in the trace, items park in serial-filter buffers",
          "[pipeline][tbb][trace][trace-file]") {
    const unsigned P = 2, N = 3;
    scheduler s({P});
    trace::recorder rec(s.workers(), 64u << 20);
    s.attach_recorder(&rec);
    const std::vector<stage_kind> kinds = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order};
    pipeline_options o = tbb_options(kinds, N);
    tbb_observer observer(kinds, N);
    o.observer = &observer;
    // Item 0 stays in serial stage 2 until item 1 has finished its stage 1 and some time after, so
    // item 1 arrives at stage 2 before its turn and is parked in the filter's buffer. (If item 1's
    // worker were descheduled for the whole 20 ms, it would not park: the CHECK below says so.)
    std::atomic<bool> item1_done_stage1{false};
    unsigned next = 0;
    std::uint64_t chain = 0, want = 0;
    constexpr unsigned items = 200;
    const auto st = pipe_while(
        s, [&] { return next < items; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            co_await it.stage(1);
            const std::uint64_t v = busy_work(i, 100 + 500 * (i % 4 == 1));
            if (i == 1) item1_done_stage1.store(true);
            co_await it.stage_wait(2);
            if (i == 0) {
                const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (!item1_done_stage1.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            chain = mix(chain, v);
        },
        o);
    s.attach_recorder(nullptr);
    for (unsigned i = 0; i < items; ++i) want = mix(want, busy_work(i, 100 + 500 * (i % 4 == 1)));
    CHECK(chain == want);
    INFO(observer.first_violation());
    CHECK(observer.violations() == 0);
    CHECK(st.iterations == items);
    CHECK(st.suspensions >= 1);

    std::vector<std::vector<event_record>> by_worker(P);
    rec.flush([&](unsigned w, const event_record* p, std::size_t n) { by_worker[w].insert(by_worker[w].end(), p, p + n); });
    REQUIRE(rec.dropped_total() == 0);
    std::uint64_t acquires = 0, releases = 0, puts = 0, takes = 0, max_in_flight = 0;
    for (const auto& rs : by_worker)
        for (const event_record& r : rs) {
            if (r.kind == event_kind::token_acquire || r.kind == event_kind::token_release) {
                (r.kind == event_kind::token_acquire ? acquires : releases) += 1;
                REQUIRE(r.b == N);   // every record carries N
                REQUIRE(r.c <= N);   // tokens in flight, never above N
                max_in_flight = std::max<std::uint64_t>(max_in_flight, r.c);
            }
            if (r.kind == event_kind::buffer_put || r.kind == event_kind::buffer_take) {
                (r.kind == event_kind::buffer_put ? puts : takes) += 1;
                REQUIRE(r.b == 2);   // only stage 2 is a serial filter after the input
                REQUIRE(r.c < N);    // items in the buffer: at most N - 1 wait behind one inside
                REQUIRE(r.a < items);
            }
        }
    CHECK(acquires == items);
    CHECK(releases == items);
    CHECK(max_in_flight >= 2);
    CHECK(puts >= 1);
    CHECK(takes == puts);            // every parked item was taken out
    CHECK(puts <= st.suspensions);   // suspensions also count items waiting to retire (the output filter)

    // The Perfetto file: counter tracks "tokens in flight" and "stage 2 buffer", instants for both ends.
    const auto path = checked_trace_path("tbb-tokens.pftrace");
    std::filesystem::remove(path);
    {
        trace::perfetto_writer out(path, {.counter_quantum_ns = 0});   // every counter sample (counted below)
        out.begin_run({"tbb-test · tbb · P=2", P, R"({"policy":"tbb","program":{"kind":"pipeline","K":3}})", {}},
                      trace::run_clock::calibrating(rec.start_clock()));
        for (unsigned w = 0; w < P; ++w) out.add_chunk(w, by_worker[w].data(), by_worker[w].size());
        out.end_run();
        out.finish();
    }
    const trace::trace_model m = trace::load_trace_file(path);
    for (const auto& p : m.problems) FAIL_CHECK(p);
    std::uint64_t token_samples = 0, buffer_samples = 0, parked_instants = 0, taken_instants = 0;
    for (const auto& t : m.tracks) {
        if (t.name == "tokens in flight") {
            CHECK(t.kind == trace::track_kind::counter);
            for (const auto& c : t.counters) CHECK(c.value <= N);
            token_samples += t.counters.size();
        }
        if (t.name == "stage 2 buffer") {
            CHECK(t.kind == trace::track_kind::counter);
            buffer_samples += t.counters.size();
        }
        for (const auto& i : t.instants) {
            parked_instants += m.str(i.name) == "parked in buffer";
            taken_instants += m.str(i.name) == "taken from buffer";
        }
    }
    CHECK(token_samples == 2 * items);
    CHECK(buffer_samples == puts + takes);
    CHECK(parked_instants == puts);
    CHECK(taken_instants == takes);
    INFO("trace left at " << path.string());
}
