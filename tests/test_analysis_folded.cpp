// The analysis of folded traces (docs/tracing.md, "Detail levels"; docs/analysis.md, "Folded traces"):
// a folded slice counts the nodes it holds, each node gets an equal share of its time, the DAG keeps
// it as one block. The same deterministic program recorded at P = 1 node by node and folded gives
// the same node counts (per worker, per stage, iterations, in all) and the same DAG once the blocks
// are expanded into their nodes; a hand-written pair of traces with the same times gives the same
// per-stage totals and work T1 (the shares are whole ns that add up to the block).
#include <pipescope/analysis/report.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include "support/pipescope_run_builder.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace an = pipescope::analysis;
namespace tr = pipescope::trace;
using namespace pipescope;

namespace {

constexpr unsigned fib_n = 1500, fib_bits = 64, fib_K = 4;

// pipe-fib at P = 1 recorded at `detail` and written as `pipescope run` writes it (with the
// trace.detail metadata), read back.
tr::trace_model record_pipe_fib(tr::trace_detail detail) {
    scheduler s({1});
    tr::recorder rec(s.workers(), 256u << 20);
    rec.set_detail(detail);
    s.attach_recorder(&rec);
    pipeline_options o;
    o.throttle = fib_K;
    REQUIRE(workloads::pipe_fib_pipeline(s, fib_n, fib_bits, o) == workloads::pipe_fib_serial(fib_n));
    s.attach_recorder(nullptr);
    std::vector<tr::event_record> events;
    rec.flush([&](unsigned, const tr::event_record* p, std::size_t n) { events.insert(events.end(), p, p + n); });
    REQUIRE(rec.dropped_total() == 0);
    const tr::clock_sample start = rec.start_clock(), end = tr::clock_sample::take();
    const tr::tick_converter conv(start, end);
    std::ostringstream bytes;
    tr::perfetto_writer out(bytes, {true, 1});
    const std::string meta = std::string(R"({"workload":"pipe-fib","policy":"piper","workers":1,"trace":{"detail":")") +
                             std::string(tr::to_string(detail)) +
                             R"(","fold_below_ns":2000},"program":{"kind":"pipeline","K":4}})";
    out.begin_run({"pipe-fib · piper · P=1", 1, meta, {}}, tr::run_clock::fixed(conv, start.ticks));
    out.add_chunk(0, events.data(), events.size());
    out.end_run();
    out.finish();
    tr::trace_model m = tr::load_trace(bytes.str());
    for (const auto& p : m.problems) FAIL_CHECK(p);
    REQUIRE(m.runs.size() == 1);
    return m;
}

using node_key = std::pair<std::uint64_t, std::uint64_t>;   // (iteration, stage)
using edge_key = std::tuple<node_key, node_key, tr::dag_edge_kind>;

std::set<node_key> expanded_nodes(const tr::pipeline_dag& d) {
    std::set<node_key> out;
    for (const auto& n : d.nodes)
        for (std::uint64_t j = n.stage; j <= n.last_stage; ++j) out.insert({n.iteration, j});
    return out;
}

std::map<std::uint64_t, std::uint64_t> runs_per_stage(const an::run_report& r) {
    std::map<std::uint64_t, std::uint64_t> out;
    for (const auto& s : r.stats.stages) out[s.index] = s.service.count;
    return out;
}

std::uint64_t stage_total(const an::run_report& r) {
    std::uint64_t t = 0;
    for (const auto& s : r.stats.stages) t += s.service.total;
    return t;
}

}   // namespace

