// Traces of stage-graph runs: every graph policy's trace loads without problems, holds one node
// slice per parallel instance and serial resumption, queue counters that respect the capacities of
// bounded queues, and the footprint the analysis reads (seed 004 Table III), which the trace model
// derives as the sum of the queue counters (docs/tracing.md, "Counters").
#include "support/graph_programs.hpp"
#include "support/test_traces.hpp"

#include <pipescope/analysis/report.hpp>
#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

using namespace pipescope;

namespace {

// The metadata `pipescope run` writes for a graph (docs/tracing.md "Metadata"), for a test program.
std::string graph_metadata(const graph::program& g, const std::string& policy, unsigned workers) {
    graph::run_options o;
    o.policy = policy;
    const std::vector<bool> unbounded = graph::unbounded_queues(g, o, workers);
    nlohmann::json stages = nlohmann::json::array(), queues = nlohmann::json::array();
    for (std::size_t s = 0; s < g.stages().size(); ++s)
        stages.push_back({{"index", s},
                          {"name", g.stages()[s].name},
                          {"kind", g.stages()[s].kind == graph::stage_kind::serial ? "serial" : "parallel"}});
    const auto counters = graph::counter_names(g);
    for (graph::queue_id q = 0; q < g.queues().size(); ++q)
        queues.push_back({{"index", q},
                          {"name", g.queues()[q].name},
                          {"capacity_packets", g.queues()[q].shape.capacity_packets},
                          {"packet_elements", g.queues()[q].shape.packet_elements},
                          {"element_bytes", g.queues()[q].element_size},
                          {"ordered", g.queues()[q].shape.ordered},
                          {"backward", g.backward(q)},
                          {"unbounded", bool(unbounded[q])},
                          {"producers", g.producers(q)},
                          {"consumer", g.consumer(q)},
                          {"counter", counters[q]}});
    return nlohmann::json{{"format", "pipescope-run/1"},
                          {"workload", "square-sum"},
                          {"policy", policy},
                          {"workers", workers},
                          {"program", {{"kind", "graph"}, {"stages", stages}, {"queues", queues}}}}
        .dump();
}

// Writes what `rec` recorded of a run of `prog` into a trace file (which the Perfetto checks read
// later) and loads it back.
trace::trace_model write_and_load(const std::string& file, const testing::square_sum& prog, const std::string& policy,
                                  unsigned P, trace::recorder& rec, trace::writer_options options = {}) {
    const auto path = testing::checked_trace_path(file);
    std::filesystem::remove(path);
    {
        trace::perfetto_writer out(path, options);
        out.begin_run({"square-sum · " + policy + " · P=" + std::to_string(P), P, graph_metadata(prog.g, policy, P),
                       graph::counter_names(prog.g)},
                      trace::run_clock::calibrating(rec.start_clock()));
        rec.flush(out.sink());
        out.end_run();
        out.finish();
    }
    trace::trace_model m = trace::load_trace_file(path);
    for (const auto& problem : m.problems) FAIL_CHECK(problem);
    return m;
}

}   // namespace

