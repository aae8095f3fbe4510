// The `bind-to-stage` policy (seed 000 §2.1, §3.1, §4.1; seed 001 §10): OS threads bound to stages,
// bounded queues of Queue_size between them.
//  - random programs with declared stages (all kinds, skips, nesting) × c ∈ {1,2,3} × Queue_size ∈
//    {1,2,8} × P give exactly the serial result; on every run the queues never held more than
//    Queue_size items (the engine's test hook), serial_in_order stages see iterations in order and
//    serial stages never run two at once (an observer), items retire in order;
//  - an exception in a stage reaches the caller with every thread joined; refusals (no declared
//    stages, stage 0 not serial_in_order, bad c / Queue_size naming the parameter);
//  - the trace: stage-thread tracks named by stage, queue fill counters never above Queue_size,
//    blocked slices, and the Perfetto file reading back (the trace model's DAG has every node).
#include "support/random_pipeline.hpp"
#include "support/test_scale.hpp"
#include "support/test_traces.hpp"
#include "support/violation_log.hpp"

#include "../runtime/src/pipeline/policies/bind_to_stage/bind_to_stage_check.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

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

// Installs the engine's test hook for the life of a test.
struct check_installed {
    detail::bind_to_stage_check check;
    check_installed() { detail::set_bind_to_stage_check(&check); }
    ~check_installed() { detail::set_bind_to_stage_check(nullptr); }
    std::vector<detail::bind_to_stage_check::run> take() {
        std::lock_guard lock(check.mutex);
        return std::exchange(check.runs, {});
    }
};

// The stage semantics of every node the runtime reports, and the thread indices (>= P on stage threads).
class stage_observer final : public pipeline_observer {
public:
    stage_observer(std::vector<stage_kind> kinds, unsigned workers)
        : kinds_(std::move(kinds)), workers_(workers), inside_(kinds_.size()), last_begun_(kinds_.size()) {
        for (auto& l : last_begun_) l.store(-1);
    }
    void on_iteration_start(std::uint64_t, int worker) override {
        check_worker(worker);
        started_.fetch_add(1);
    }
    void on_node_begin(std::uint64_t i, std::uint64_t stage, bool, int worker) override {
        check_worker(worker);
        if (stage >= kinds_.size())
            return fail("node (" + std::to_string(i) + ", " + std::to_string(stage) + ") undeclared");
        if (kinds_[stage] == stage_kind::parallel) return;
        if (inside_[stage].fetch_add(1) != 0) fail("serial stage " + std::to_string(stage) + " runs two items at once");
        if (kinds_[stage] == stage_kind::serial_in_order) {
            const std::int64_t before = last_begun_[stage].exchange(static_cast<std::int64_t>(i));
            if (before >= static_cast<std::int64_t>(i))
                fail("serial_in_order stage " + std::to_string(stage) + " runs item " + std::to_string(i) + " after " +
                     std::to_string(before));
        }
    }
    void on_node_end(std::uint64_t, std::uint64_t stage, std::uint64_t, int) override {
        if (stage < kinds_.size() && kinds_[stage] != stage_kind::parallel) inside_[stage].fetch_sub(1);
    }
    void on_iteration_retire(std::uint64_t i, int worker) override {
        check_worker(worker);
        if (i != retired_.load()) fail("item " + std::to_string(i) + " retires before " + std::to_string(retired_.load()));
        retired_.fetch_add(1);
    }
    std::uint64_t violations() const { return log_.violations(); }
    std::string first_violation() const { return log_.first_violation(); }
    std::uint64_t retired() const { return retired_.load(); }

private:
    void check_worker(int worker) {
        if (worker < static_cast<int>(workers_))
            fail("a callback on worker " + std::to_string(worker) + ", not a stage thread");
    }
    void fail(const std::string& what) { log_.fail(what); }
    std::vector<stage_kind> kinds_;
    unsigned workers_;
    std::vector<std::atomic<int>> inside_;
    std::vector<std::atomic<std::int64_t>> last_begun_;
    std::atomic<std::uint64_t> started_{0}, retired_{0};
    violation_log log_;
};