TEST_CASE("folded analysis: a folded trace counts the same nodes as a node trace of the same program (P = 1)",
          "[analysis][folded]") {
    const tr::trace_model mn = record_pipe_fib(tr::trace_detail::nodes), mf = record_pipe_fib(tr::trace_detail::folded);
    const an::run_report rn = an::analyze(an::scope_of(mn, 0)), rf = an::analyze(an::scope_of(mf, 0));
    REQUIRE(rn.stats.folded_runs == 0);
    REQUIRE(rf.stats.folded_runs > 0);
    INFO(rf.stats.folded_runs << " folded runs hold " << rf.stats.folded_nodes << " of " << rf.stats.nodes << " nodes");

    // Node totals: in all, per worker, per stage; iterations; the DAG's nodes.
    CHECK(rf.stats.nodes == rn.stats.nodes);
    CHECK(rf.stats.nodes == mf.runs[0].dag.node_count);
    CHECK(rf.breakdown.total.nodes == rn.breakdown.total.nodes);
    CHECK(rf.breakdown.total.nodes == rf.stats.nodes);
    CHECK(rf.breakdown.total.folded_runs == rf.stats.folded_runs);
    CHECK(rf.stats.iterations == rn.stats.iterations);
    CHECK(runs_per_stage(rf) == runs_per_stage(rn));
    std::uint64_t shares = 0;
    for (const auto& s : rf.stats.stages) shares += s.shares;
    CHECK(shares == rf.stats.folded_nodes);
    CHECK(rf.dag.nodes == rn.dag.nodes);
    CHECK(rf.dag.iterations == rn.dag.iterations);
    CHECK(rf.dag.blocks < rn.dag.blocks);
    CHECK(rf.dag.folded_blocks > 0);
    CHECK(rn.dag.blocks == rn.dag.nodes);

    // Work T1 over blocks is the sum of the stages' service times (the shares add up to each block),
    // within rounding: each stage's total is rounded to whole ns.
    CHECK(static_cast<double>(rf.dag.work) ==
          Approx(static_cast<double>(stage_total(rf))).margin(0.5 * rf.stats.stages.size()));
    CHECK(rn.dag.work == stage_total(rn));

    // Approximate: said in the report, as text and JSON; a node trace is exact.
    CHECK(rf.dag.approximate);
    CHECK_FALSE(rn.dag.approximate);
    const auto jf = an::to_json(rf), jn = an::to_json(rn);
    CHECK(jf["dag"]["approximate"] == true);
    CHECK(jf["dag"]["approximate_reason"].get<std::string>().find("upper bound") != std::string::npos);
    CHECK(jn["dag"]["approximate"] == false);
    CHECK(jn["dag"]["approximate_reason"].is_null());
    CHECK(jf["dag"]["nodes"] == rn.dag.nodes);
    CHECK(jf["run"]["nodes"] == rn.stats.nodes);
    CHECK(jf["trace"]["detail"] == "folded");
    CHECK(jf["trace"]["folded_runs"] == rf.stats.folded_runs);
    CHECK(jf["trace"]["folded_nodes"] == rf.stats.folded_nodes);
    CHECK(jn["trace"]["folded_runs"] == 0);
    const std::string tf = an::to_text(rf), tn = an::to_text(rn);
    CHECK(tf.find("trace detail folded: ") != std::string::npos);
    CHECK(tf.find("folded runs hold " + std::to_string(rf.stats.folded_nodes) + " of the " + std::to_string(rf.stats.nodes) +
                  " nodes") != std::string::npos);
    CHECK(tf.find("approximate: folded trace") != std::string::npos);
    CHECK(tf.find("span Tinf <= ") != std::string::npos);
    CHECK(tn.find("trace detail") == std::string::npos);
    CHECK(tn.find("approximate") == std::string::npos);
}

TEST_CASE("folded analysis: the DAG of a folded trace has the same nodes and edges as the DAG of a node trace (P = 1)",
          "[analysis][folded][dag]") {
    const tr::trace_model mn = record_pipe_fib(tr::trace_detail::nodes), mf = record_pipe_fib(tr::trace_detail::folded);
    const tr::pipeline_dag &dn = mn.runs[0].dag, &df = mf.runs[0].dag;
    REQUIRE(dn.folded_blocks == 0);
    REQUIRE(df.folded_blocks > 0);
    // Blocks expanded into their nodes: the same set, and as many as the model counts.
    const std::set<node_key> nodes_n = expanded_nodes(dn), nodes_f = expanded_nodes(df);
    CHECK(nodes_f == nodes_n);
    CHECK(nodes_f.size() == df.node_count);
    CHECK(nodes_n.size() == dn.nodes.size());

    // The node trace's edges, node to node.
    auto key = [](const tr::dag_node& n, bool last) { return node_key{n.iteration, last ? n.last_stage : n.stage}; };
    std::set<edge_key> edges_n;
    for (const auto& e : dn.edges) edges_n.insert({key(dn.nodes[e.from], false), key(dn.nodes[e.to], false), e.kind});

    // The folded trace's edges between blocks, as the node edges they stand for: a stage or throttle
    // edge leaves a block's last node and enters the next one's first; a retire edge joins last
    // nodes; a cross edge into a node comes from the node of i-1 holding the highest stage <= its
    // stage. A cross edge into a folded block stands for the waits of any of its nodes: compared the
    // other way round below.
    std::set<edge_key> edges_f;
    std::size_t into_blocks = 0;
    for (const auto& e : df.edges) {
        const tr::dag_node &u = df.nodes[e.from], &v = df.nodes[e.to];
        switch (e.kind) {
            case tr::dag_edge_kind::stage:
            case tr::dag_edge_kind::throttle: edges_f.insert({key(u, true), key(v, false), e.kind}); break;
            case tr::dag_edge_kind::retire: edges_f.insert({key(u, true), key(v, true), e.kind}); break;
            case tr::dag_edge_kind::cross:
                if (v.folded()) ++into_blocks;
                else edges_f.insert({{u.iteration, std::min(u.last_stage, v.stage)}, key(v, false), e.kind});
                break;
        }
    }
    INFO(into_blocks << " cross edges into folded blocks");
    // Every edge of the folded DAG is an edge of the node DAG.
    for (const auto& e : edges_f) {
        INFO("edge (" << std::get<0>(e).first << ", " << std::get<0>(e).second << ") -> (" << std::get<1>(e).first << ", "
                      << std::get<1>(e).second << ") " << tr::to_string(std::get<2>(e)));
        CHECK(edges_n.count(e) == 1);
    }
    // Every edge of the node DAG is one of the folded DAG's, except stage edges inside a block
    // (implicit) and the cross edges into a block's nodes, which its block's cross edge covers: from
    // a block of i-1 holding a stage at or after the edge's source.
    for (const auto& e : edges_n) {
        const auto [from, to, kind] = e;
        const std::uint32_t bf = df.find(from.first, from.second), bt = df.find(to.first, to.second);
        REQUIRE(bf != tr::no_index);
        REQUIRE(bt != tr::no_index);
        if (kind == tr::dag_edge_kind::stage && bf == bt) continue;
        if (kind == tr::dag_edge_kind::cross && df.nodes[bt].folded()) {
            bool covered = false;
            for (const auto& fe : df.edges)
                if (fe.to == bt && fe.kind == tr::dag_edge_kind::cross && df.nodes[fe.from].iteration == from.first &&
                    df.nodes[fe.from].last_stage >= from.second)
                    covered = true;
            CHECK(covered);
            continue;
        }
        INFO("edge (" << from.first << ", " << from.second << ") -> (" << to.first << ", " << to.second << ") "
                      << tr::to_string(kind));
        CHECK(edges_f.count(e) == 1);
    }
}

