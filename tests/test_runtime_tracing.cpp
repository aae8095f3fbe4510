// The runtime records what its workers do into an attached recorder, and the records agree with
// the runtime's own counters and with what an observer sees.
#include "support/invariant_observer.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <catch2/catch.hpp>

#include <map>

using namespace pipescope;

namespace {

struct node_counter final : pipeline_observer {
    std::atomic<std::uint64_t> begins{0}, ends{0};
    void on_node_begin(std::uint64_t, std::uint64_t, bool, int) override { ++begins; }
    void on_node_end(std::uint64_t, std::uint64_t, std::uint64_t, int) override { ++ends; }
};

}  // namespace

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
    CHECK(count[trace::event_kind::iteration_suspend] == stats.suspensions);
    CHECK(count[trace::event_kind::iteration_resume] <= stats.suspensions);
    CHECK(count[trace::event_kind::throttle_suspend] == stats.throttle_waits);
    CHECK(count[trace::event_kind::steal] == steals);
}

TEST_CASE("runtime tracing: a recorder with too few buffers is refused", "[tracer][runtime][errors]") {
    scheduler s({3});
    trace::recorder rec(2);
    CHECK_THROWS_WITH(s.attach_recorder(&rec), Catch::Contains("2 buffers for 3 workers"));
}
