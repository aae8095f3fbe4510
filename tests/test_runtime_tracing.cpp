// The runtime records what its workers do into an attached recorder, and the records agree with
// the runtime's own counters and with what an observer sees.
#include "support/invariant_observer.hpp"

#include <pipescope/detail/cpu_relax.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <vector>

using namespace pipescope;

namespace {

struct node_counter final : pipeline_observer {
    std::atomic<std::uint64_t> begins{0}, ends{0};
    void on_node_begin(std::uint64_t, std::uint64_t, bool, int) override { ++begins; }
    void on_node_end(std::uint64_t, std::uint64_t, std::uint64_t, int) override { ++ends; }
};

}   // namespace

TEST_CASE("runtime tracing: recorded events match the runtime's counters", "[tracer][runtime]") {
    scheduler s({2});
    trace::recorder rec(s.workers(), 64u << 20);
    s.attach_recorder(&rec);
    s.reset_counters();

    node_counter nodes;
    pipeline_options o;
    o.observer = &nodes;
    pipeline_stats stats;
    const auto result = workloads::pipe_fib_pipeline(s, 800, 8, o, &stats);
    REQUIRE(result == workloads::pipe_fib_serial(800));
    s.attach_recorder(nullptr);

    std::map<trace::event_kind, std::uint64_t> count;
    rec.flush([&](unsigned, const trace::event_record* r, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) ++count[r[k].kind];
    });
    std::uint64_t steals = 0;
    for (unsigned w = 0; w < s.workers(); ++w) steals += s.counters(w).steals;

    CHECK(rec.dropped_total() == 0);
    CHECK(count[trace::event_kind::iteration_start] == stats.iterations);
    CHECK(count[trace::event_kind::iteration_retire] == stats.iterations);
    CHECK(count[trace::event_kind::node_begin] == nodes.begins.load());
    CHECK(count[trace::event_kind::node_end] == nodes.ends.load());
    // A suspension found satisfied on its re-check is counted by the runtime but not recorded:
    // the iteration never stopped running.
    CHECK(count[trace::event_kind::iteration_suspend] <= stats.suspensions);
    CHECK(count[trace::event_kind::iteration_resume] == count[trace::event_kind::iteration_suspend]);
    CHECK(count[trace::event_kind::throttle_suspend] == stats.throttle_waits);
    CHECK(count[trace::event_kind::throttle_resume] == stats.throttle_waits);
    CHECK(count[trace::event_kind::steal] == steals);
}

TEST_CASE("runtime tracing: a recorder with too few buffers is refused", "[tracer][runtime][errors]") {
    scheduler s({3});
    trace::recorder rec(2);
    CHECK_THROWS_WITH(s.attach_recorder(&rec), Catch::Contains("2 buffers for 3 workers"));
}

TEST_CASE("runtime tracing: wake ids, resumptions and line states link up across workers", "[tracer][runtime]") {
    scheduler s({3});   // oversubscribed on small machines: more parking and more resumptions
    trace::recorder rec(s.workers(), 256u << 20);
    s.attach_recorder(&rec);
    pipeline_options o;
    o.throttle = 4;
    for (int round = 0; round < 3; ++round)
        REQUIRE(workloads::pipe_fib_pipeline(s, 1500, 16, o) == workloads::pipe_fib_serial(1500));
    s.attach_recorder(nullptr);

    std::vector<trace::event_record> all;
    rec.flush([&](unsigned, const trace::event_record* r, std::size_t n) { all.insert(all.end(), r, r + n); });
    REQUIRE(rec.dropped_total() == 0);

    std::map<std::uint64_t, std::uint64_t> unpark_at;                      // wake id -> when
    std::map<std::uint64_t, std::uint64_t> resume_count, resumed_begins;   // by iteration
    std::uint64_t woken = 0, lines = 0;
    for (const auto& r : all) {
        if (r.kind == trace::event_kind::unpark && r.b) CHECK(unpark_at.emplace(r.b, r.ticks).second);   // ids are unique
        if (r.kind == trace::event_kind::iteration_resume) {
            ++resume_count[r.a];
            CHECK(r.b != 0);   // since: when it suspended
            CHECK(r.b <= r.ticks);
        }
        if (r.kind == trace::event_kind::node_begin && (r.c & trace::node_resumed)) ++resumed_begins[r.a];
        if (r.kind == trace::event_kind::iteration_retire || r.kind == trace::event_kind::iteration_suspend) {
            CHECK(r.b != 0);
            CHECK(r.b <= r.ticks);
            CHECK(r.d < 4);   // the slot: iteration mod K
            CHECK(r.d == r.a % 4);
            ++lines;
        }
    }
    for (const auto& r : all)
        if (r.kind == trace::event_kind::park_end && r.a) {
            ++woken;
            REQUIRE(unpark_at.count(r.a) == 1);   // a wake id on a park_end was recorded by its waker
            CHECK(unpark_at[r.a] <= r.ticks);
        }
    // Every node begin marked "resumed" follows a resume of its iteration (a resume that lets the
    // iteration retire has no node to begin).
    for (const auto& [i, n] : resumed_begins) CHECK(n <= resume_count[i]);
    CHECK(lines > 0);
    INFO("woken " << woken << " of " << unpark_at.size() << " unparks");
}