namespace {

// Three iterations of stages 0..2 on one worker, back to back: iteration i's nodes last 4 + i ns
// each, written node by node or (folded) as one slice per iteration; the shares of a block of 3
// nodes are then the nodes' durations.
std::string hand_trace(bool folded, const std::string& detail, const std::string& decision = "") {
    pipescope::test::trace_builder b;
    pipescope::test::pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 1};
    r.describe("hand · piper · P=1", R"({"workload":"hand","policy":"piper","workers":1,"trace":{"detail":")" + detail +
                                         R"(","fold_below_ns":2000},"program":{"kind":"pipeline","K":2}})");
    std::uint64_t t = 10;
    if (!decision.empty())
        r.mark(0, 5, "trace detail: " + decision, {{"value", decision == "folded" ? 350u : 5200u}, {"nodes", 1024}});
    for (std::uint64_t i = 0; i < 3; ++i) {
        if (folded) {
            b.slice_begin(t, r.worker(0), "stage 0\u20132",
                          {{"iteration", i}, {"stage", 0}, {"nodes", 3}, {"last_stage", 2}, {"last_iteration", i}},
                          r.worker_seq(0));
            b.slice_end(t + 3 * (4 + i), r.worker(0), r.worker_seq(0));
            t += 3 * (4 + i);
        } else {
            for (std::uint64_t j = 0; j < 3; ++j) {
                r.node(0, i, j, t, t + 4 + i, j == 2 && i > 0);
                t += 4 + i;
            }
        }
        t += 5;   // the iteration boundary
    }
    r.end_marker(t);
    return std::string(b.view());
}

}   // namespace

