// Traces of stage-graph runs: every graph policy's trace loads without problems, holds one node
// slice per parallel instance and serial resumption, queue counters that respect the capacities of
// bounded queues, and the footprint counters the analysis reads (seed 004 Table III).
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

#include <filesystem>

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

}  // namespace

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

        const auto path =
            testing::checked_trace_path("graph-" + p.name + "-" + std::string(trace::to_string(detail)) + ".pftrace");
        std::filesystem::remove(path);
        {
            trace::perfetto_writer out(path);
            out.begin_run({"square-sum · " + p.name + " · P=2", P, graph_metadata(prog.g, p.name, P), graph::counter_names(prog.g)},
                          trace::run_clock::calibrating(rec.start_clock()));
            rec.flush(out.sink());
            out.end_run();
            out.finish();
        }
        const trace::trace_model m = trace::load_trace_file(path);
        for (const auto& problem : m.problems) FAIL_CHECK(problem);
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
        CHECK(rep.graph.peak_packets >= 1);
        CHECK(rep.graph.peak_packets <= static_cast<double>(st.peak_packets));
        CHECK(rep.graph.peak_bytes == rep.graph.peak_packets * 16 * sizeof(std::uint64_t));
        CHECK_FALSE(rep.dag.available);   // a graph has no pipeline DAG
        CHECK(analysis::to_text(rep).find("queues (stage graph") != std::string::npos);
    }
}