TEST_CASE("runtime tracing: fork-join tasks are recorded as task slices", "[tracer][runtime]") {
    scheduler s({2});
    trace::recorder rec(s.workers(), 16u << 20);
    s.attach_recorder(&rec);
    std::atomic<int> sum{0};
    {
        task_group g(s);
        for (int k = 1; k <= 100; ++k) g.spawn([&sum, k] { sum += k; });
        g.sync();
    }
    s.attach_recorder(nullptr);
    REQUIRE(sum == 5050);
    std::map<std::uint64_t, int> open;   // task id -> begins minus ends
    std::uint64_t begins = 0;
    rec.flush([&](unsigned, const trace::event_record* r, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) {
            if (r[k].kind == trace::event_kind::task_begin) ++open[r[k].a], ++begins;
            if (r[k].kind == trace::event_kind::task_end) --open[r[k].a];
        }
    });
    CHECK(begins == 100);
    for (const auto& [id, balance] : open) CHECK(balance == 0);
}

TEST_CASE("runtime tracing: a task names its parent, and a sync that idled ends its idling", "[tracer][runtime]") {
    scheduler s({2});
    trace::recorder rec(s.workers(), 16u << 20);
    s.attach_recorder(&rec);
    std::atomic<bool> inner_started{false}, outer_syncing{false};
    {
        task_group outside(s);
        outside.spawn([&] {   // the outer task: its child is stolen, then it syncs while the child still runs
            task_group g(s);
            g.spawn([&] {
                inner_started = true;
                while (!outer_syncing) detail::cpu_relax();
                std::atomic<int> spins{0};   // still running while the outer task idles
                while (spins.fetch_add(1, std::memory_order_relaxed) < 2'000'000) {
                }
            });
            while (!inner_started) detail::cpu_relax();   // only the other worker can have started it
            outer_syncing = true;
            g.sync();
        });
        outside.sync();
    }
    s.attach_recorder(nullptr);
    std::map<std::uint64_t, std::uint64_t> parent_of;   // task id -> parent id
    std::map<unsigned, int> task_depth;
    std::map<unsigned, bool> idle_in_task;
    std::uint64_t idles_in_tasks = 0;
    rec.flush([&](unsigned w, const trace::event_record* r, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) {
            switch (r[k].kind) {
                case trace::event_kind::task_begin:
                    parent_of[r[k].a] = r[k].b;
                    ++task_depth[w];
                    break;
                case trace::event_kind::task_end:
                    CHECK_FALSE(idle_in_task[w]);   // the idling inside it ended before it did
                    --task_depth[w];
                    break;
                case trace::event_kind::idle_begin:
                    if (task_depth[w] > 0) idle_in_task[w] = true, ++idles_in_tasks;
                    break;
                case trace::event_kind::idle_end: idle_in_task[w] = false; break;
                default: break;
            }
        }
    });
    REQUIRE(parent_of.size() == 2);
    std::uint64_t outer = 0, inner = 0;
    for (const auto& [id, parent] : parent_of) (parent == 0 ? outer : inner) = id;
    CHECK(outer != 0);
    CHECK(parent_of[inner] == outer);
    INFO("idle slices inside tasks: " << idles_in_tasks);
}