TEST_CASE("folded analysis: with the same times, per-stage totals and T1 equal a node trace's within rounding",
          "[analysis][folded]") {
    const std::string bn = hand_trace(false, "nodes"), bf = hand_trace(true, "auto", "folded");
    const tr::trace_model mn = tr::load_trace(bn), mf = tr::load_trace(bf);
    for (const auto& p : mf.problems) FAIL_CHECK(p);
    REQUIRE(mf.runs.size() == 1);
    const an::run_report rn = an::analyze(an::scope_of(mn, 0)), rf = an::analyze(an::scope_of(mf, 0));
    REQUIRE(rf.stats.folded_runs == 3);
    CHECK(rf.stats.folded_nodes == 9);
    CHECK(rf.stats.nodes == 9);
    CHECK(rn.stats.nodes == 9);
    CHECK(rf.breakdown.workers.at(0).nodes == 9);
    CHECK(rf.breakdown.workers.at(0).folded_runs == 3);
    CHECK(rf.stats.iterations == 3);
    REQUIRE(rf.stats.stages.size() == 3);
    REQUIRE(rn.stats.stages.size() == 3);
    for (std::size_t j = 0; j < 3; ++j) {
        INFO("stage " << j);
        CHECK(rf.stats.stages[j].service.count == 3);
        CHECK(rf.stats.stages[j].shares == 3);
        CHECK(rn.stats.stages[j].shares == 0);
        CHECK(rf.stats.stages[j].service.total == rn.stats.stages[j].service.total);
        CHECK(rf.stats.stages[j].service.total == 15);
        CHECK(rf.stats.stages[j].service.max == rn.stats.stages[j].service.max);
        CHECK(rf.stats.stages[j].service.p50 == rn.stats.stages[j].service.p50);
        CHECK(rf.stats.stages[j].service.mean == Approx(rn.stats.stages[j].service.mean));
        // the longest node of a folded stage cites its block (iteration 2's, 18 ns)
        CHECK(rf.stats.stages[j].longest.end - rf.stats.stages[j].longest.begin == 18);
        CHECK(rf.stats.stages[j].longest.iteration == 2);
    }
    CHECK(rf.dag.work == 45);
    CHECK(rn.dag.work == 45);
    CHECK(rf.dag.nodes == 9);
    CHECK(rf.dag.blocks == 3);
    CHECK(rf.dag.folded_blocks == 3);
    // The span over blocks bounds the span over nodes from above.
    CHECK(rf.dag.with_throttle.span >= rn.dag.with_throttle.span);
    CHECK(an::path_nodes(rf.dag.with_throttle) == 9);   // the three blocks, one after the other
    // The critical path's time by stage: each block's time shared among its stages.
    const auto by_stage = an::path_time_by_stage(rf.dag.with_throttle);
    std::uint64_t sum = 0;
    for (const auto& [j, ns] : by_stage) sum += ns;
    CHECK(sum == rf.dag.with_throttle.span);
    REQUIRE(by_stage.size() == 3);
    CHECK(by_stage.front().first == 0);   // a third of each block: 15 ns per stage, ties in stage order
    CHECK(by_stage.front().second == 15);

    // Where auto decided: one line with the time, the worker, the nodes measured and their mean.
    REQUIRE(rf.stats.detail_decisions.size() == 1);
    CHECK(rf.stats.detail_decisions[0].folded);
    CHECK(rf.stats.detail_decisions[0].mean_node_ns == 350);
    CHECK(rf.stats.detail_decisions[0].nodes_measured == 1024);
    const std::string text = an::to_text(rf);
    INFO(text);
    CHECK(
        text.find(
            "trace detail auto: folded from 5 ns on after worker 0 measured 1024 nodes at a mean of 350 ns < 2.00 \xC2\xB5s; "
            "3 folded runs hold 9 of the 9 nodes (100.0 %)") != std::string::npos);
    CHECK(text.find("approximate: folded trace: 3 of 3 DAG blocks are folded runs (9 nodes in all)") != std::string::npos);
    CHECK(text.find("critical path: 9 nodes in 3 blocks (3 folded runs)") != std::string::npos);
    CHECK(text.find("(0,0\xE2\x80\x93"
                    "2)") != std::string::npos);
    const auto j = an::to_json(rf);
    CHECK(j["trace"]["detail"] == "auto");
    CHECK(j["trace"]["fold_below_ns"] == 2000);
    REQUIRE(j["trace"]["decisions"].size() == 1);
    CHECK(j["trace"]["decisions"][0]["mean_node_ns"] == 350);
    CHECK(j["trace"]["decisions"][0]["worker"] == 0);
    CHECK(j["stages"][0]["shares"] == 3);
    CHECK(j["dag"]["critical_path"][0]["nodes"] == 3);
    CHECK(j["dag"]["critical_path"][0]["last_stage"] == 2);
}

TEST_CASE("folded analysis: auto that kept every node says so, a node trace says nothing", "[analysis][folded]") {
    const tr::trace_model ma = tr::load_trace(hand_trace(false, "auto", "nodes")),
                          mn = tr::load_trace(hand_trace(false, "nodes"));
    const an::run_report ra = an::analyze(an::scope_of(ma, 0)), rn = an::analyze(an::scope_of(mn, 0));
    REQUIRE(ra.stats.detail_decisions.size() == 1);
    CHECK_FALSE(ra.stats.detail_decisions[0].folded);
    CHECK(ra.stats.folded_runs == 0);
    CHECK_FALSE(ra.dag.approximate);
    const std::string text = an::to_text(ra);
    INFO(text);
    CHECK(
        text.find("trace detail auto: every node recorded (decided at 5 ns) after worker 0 measured 1024 nodes at a mean of "
                  "5.20 \xC2\xB5s >= 2.00 \xC2\xB5s; no folded runs: every node is its own slice") != std::string::npos);
    for (const auto& v : ra.verdicts) CHECK(v.rule != "folded_trace");
    CHECK(an::to_text(rn).find("trace detail") == std::string::npos);
    CHECK(an::to_json(rn)["trace"]["detail"] == "nodes");
}