pipeline_options bts_options(std::vector<stage_kind> kinds, unsigned c = 0, unsigned queue = 0) {
    pipeline_options o;
    o.policy = "bind-to-stage";
    o.declared_stages = std::move(kinds);
    o.stage_threads = c;
    o.queue_size = queue;
    return o;
}

}   // namespace

TEST_CASE("bind-to-stage: random declared programs equal the serial elision for every c, Queue_size and P",
          "[pipeline][bind-to-stage][random]") {
    check_installed hook;
    const int cases = scaled(60, 12);
    static const unsigned cs[] = {1, 2, 3};
    static const unsigned queues[] = {1, 2, 8};
    for (int k = 0; k < cases; ++k) {
        const std::uint64_t seed = 5000 + static_cast<std::uint64_t>(k);
        const random_program program = random_program::make(seed, k % 4 == 0);   // nesting now and then
        const unsigned workers = 1 + static_cast<unsigned>(k % 3);
        const unsigned c = cs[k % 3], queue = queues[(k / 3) % 3];
        pipeline_options options = bts_options(declare_random_stages(program, 0xB75), c, queue);
        INFO(program.describe() << " · P=" << workers << " c=" << c << " Queue_size=" << queue);

        pipeline_options serial;
        serial.policy = "serial";
        const program_state expected = run_program(pool(1), program, serial);

        stage_observer observer(options.declared_stages, workers);
        options.observer = &observer;
        pipeline_stats stats;
        hook.take();
        const program_state got = run_program(pool(workers), program, options, &stats);

        INFO(observer.first_violation());
        REQUIRE(observer.violations() == 0);
        REQUIRE(got == expected);
        REQUIRE(stats.iterations == program.iterations);
        REQUIRE(observer.retired() == program.iterations);
        REQUIRE(stats.throttle == queue);
        const auto runs = hook.take();
        REQUIRE(!runs.empty());   // the outer loop reports last (nested loops end first)
        for (const auto& r : runs) {
            REQUIRE(r.capacity == queue);
            for (std::size_t q : r.queue_peak) REQUIRE(q <= queue);
        }
        const auto& outer = runs.back();
        REQUIRE(outer.threads.size() == options.declared_stages.size());
        for (std::size_t j = 0; j < outer.threads.size(); ++j)
            REQUIRE(outer.threads[j] == (options.declared_stages[j] == stage_kind::parallel ? c : 1u));
    }
}

TEST_CASE("bind-to-stage: defaults are c = P and Queue_size = 20, threads may outnumber cores",
          "[pipeline][bind-to-stage]") {
    check_installed hook;
    const std::vector<stage_kind> kinds = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::parallel,
                                           stage_kind::serial_in_order};
    for (unsigned c : {0u, 16u}) {   // 16 threads per parallel stage on a 2-worker pool: oversubscribed
        CAPTURE(c);
        unsigned next = 0;
        std::uint64_t chain = 0, want = 0;
        const auto st = pipe_while(
            pool(2), [&] { return next < 300; },
            [&](iteration& it) -> pipe_task {
                const unsigned i = next++;
                co_await it.stage(1);
                std::uint64_t v = busy_work(i, 100 + 300 * (i % 5 == 0));
                co_await it.stage(2);
                v = busy_work(v, 50);
                co_await it.stage_wait(3);
                chain = mix(chain, v);
            },
            bts_options(kinds, c));
        for (unsigned i = 0; i < 300; ++i) want = mix(want, busy_work(busy_work(i, 100 + 300 * (i % 5 == 0)), 50));
        CHECK(chain == want);
        CHECK(st.iterations == 300);
        CHECK(st.throttle == 20);
        const auto runs = hook.take();
        REQUIRE(runs.size() == 1);
        CHECK(runs[0].threads[1] == (c ? c : 2u));
        for (std::size_t q : runs[0].queue_peak) CHECK(q <= 20);
    }
}

