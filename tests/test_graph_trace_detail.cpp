// Trace detail levels of stage-graph runs (docs/tracing.md, "Detail levels"; graph_engine::node_mode):
// the records the engine makes under `nodes`, `folded` and `automatic`, read back from the recorder.
// Whatever the level, the nodes recorded add up to the instances and resumptions the run reports,
// every node_begin is closed on its own worker by the node_end or node_fold_end of the same stage,
// a folded run holds nothing but counters, records stay in time order on a worker's track, the
// events of interest (blocks, refused reserves, stage ends) are all there, and the queue counters
// are recorded only when an operation changed them — every change, so their maxima are the run's
// peaks — and nothing else: the footprint is not recorded (readers derive it as the fills' sum).
#include "support/graph_programs.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/graph/queue.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/trace/events.hpp>
#include <pipescope/trace/recorder.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace pipescope;
using trace::event_kind;
using trace::event_record;
using trace::trace_detail;

namespace {

struct recorded_run {
    graph::run_stats stats;
    std::vector<std::vector<event_record>> by_writer;   // each writer's records in recording order
};

recorded_run record(const std::string& policy, unsigned P, trace_detail level, std::uint64_t fold_below_ns, bool ordered) {
    scheduler s({P});
    trace::recorder rec(s.workers(), 64u << 20);
    rec.set_detail(level, fold_below_ns);
    // source (serial) -> square (parallel) -> sink (serial) in packets of 4: many short instances,
    // the fine-grained graphs folding is for. The parallel stage has one output, so no step
    // reserves tentatively and gives back: every change of a fill is a queue operation.
    testing::square_sum prog(6000, {.packet_elements = 4, .capacity_packets = 4, .ordered = ordered});
    s.attach_recorder(&rec);
    graph::run_options o;
    o.policy = policy;
    recorded_run r;
    r.stats = graph::run(s, prog.g, o);
    s.attach_recorder(nullptr);
    REQUIRE(prog.sum == prog.expected());
    REQUIRE(rec.dropped_total() == 0);
    r.by_writer.resize(rec.writers());
    rec.flush([&](unsigned w, const event_record* records, std::size_t count) {
        r.by_writer.at(w).insert(r.by_writer.at(w).end(), records, records + count);
    });
    return r;
}

// What the records say, checked as they are read.
struct reading {
    std::vector<std::uint64_t> nodes_per_stage;   // node_begin..node_end = 1, node_begin..node_fold_end = c
    std::uint64_t folded_runs = 0, folded_nodes = 0;
    std::uint64_t blocked = 0, stage_done = 0, refused_reserves = 0;
    std::uint64_t queue_ops = 0, routine_ops = 0;   // graph_reserve + graph_commit; those granted / published
    std::uint64_t counter_values = 0;
    std::vector<std::int64_t> max_counter;                // per counter id: one per queue, nothing else
    std::vector<std::optional<std::uint64_t>> decision;   // per stage: detail_decision's c
    std::uint64_t decisions = 0;
};

reading read(const recorded_run& run, std::size_t stages, std::size_t queues) {
    reading out;
    out.nodes_per_stage.assign(stages, 0);
    out.max_counter.assign(queues, -1);
    out.decision.assign(stages, std::nullopt);
    for (std::size_t w = 0; w < run.by_writer.size(); ++w) {
        INFO("writer " << w);
        struct open_node {
            std::uint64_t first, stage;
        };
        std::optional<open_node> open;
        bool inside = false;            // the open node (run) holds records other than counters
        std::uint64_t last_ticks = 0;   // of the latest record on the worker's track (counters have their own)
        for (const event_record& r : run.by_writer[w]) {
            if (r.kind == event_kind::counter) {
                ++out.counter_values;
                REQUIRE(r.a < out.max_counter.size());   // a queue's fill: no footprint records
                out.max_counter[r.a] = std::max(out.max_counter[r.a], static_cast<std::int64_t>(r.b));
                continue;
            }
            if (r.ticks < last_ticks)   // a worker's track stays in time order
                FAIL_CHECK(trace::event_name(r.kind) << " a=" << r.a << " b=" << r.b << " recorded " << last_ticks - r.ticks
                                                     << " ticks before the record preceding it");
            last_ticks = std::max(last_ticks, r.ticks);
            INFO("record " << trace::event_name(r.kind) << " a=" << r.a << " b=" << r.b << " c=" << r.c);
            switch (r.kind) {
                case event_kind::node_begin:
                    REQUIRE_FALSE(open);   // graph nodes never nest
                    REQUIRE(r.b < stages);
                    open = open_node{r.a, r.b};
                    inside = false;
                    continue;
                case event_kind::node_end:
                    REQUIRE(open);
                    CHECK(r.b == open->stage);
                    CHECK(r.a == open->first);
                    ++out.nodes_per_stage[r.b];
                    open.reset();
                    continue;
                case event_kind::node_fold_end:
                    REQUIRE(open);
                    CHECK(r.b == open->stage);   // a run never spans stages
                    CHECK_FALSE(inside);         // nothing of interest happened inside a folded run
                    CHECK(r.c >= 2);
                    CHECK(r.a > open->first);   // instances (resumptions) are numbered in the order they start
                    CHECK(r.a - open->first + 1 >= r.c);
                    out.nodes_per_stage[r.b] += r.c;
                    ++out.folded_runs;
                    out.folded_nodes += r.c;
                    open.reset();
                    continue;
                default: break;
            }
            // Inside a folded run only counters: whatever else the worker records closes the run
            // first. Inside one node, a serial stage records its own queue operations.
            if (open) {
                inside = true;
                if (r.kind != event_kind::graph_reserve && r.kind != event_kind::graph_commit)
                    FAIL_CHECK("inside a node: " << trace::event_name(r.kind));
            }
            switch (r.kind) {
                case event_kind::graph_reserve:
                case event_kind::graph_commit: {
                    ++out.queue_ops;
                    const bool ok = (r.c & trace::graph_op_ok) != 0;
                    out.routine_ops += ok;
                    out.refused_reserves += r.kind == event_kind::graph_reserve && !ok;
                    break;
                }
                case event_kind::graph_blocked: ++out.blocked; break;
                case event_kind::graph_stage_done: ++out.stage_done; break;
                case event_kind::detail_decision:
                    REQUIRE(r.a < stages);
                    CHECK_FALSE(out.decision[r.a]);   // decided once per stage
                    out.decision[r.a] = r.c;
                    CHECK(r.d == 256);
                    ++out.decisions;
                    break;
                default: break;
            }
        }
        CHECK_FALSE(open);   // every node_begin is closed, by its own worker
    }
    return out;
}

const std::vector<graph::stage_kind> chain_kinds = {graph::stage_kind::serial, graph::stage_kind::parallel,
                                                    graph::stage_kind::serial};
constexpr std::size_t chain_stages = 3, chain_queues = 2;

// The nodes recorded add up to what the run reports.
void check_nodes(const reading& r, const graph::run_stats& st) {
    std::uint64_t parallel = 0, serial = 0;
    for (std::size_t s = 0; s < chain_stages; ++s)
        (chain_kinds[s] == graph::stage_kind::parallel ? parallel : serial) += r.nodes_per_stage[s];
    CHECK(parallel == st.instances);
    CHECK(serial == st.resumptions);
    CHECK(r.stage_done == chain_stages);
    CHECK(r.blocked >= st.blocked);   // every serial block is recorded (and parallel stages' backpressure)
}

// Every change of a fill is recorded by the worker that made it, with the value it left: the
// largest values recorded are the run's peaks.
void check_peaks(const reading& r, const graph::run_stats& st) {
    for (std::size_t q = 0; q < chain_queues; ++q) {
        INFO("queue " << st.queues[q].name);
        CHECK(r.max_counter[q] == static_cast<std::int64_t>(st.queues[q].stats.peak_packets_in_use));
    }
}

}   // namespace