TEST_CASE("every graph policy's trace holds the run's instances, queue fills and footprint", "[graph][trace][trace-file]") {
    // Node by node, and folded (docs/tracing.md "Detail levels"): a folded slice holds one stage's
    // consecutive instances on one worker and says how many in its `nodes` annotation.
    const auto detail = GENERATE(trace::trace_detail::nodes, trace::trace_detail::folded);
    for (const auto& p : graph::policies()) {
        INFO("policy " << p.name << ", detail " << trace::to_string(detail));
        const unsigned P = 2;
        scheduler s({P});
        trace::recorder rec(s.workers(), 64u << 20);
        rec.set_detail(detail);
        testing::square_sum prog(4000, {.packet_elements = 16, .capacity_packets = 4, .ordered = true});
        s.attach_recorder(&rec);
        const graph::run_stats st = graph::run(s, prog.g, [&] {
            graph::run_options o;
            o.policy = p.name;
            return o;
        }());
        s.attach_recorder(nullptr);
        REQUIRE(prog.sum == prog.expected());
        REQUIRE(rec.dropped_total() == 0);

        const trace::trace_model m =
            write_and_load("graph-" + p.name + "-" + std::string(trace::to_string(detail)) + ".pftrace", prog, p.name, P,
                           rec);
        REQUIRE(m.runs.size() == 1);

        // One node per parallel instance (stage 1 · square) and per serial resumption.
        std::uint64_t square_nodes = 0, nodes = 0, folded_slices = 0, reserves = 0, commits = 0;
        for (const auto& t : m.tracks) {
            if (t.worker < 0) continue;
            for (const auto& sl : t.slices) {
                const std::string& name = m.str(sl.name);
                if (name.rfind("stage", 0) != 0) continue;
                const std::uint64_t held = m.uint_arg(sl, "nodes").value_or(1);
                nodes += held;
                folded_slices += held > 1;
                if (name.rfind("stage 1", 0) == 0) square_nodes += held;
            }
            for (const auto& i : t.instants) {
                reserves += m.str(i.name).rfind("reserve", 0) == 0;
                commits += m.str(i.name).rfind("commit", 0) == 0;
            }
        }
        CHECK(square_nodes == st.instances);
        CHECK(nodes == st.instances + st.resumptions);
        if (detail == trace::trace_detail::nodes) {
            CHECK(folded_slices == 0);
            CHECK(commits >= 3 * st.instances);   // input, output, and the sink's pops
            CHECK(reserves >= commits / 2);
        } else if (p.name == "danbi" || p.name == "breadth-first") {
            CHECK(folded_slices > 0);   // they keep a worker on one stage; the others rarely repeat one
        }

        // The analysis reads the fills and the footprint back.
        const auto scope = analysis::scope_of(m, 0);
        const analysis::run_report rep = analysis::analyze(scope);
        REQUIRE(rep.graph.available);
        REQUIRE(rep.graph.queues.size() == 2);
        for (const auto& q : rep.graph.queues) {
            INFO("queue " << q.name);
            CHECK(q.samples > 0);
            CHECK(q.peak_packets >= 1);
            CHECK_FALSE(q.over_capacity);
            if (!q.unbounded) CHECK(q.peak_packets <= q.capacity_packets);
        }
        // The footprint is derived from the queue counters. At P = 2 with the counters coalesced per
        // thread (quantum 1 µs) its peak is not exact: a moment of the sum is made of values that two
        // threads' clocks stamped and the writer may have coalesced, so it can miss the true peak or
        // combine fills that never coexisted. What always holds: every queue's peak is recorded,
        // so the sum reaches the largest of them, and it never exceeds their sum. (Exact at P = 1
        // with every sample written: the next test.)
        REQUIRE(rep.graph.footprint_derived);
        double largest_queue = 0, queues_summed = 0;
        for (const auto& q : rep.graph.queues)
            largest_queue = std::max(largest_queue, q.peak_packets), queues_summed += q.peak_packets;
        CHECK(rep.graph.peak_packets >= largest_queue);
        CHECK(rep.graph.peak_packets <= queues_summed);
        CHECK(rep.graph.peak_bytes == rep.graph.peak_packets * 16 * sizeof(std::uint64_t));
        CHECK_FALSE(rep.dag.available);   // a graph has no pipeline DAG
        CHECK(analysis::to_text(rep).find("queues (stage graph") != std::string::npos);
    }
}

namespace {

// The value of a counter track at ts: its latest sample at or before ts (0 before the first).
double value_at(const trace::track& t, std::uint64_t ts) {
    auto it = std::upper_bound(t.counters.begin(), t.counters.end(), ts,
                               [](std::uint64_t x, const trace::counter_sample& c) { return x < c.ts; });
    return it == t.counters.begin() ? 0.0 : std::prev(it)->value;
}

const trace::track* run_track(const trace::trace_model& m, std::string_view name) {
    for (std::uint32_t ti : m.runs.at(0).tracks)
        if (m.tracks[ti].name == name) return &m.tracks[ti];
    return nullptr;
}

}   // namespace