TEST_CASE("bind-to-stage: a serial_in_order stage behind skips and a slow item uses its reorder buffer",
          "[pipeline][bind-to-stage]") {
    check_installed hook;
    // Item 0 is slow in parallel stage 1, so later items reach stage 3 first and wait in its reorder
    // buffer; odd items skip stage 2 (serial_in_order too: the skip marks let the even ones pass).
    const std::vector<stage_kind> kinds = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order,
                                           stage_kind::serial_in_order};
    unsigned next = 0;
    std::vector<unsigned> order2, order3;
    const auto st = pipe_while(
        pool(2), [&] { return next < 40; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            co_await it.stage(1);
            if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
            if (i % 2 == 0) {
                co_await it.stage_wait(2);
                order2.push_back(i);
            }
            co_await it.stage_wait(3);
            order3.push_back(i);
        },
        bts_options(kinds, 3, 8));
    CHECK(st.iterations == 40);
    REQUIRE(order3.size() == 40);
    for (unsigned i = 0; i < 40; ++i) CHECK(order3[i] == i);
    REQUIRE(order2.size() == 20);
    for (unsigned i = 0; i < 20; ++i) CHECK(order2[i] == 2 * i);
    const auto runs = hook.take();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].reorder_peak[3] + runs[0].reorder_peak[2] >= 1);
}

// The queues hand items over by spinning before they park (stage_queue.hpp): many tiny items, so
// that nearly every hand-off races the other side's spin, park and wake-up. Every kind of stage,
// skips of a parallel and of a serial_in_order stage (skip marks), Queue_size 1 (every push waits
// for the full queue to drain) to 20, c up to 3, P up to 8 (stage threads far outnumber the cores).
// Each item's value goes through every stage it visits; the in-order stages fold values into
// chains that depend on the order, checked against the same arithmetic in a plain loop.
TEST_CASE("bind-to-stage: many tiny items through spin-then-park queues give the serial result",
          "[pipeline][bind-to-stage][stress]") {
    check_installed hook;
    const std::vector<stage_kind> kinds = {stage_kind::serial_in_order,     stage_kind::parallel,
                                           stage_kind::serial_out_of_order, stage_kind::parallel,
                                           stage_kind::serial_in_order,     stage_kind::serial_in_order};
    const unsigned items = static_cast<unsigned>(scaled(20000, 3000));
    // The plain loop: item i skips stage 2 when i % 3 == 1 and stage 4 when i % 5 == 2.
    std::uint64_t want4 = 0, want5 = 0, want_sum2 = 0;
    for (unsigned i = 0; i < items; ++i) {
        std::uint64_t v = mix(i, 1);
        if (i % 3 != 1) want_sum2 += v & 0xFFFF;
        v = mix(v, 3);
        if (i % 5 != 2) want4 = mix(want4, v);
        want5 = mix(want5, v ^ i);
    }
    int round = 0;
    for (unsigned workers : {1u, 2u, 4u, 8u})
        for (unsigned queue : {1u, 2u, 20u}) {
            const unsigned c = 1 + static_cast<unsigned>(round++ % 3);
            CAPTURE(workers, queue, c);
            unsigned next = 0;
            std::uint64_t chain4 = 0, chain5 = 0, sum2 = 0;   // stage 2 is serial: plain sum is safe
            const auto st = pipe_while(
                pool(workers), [&] { return next < items; },
                [&](iteration& it) -> pipe_task {
                    const unsigned i = next++;
                    co_await it.stage(1);
                    std::uint64_t v = mix(i, 1);
                    if (i % 3 != 1) {
                        co_await it.stage(2);
                        sum2 += v & 0xFFFF;
                    }
                    co_await it.stage(3);
                    v = mix(v, 3);
                    if (i % 5 != 2) {
                        co_await it.stage_wait(4);
                        chain4 = mix(chain4, v);
                    }
                    co_await it.stage_wait(5);
                    chain5 = mix(chain5, v ^ i);
                },
                bts_options(kinds, c, queue));
            CHECK(st.iterations == items);
            CHECK(sum2 == want_sum2);
            CHECK(chain4 == want4);
            CHECK(chain5 == want5);
            const auto runs = hook.take();
            REQUIRE(runs.size() == 1);
            for (std::size_t q : runs[0].queue_peak) CHECK(q <= queue);
        }
}