TEST_CASE("graph trace detail: nodes, folded and auto record the same run", "[graph][trace][trace-detail]") {
    for (const std::string policy : {"gramps", "danbi", "breadth-first", "task-stealing"}) {
        for (const unsigned P : {1u, 2u}) {
            for (const bool ordered : {false, true}) {
                INFO("policy " << policy << ", P = " << P << (ordered ? ", ordered queues" : ""));
                const recorded_run nodes_run = record(policy, P, trace_detail::nodes, trace::default_fold_below_ns, ordered);
                const recorded_run folded_run =
                    record(policy, P, trace_detail::folded, trace::default_fold_below_ns, ordered);
                // auto with a bound no node reaches: every stage measured decides to fold.
                const recorded_run auto_run = record(policy, P, trace_detail::automatic, 1'000'000'000, ordered);
                const reading nodes = read(nodes_run, chain_stages, chain_queues);
                const reading folded = read(folded_run, chain_stages, chain_queues);
                const reading autom = read(auto_run, chain_stages, chain_queues);

                {
                    INFO("nodes");
                    check_nodes(nodes, nodes_run.stats);
                    check_peaks(nodes, nodes_run.stats);
                    CHECK(nodes.folded_runs == 0);
                    CHECK(nodes.routine_ops > 0);   // every granted reserve and commit
                    CHECK(nodes.decisions == 0);
                    // Counters only for operations that changed a fill, one value each (the fill; the
                    // footprint is derived by readers): a granted reserve of a push window and the
                    // commit of a pop window here (every push commit fills its packets but the
                    // source's last), so at most 2 of the 4 operations a packet takes, and fewer
                    // with refused reserves (issue 18: at most 0.5 values per queue operation).
                    const double per_op = double(nodes.counter_values) / double(nodes.queue_ops);
                    INFO("counter values per queue operation " << per_op);
                    CHECK(per_op <= 0.5);
                }
                {
                    INFO("folded");
                    check_nodes(folded, folded_run.stats);
                    check_peaks(folded, folded_run.stats);
                    CHECK(folded.decisions == 0);
                    CHECK(folded.routine_ops == 0);   // granted reserves and commits are not recorded
                    CHECK(folded.queue_ops == folded.refused_reserves);
                    // Each change of a fill is still recorded, so the values per operation of the
                    // nodes trace (the operations every level makes) stay the same.
                    const double per_op = double(folded.counter_values) / double(nodes.queue_ops);
                    CHECK(per_op <= 0.5);
                    if (policy == "danbi" || policy == "breadth-first") {
                        // They keep a worker on one stage: most nodes are in folded runs.
                        CHECK(folded.folded_nodes * 2 >= folded_run.stats.instances);
                    }
                }
                {
                    INFO("auto");
                    check_nodes(autom, auto_run.stats);
                    check_peaks(autom, auto_run.stats);
                    CHECK(autom.routine_ops == 0);   // only `nodes` records granted reserves and commits
                    CHECK(autom.queue_ops == autom.refused_reserves);
                    for (std::size_t s = 0; s < chain_stages; ++s) {
                        INFO("stage " << s << ": " << autom.nodes_per_stage[s] << " nodes");
                        if (autom.nodes_per_stage[s] >= 256) {
                            REQUIRE(autom.decision[s]);
                            CHECK(*autom.decision[s] == 1);
                        } else {
                            CHECK_FALSE(autom.decision[s]);
                        }
                    }
                }
                if (P == 1) {   // one worker: the run itself is the same at every level
                    CHECK(folded.blocked == nodes.blocked);
                    CHECK(autom.blocked == nodes.blocked);
                    CHECK(folded.refused_reserves == nodes.refused_reserves);
                    CHECK(folded_run.stats.instances == nodes_run.stats.instances);
                    CHECK(folded_run.stats.resumptions == nodes_run.stats.resumptions);
                }
            }
        }
    }
}

TEST_CASE("graph trace detail: auto keeps node slices for stages measured above the bound", "[graph][trace][trace-detail]") {
    const recorded_run run = record("gramps", 2, trace_detail::automatic, 0, false);   // no node is shorter than 0 ns
    const reading r = read(run, chain_stages, chain_queues);
    check_nodes(r, run.stats);
    CHECK(r.folded_runs == 0);
    CHECK(r.routine_ops == 0);   // node slices, but the reserves and commits only at detail `nodes`
    std::uint64_t measured = 0;
    for (std::size_t s = 0; s < chain_stages; ++s) {
        if (r.nodes_per_stage[s] < 256) continue;
        ++measured;
        REQUIRE(r.decision[s]);
        CHECK(*r.decision[s] == 0);
    }
    CHECK(measured >= 1);   // the parallel stage runs 1500 instances
    CHECK(r.decisions == measured);
}

// At one worker every change is made and recorded by the same thread, in order: consecutive values
// of a counter always differ (nothing is recorded that did not change), every change is there (the
// fills replayed in record order peak at exactly the run's footprint, in packets and in bytes: what
// a reader derives the footprint from), and the footprint itself is not recorded.
TEST_CASE("graph trace detail: one worker records each change of a fill once, and their sum is the footprint",
          "[graph][trace][trace-detail]") {
    for (const trace_detail level : {trace_detail::nodes, trace_detail::folded}) {
        INFO("level " << trace::to_string(level));
        const recorded_run run = record("gramps", 1, level, trace::default_fold_below_ns, true);
        REQUIRE(run.by_writer.size() == 1);
        std::vector<std::optional<std::int64_t>> last(chain_queues);
        std::int64_t sum = 0, peak = 0;
        std::uint64_t changes = 0;
        for (const event_record& r : run.by_writer[0]) {
            if (r.kind != event_kind::counter) continue;
            REQUIRE(r.a < chain_queues);   // a queue's fill, never a footprint counter
            const auto v = static_cast<std::int64_t>(r.b);
            if (last[r.a]) CHECK(*last[r.a] != v);
            sum += v - last[r.a].value_or(0);
            peak = std::max(peak, sum);
            last[r.a] = v;
            ++changes;
        }
        CHECK(changes > 0);
        CHECK(peak == static_cast<std::int64_t>(run.stats.peak_packets));
        // Both queues carry packets of 4 uint64_t here: bytes are packets × 32.
        CHECK(peak * 4 * static_cast<std::int64_t>(sizeof(std::uint64_t)) ==
              static_cast<std::int64_t>(run.stats.peak_bytes));
        for (std::size_t q = 0; q < chain_queues; ++q) CHECK(last[q] == std::optional<std::int64_t>(0));   // all given back
    }
}

// What the engine's counters are made of: each operation says what it did to the fill, read under
// the queue's lock; the shared footprint meter follows every change.
TEST_CASE("graph trace detail: queue operations report their change of packets in use", "[graph][queue][trace-detail]") {
    graph::footprint_meter meter;
    graph::queue_config c;
    c.name = "q";
    c.element_size = sizeof(std::uint32_t);
    c.packet_elements = 4;
    c.capacity_packets = 4;
    c.footprint = &meter;
    graph::packet_queue q(std::move(c));

    graph::queue_change reserved;
    graph::push_window w = q.try_reserve_push(2, &reserved);
    REQUIRE(w);
    CHECK(reserved.packets == 2);
    CHECK(reserved.in_use == 2);
    CHECK(meter.packets() == 2);
    CHECK(meter.bytes() == 2 * 4 * 4);

    for (std::uint32_t i = 0; i < 3; ++i) w.at<std::uint32_t>(i) = i;
    graph::queue_change committed;
    CHECK(q.commit_push(w, 3, &committed));   // one packet used, the other given back
    CHECK(committed.packets == -1);
    CHECK(committed.in_use == 1);
    CHECK(meter.packets() == 1);
    CHECK(meter.bytes() == 16);

    graph::push_window full = q.try_reserve_push(1);
    for (std::uint32_t i = 0; i < 4; ++i) full.at<std::uint32_t>(i) = i;
    graph::queue_change filled;
    q.commit_push(full, 4, &filled);   // every reserved packet used: nothing changed
    CHECK(filled.packets == 0);

    graph::pop_window first = q.try_reserve_pop(1), second = q.try_reserve_pop(1);
    REQUIRE(first);
    REQUIRE(second);
    graph::queue_change later, earlier;
    q.commit_pop(second, &later);   // released only with the earlier window
    CHECK(later.packets == 0);
    q.commit_pop(first, &earlier);   // both packets go back in one change
    CHECK(earlier.packets == -2);
    CHECK(earlier.in_use == 0);
    CHECK(meter.packets() == 0);
    CHECK(meter.bytes() == 0);
    CHECK(meter.peak_packets() == 2);
}