// One worker, every sample written (counter quantum 0): the derived footprint is exact. At each of its
// samples it equals the sum of every queue's value there, it has one sample per moment a queue
// changed, and its peak is the run's own, in packets and in bytes.
TEST_CASE("the trace model's footprint of a one-worker graph run is the exact sum of its fills",
          "[graph][trace][model][trace-file]") {
    for (const std::string policy : {"gramps", "breadth-first"}) {
        INFO("policy " << policy);
        scheduler s({1});
        trace::recorder rec(s.workers(), 64u << 20);
        testing::square_sum prog(4000, {.packet_elements = 16, .capacity_packets = 4, .ordered = true});
        s.attach_recorder(&rec);
        graph::run_options o;
        o.policy = policy;
        const graph::run_stats st = graph::run(s, prog.g, o);
        s.attach_recorder(nullptr);
        REQUIRE(prog.sum == prog.expected());
        REQUIRE(rec.dropped_total() == 0);
        const trace::trace_model m =
            write_and_load("graph-footprint-" + policy + "-P1.pftrace", prog, policy, 1, rec, {.counter_quantum_ns = 0});
        const trace::track* packets = run_track(m, "footprint packets");
        const trace::track* bytes = run_track(m, "footprint bytes");
        REQUIRE(packets);
        REQUIRE(bytes);
        CHECK(packets->derived);
        CHECK(bytes->derived);
        std::vector<const trace::track*> queues;
        std::set<std::uint64_t> moments;
        for (const auto& q : prog.g.queues()) {
            queues.push_back(run_track(m, "queue " + q.name + " packets"));
            REQUIRE(queues.back());
            CHECK_FALSE(queues.back()->derived);
            for (const auto& c : queues.back()->counters) moments.insert(c.ts);
        }
        CHECK(packets->counters.size() == moments.size());
        double peak = 0;
        for (std::size_t i = 0; i < packets->counters.size(); ++i) {
            const trace::counter_sample& c = packets->counters[i];
            double sum = 0;
            for (const trace::track* q : queues) sum += value_at(*q, c.ts);
            CHECK(c.value == sum);
            CHECK(bytes->counters[i].value == sum * 16 * sizeof(std::uint64_t));
            peak = std::max(peak, c.value);
        }
        CHECK(peak == static_cast<double>(st.peak_packets));
        const analysis::run_report rep = analysis::analyze(analysis::scope_of(m, 0));
        CHECK(rep.graph.footprint_derived);
        CHECK(rep.graph.peak_packets == static_cast<double>(st.peak_packets));
        CHECK(rep.graph.peak_bytes == static_cast<double>(st.peak_bytes));
    }
}