TEST_CASE("bind-to-stage: an exception in a stage reaches the caller with every thread joined",
          "[pipeline][bind-to-stage]") {
    for (unsigned queue : {1u, 4u}) {
        for (unsigned where : {0u, 1u, 2u, 3u}) {
            CAPTURE(queue, where);
            pipeline_options o = bts_options({stage_kind::serial_in_order, stage_kind::parallel,
                                              stage_kind::serial_out_of_order, stage_kind::serial_in_order},
                                             2, queue);
            unsigned next = 0;
            std::atomic<int> alive{0};   // frames whose locals were not destroyed
            struct guard {
                std::atomic<int>& n;
                explicit guard(std::atomic<int>& a) : n(a) { n.fetch_add(1); }
                ~guard() { n.fetch_sub(1); }
            };
            REQUIRE_THROWS_WITH(pipe_while(
                                    pool(2),
                                    [&] {
                                        if (where == 3 && next == 50) throw std::runtime_error("boom in the condition");
                                        return next < 200;
                                    },
                                    [&](iteration& it) -> pipe_task {
                                        guard g(alive);
                                        const unsigned i = next++;
                                        if (where == 0 && i == 40) throw std::runtime_error("boom in item 40");
                                        co_await it.stage(1);
                                        (void)busy_work(i, 200);
                                        if (where == 1 && i == 40) throw std::runtime_error("boom in item 40");
                                        co_await it.stage(2);
                                        if (where == 2 && i == 40) throw std::runtime_error("boom in item 40");
                                        co_await it.stage(3);
                                    },
                                    o),
                                Catch::Contains("boom in"));
            CHECK(alive.load() == 0);
        }
    }
    // An undeclared stage is an error naming the iteration and the stage.
    pipeline_options o = bts_options({stage_kind::serial_in_order, stage_kind::parallel}, 1, 2);
    unsigned next = 0;
    REQUIRE_THROWS_WITH(pipe_while(
                            pool(2), [&] { return next < 50; },
                            [&](iteration& it) -> pipe_task {
                                const unsigned i = next++;
                                co_await it.stage(i == 7 ? 3 : 1);
                            },
                            o),
                        Catch::Contains("iteration 7 entered stage 3") && Catch::Contains("0..1"));
}

TEST_CASE("bind-to-stage: refusals name the policy, the reason and the parameter", "[pipeline][bind-to-stage]") {
    pipeline_options o;
    o.policy = "bind-to-stage";
    unsigned next = 0;
    auto body = [&](iteration& it) -> pipe_task {
        ++next;
        co_await it.stage(1);
    };
    auto run = [&] {
        return pipe_while(
            pool(2), [&] { return next < 5; }, body, o);
    };
    REQUIRE_THROWS_AS(run(), std::invalid_argument);
    REQUIRE_THROWS_WITH(run(), Catch::Contains("'bind-to-stage'") && Catch::Contains("construct-and-run") &&
                                   Catch::Contains("declared_stages") && Catch::Contains("on the fly"));
    REQUIRE_THROWS_WITH(workloads::pipe_fib_pipeline(pool(2), 100, 8, o), Catch::Contains("construct-and-run"));
    o.declared_stages = {stage_kind::parallel, stage_kind::serial_in_order};
    REQUIRE_THROWS_WITH(run(), Catch::Contains("declared_stages[0] must be serial_in_order"));
    o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel};
    o.stage_threads = 5000;
    REQUIRE_THROWS_WITH(run(), Catch::Contains("stage_threads") && Catch::Contains("5000") && Catch::Contains("1..1024"));
    o.stage_threads = 0;
    o.queue_size = 1u << 21;
    REQUIRE_THROWS_WITH(run(), Catch::Contains("queue_size") && Catch::Contains("Queue_size"));
    CHECK(next == 0);
    o.queue_size = 0;
    CHECK(run().iterations == 5);
    bool found = false;
    for (const auto& p : pipeline_policies())
        if (p.name == "bind-to-stage") found = p.needs_declared_stages;
    CHECK(found);
}

// ---------------------------------------------------------------------------------------------
// The trace

