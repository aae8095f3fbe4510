// Folded node runs (docs/tracing.md, "Detail levels") never hide a scheduling event: an iteration
// that suspends inside a run of short nodes keeps its suspension and its resumption in the trace,
// its run ends exactly where it suspended, and the resumed node begins the next run.
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/recorder.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <thread>
#include <utility>
#include <vector>

using namespace pipescope;
using trace::event_kind;
using trace::event_record;

namespace {

constexpr std::uint64_t stages = 12, wait_stage = 8;

// Iteration 0 holds node (0, wait_stage) until iteration 1 has reached the stage before it, so that
// iteration 1 (on the other worker) finds its cross edge unsatisfied and suspends in the middle of
// a run of short nodes. Returns the records of every worker.
std::vector<event_record> record_forced_suspension(trace::trace_detail detail, pipeline_stats& stats) {
    scheduler s({2});
    trace::recorder rec(s.workers(), 64u << 20);
    rec.set_detail(detail);
    s.attach_recorder(&rec);
    std::atomic<std::uint64_t> started{0}, iteration1_at{0};
    std::atomic<bool> timed_out{false};
    pipeline_options o;
    o.throttle = 4;
    stats = pipe_while(
        s, [&] { return started.fetch_add(1) < 3; },
        [&](iteration& it) -> pipe_task {
            for (std::uint64_t j = 1; j < stages; ++j) {
                co_await it.stage_wait(j);
                if (it.index() == 1) iteration1_at.store(j);
                if (it.index() == 0 && j == wait_stage) {   // inside node (0, wait_stage)
                    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                    while (iteration1_at.load() < wait_stage - 1 &&
                           !(timed_out = std::chrono::steady_clock::now() > give_up))
                        std::this_thread::yield();
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));   // iteration 1 reaches the wait
                }
            }
        },
        o);
    s.attach_recorder(nullptr);
    REQUIRE_FALSE(timed_out.load());
    std::vector<event_record> all;
    rec.flush([&](unsigned, const event_record* p, std::size_t n) { all.insert(all.end(), p, p + n); });
    REQUIRE(rec.dropped_total() == 0);
    return all;
}

}   // namespace

TEST_CASE("folded traces keep a suspension inside a run of short nodes, and the resumption", "[trace][folding]") {
    pipeline_stats stats;
    const std::vector<event_record> rs = record_forced_suspension(trace::trace_detail::folded, stats);
    REQUIRE(stats.suspensions >= 1);

    // (iteration, ticks) -> the last stage of the run that ended then; iteration -> stage it waits at.
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> fold_end_at;
    std::uint64_t suspends = 0, in_runs = 0, resumes = 0, fold_ends = 0, node_ends = 0, resumed_begins = 0;
    for (const auto& r : rs) {
        if (r.kind == event_kind::node_fold_end) fold_end_at[{r.a, r.ticks}] = r.b, ++fold_ends;
        node_ends += r.kind == event_kind::node_end;
        resumes += r.kind == event_kind::iteration_resume;
    }
    std::map<std::uint64_t, std::uint64_t> waits_at;
    for (const auto& r : rs) {   // each worker's records are in time order; a resumption follows its suspension
        suspends += r.kind == event_kind::iteration_suspend;
        if (r.kind == event_kind::iteration_suspend && r.c != trace::final_stage_operand) {
            ++in_runs;
            waits_at[r.a] = r.c;
            // The run ends where the iteration suspended, with the node before the one it waits at.
            const auto f = fold_end_at.find({r.a, r.ticks});
            REQUIRE(f != fold_end_at.end());
            CHECK(f->second + 1 == r.c);
        }
    }
    for (const auto& r : rs)
        if (r.kind == event_kind::node_begin && (r.c & trace::node_resumed)) {
            ++resumed_begins;
            REQUIRE(waits_at.count(r.a));
            CHECK(r.b == waits_at[r.a]);   // the resumed node begins the next run
        }
    CHECK(suspends == stats.suspensions);   // every suspension is in the trace
    CHECK(resumes == stats.suspensions);    // and every resumption
    REQUIRE(in_runs >= 1);                  // (suspensions at the final stage wait to retire)
    CHECK(resumed_begins == in_runs);
    CHECK(node_ends == 0);             // folded: no per-node records at all
    CHECK(fold_ends == 3 + in_runs);   // one run per iteration, one more per suspension in it
}

TEST_CASE("the node count of a folded trace equals the node count of a node-level trace", "[trace][folding]") {
    auto nodes_in = [](const std::vector<event_record>& rs) {
        std::uint64_t n = 0;
        for (const auto& r : rs) n += r.kind == event_kind::node_end ? 1 : r.kind == event_kind::node_fold_end ? r.c : 0;
        return n;
    };
    pipeline_stats a, b;
    const auto nodes = record_forced_suspension(trace::trace_detail::nodes, a);
    const auto folded = record_forced_suspension(trace::trace_detail::folded, b);
    CHECK(nodes_in(nodes) == 3 * stages);   // stages 0..11 of three iterations
    CHECK(nodes_in(folded) == 3 * stages);
}