// A hand-written run: two workers change two queues of different packet sizes; the derived series
// is the sum at each distinct moment (changes stamped alike are applied together). A trace that
// recorded its footprint (written before the footprint was derived) keeps its own counters.
TEST_CASE("the trace model derives a graph run's footprint from its queue counters", "[graph][trace][model]") {
    using trace::event_kind;
    const std::string meta = R"({"format": "pipescope-run/1", "workload": "hand", "policy": "gramps", "workers": 2,
        "program": {"kind": "graph", "stages": [], "queues": [
            {"index": 0, "name": "a", "element_bytes": 8, "packet_elements": 4, "counter": "queue a packets"},
            {"index": 1, "name": "b", "element_bytes": 4, "packet_elements": 2}]}})";
    auto rec = [](std::uint64_t ticks, std::uint64_t counter, std::uint64_t value) {
        return trace::event_record{ticks, counter, value, 0, event_kind::counter, 0, 0};
    };
    // Ticks are nanoseconds: origin 0, one ns per tick.
    const auto clock = [] { return trace::run_clock::fixed(trace::tick_converter({0, 0}, {1000, 1000}), 0); };
    const std::vector<trace::event_record> worker0 = {rec(100, 0, 1), rec(300, 0, 2), rec(500, 0, 0)};
    const std::vector<trace::event_record> worker1 = {rec(200, 1, 3), rec(300, 1, 1), rec(600, 1, 0)};

    SECTION("derived") {
        std::ostringstream file;
        {
            trace::perfetto_writer out(file, {.counter_quantum_ns = 0});
            out.begin_run({"hand · gramps · P=2", 2, meta, {"queue a packets", "queue b packets"}}, clock());
            out.add_chunk(0, worker0.data(), worker0.size());
            out.add_chunk(1, worker1.data(), worker1.size());
            out.end_run();
            out.finish();
        }
        const trace::trace_model m = trace::load_trace(file.str());
        for (const auto& problem : m.problems) FAIL_CHECK(problem);
        const trace::track* a = run_track(m, "queue a packets");
        const trace::track* packets = run_track(m, "footprint packets");
        const trace::track* bytes = run_track(m, "footprint bytes");
        REQUIRE(a);
        REQUIRE(packets);
        REQUIRE(bytes);
        CHECK(packets->derived);
        CHECK(packets->kind == trace::track_kind::counter);
        CHECK(packets->parent == m.runs[0].track);
        const std::uint64_t t0 = a->counters.at(0).ts;   // the run's 100 ns
        const std::vector<std::pair<std::uint64_t, double>> want_packets = {{0, 1}, {100, 4}, {200, 3}, {400, 1}, {500, 0}};
        const std::vector<double> want_bytes = {32, 32 + 3 * 8, 2 * 32 + 8, 8, 0};
        REQUIRE(packets->counters.size() == want_packets.size());
        REQUIRE(bytes->counters.size() == want_bytes.size());
        for (std::size_t i = 0; i < want_packets.size(); ++i) {
            INFO("sample " << i);
            CHECK(packets->counters[i].ts == t0 + want_packets[i].first);
            CHECK(packets->counters[i].value == want_packets[i].second);
            CHECK(bytes->counters[i].ts == packets->counters[i].ts);
            CHECK(bytes->counters[i].value == want_bytes[i]);
        }
        const analysis::run_report rep = analysis::analyze(analysis::scope_of(m, 0));
        CHECK(rep.graph.available);
        CHECK(rep.graph.footprint_derived);
        CHECK(rep.graph.peak_packets == 4);
        CHECK(rep.graph.peak_bytes == 2 * 32 + 8);
    }
    SECTION("recorded") {
        std::vector<trace::event_record> footprint = worker0;
        footprint.push_back(rec(700, 2, 9));
        footprint.push_back(rec(700, 3, 99));
        std::ostringstream file;
        {
            trace::perfetto_writer out(file, {.counter_quantum_ns = 0});
            out.begin_run({"hand · gramps · P=1",
                           1,
                           meta,
                           {"queue a packets", "queue b packets", "footprint packets", "footprint bytes"}},
                          clock());
            out.add_chunk(0, footprint.data(), footprint.size());
            out.end_run();
            out.finish();
        }
        const trace::trace_model m = trace::load_trace(file.str());
        std::size_t named = 0;
        for (std::uint32_t ti : m.runs.at(0).tracks) {
            const trace::track& t = m.tracks[ti];
            if (t.name != "footprint packets" && t.name != "footprint bytes") continue;
            ++named;
            CHECK_FALSE(t.derived);
            REQUIRE(t.counters.size() == 1);
            CHECK(t.counters[0].value == (t.name == "footprint packets" ? 9 : 99));
        }
        CHECK(named == 2);
        CHECK_FALSE(analysis::analyze(analysis::scope_of(m, 0)).graph.footprint_derived);
    }
}