TEST_CASE("bind-to-stage: stage threads record into their own tracks, queue fills never exceed Queue_size",
          "[pipeline][bind-to-stage][trace][trace-file]") {
    const unsigned P = 2, Q = 2, C = 2;
    scheduler s({P});
    trace::recorder rec(s.workers(), 64u << 20);
    s.attach_recorder(&rec);
    const std::vector<stage_kind> kinds = {stage_kind::serial_in_order, stage_kind::parallel,
                                           stage_kind::serial_out_of_order, stage_kind::serial_in_order};
    pipeline_options o = bts_options(kinds, C, Q);
    unsigned next = 0;
    std::uint64_t chain = 0, want = 0;
    constexpr unsigned items = 150;
    const auto st = pipe_while(
        s, [&] { return next < items; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            co_await it.stage(1);
            const std::uint64_t v = busy_work(i, 200 + 2000 * (i % 9 == 0));
            if (i % 3 != 0) co_await it.stage(2);   // every third item skips stage 2
            co_await it.stage_wait(3);
            chain = mix(chain, v);
        },
        o);
    s.attach_recorder(nullptr);
    for (unsigned i = 0; i < items; ++i) want = mix(want, busy_work(i, 200 + 2000 * (i % 9 == 0)));
    CHECK(chain == want);
    CHECK(st.iterations == items);

    const unsigned threads = 1 + C + 1 + 1;
    REQUIRE(rec.writers() == P + threads);   // one writer added per stage thread
    std::vector<std::vector<event_record>> by_writer(rec.writers());
    rec.flush([&](unsigned w, const event_record* p, std::size_t n) { by_writer[w].insert(by_writer[w].end(), p, p + n); });
    REQUIRE(rec.dropped_total() == 0);
    std::uint64_t puts = 0, takes = 0, node_begins = 0, retires = 0;
    for (unsigned w = 0; w < by_writer.size(); ++w) {
        const auto& rs = by_writer[w];
        if (w >= P) {
            REQUIRE(!rs.empty());
            CHECK(rs.front().kind == event_kind::thread_name);
        }
        for (const event_record& r : rs) {
            if (r.kind == event_kind::queue_put || r.kind == event_kind::queue_take) {
                (r.kind == event_kind::queue_put ? puts : takes) += 1;
                REQUIRE(r.b >= 1);
                REQUIRE(r.b <= 3);
                REQUIRE(r.c <= Q);   // the queue's fill after the change: never above Queue_size
            }
            if (r.kind == event_kind::node_begin) {
                ++node_begins;
                CHECK(w >= P);   // nodes run on stage threads, never on the workers
            }
            retires += r.kind == event_kind::iteration_retire;
        }
    }
    CHECK(puts == takes);
    CHECK(puts == items * 3 - items / 3 - (items % 3 != 0));   // queues 1 and 3 for all, 2 for two thirds
    CHECK(retires == items);

    const auto path = checked_trace_path("bind-to-stage.pftrace");
    std::filesystem::remove(path);
    {
        trace::perfetto_writer out(path, {.counter_quantum_ns = 0});   // every counter sample (counted below)
        out.begin_run({"bts-test · bind-to-stage · P=2",
                       P,
                       R"({"policy":"bind-to-stage","program":{"kind":"pipeline","K":2,"c":2,"queue":2}})",
                       {}},
                      trace::run_clock::calibrating(rec.start_clock()));
        for (unsigned w = 0; w < by_writer.size(); ++w) out.add_chunk(w, by_writer[w].data(), by_writer[w].size());
        out.end_run();
        out.finish();
    }
    const trace::trace_model m = trace::load_trace_file(path);
    for (const auto& p : m.problems) FAIL_CHECK(p);
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.workers.size() == P + threads);
    std::set<std::string> thread_names;
    for (std::size_t w = P; w < run.workers.size(); ++w) thread_names.insert(m.tracks[run.workers[w]].name);
    CHECK(thread_names.count("stage 0 · thread 0") == 1);
    CHECK(thread_names.count("stage 1 · thread 1") == 1);
    CHECK(thread_names.count("stage 3 · thread 0") == 1);
    std::uint64_t fill_samples = 0;
    for (const auto& t : m.tracks) {
        if (t.name == "queue 1 fill" || t.name == "queue 2 fill" || t.name == "queue 3 fill") {
            CHECK(t.kind == trace::track_kind::counter);
            for (const auto& c : t.counters) CHECK(c.value <= Q);
            fill_samples += t.counters.size();
        }
    }
    CHECK(fill_samples == puts + takes);
    CHECK(run.dag.nodes.size() == node_begins);   // the DAG is rebuilt from the stage threads' tracks
    INFO("trace left at " << path.string());
}
