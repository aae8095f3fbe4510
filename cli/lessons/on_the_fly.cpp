// Lesson "on-the-fly": the x264-like encoder under PIPER, whose pipeline is decided while the loop
// runs — which stages an iteration passes and which of them wait depend on the frame type stage 0
// picks — and the same program refused by TBB's construct-and-run pipeline (seed 001 §3, Figs. 2–3,
// §10).
//
// Everything is read back from the recorded pipeline DAG (trace_model.hpp, pipeline_dag): an
// iteration's nodes and which of them were entered through stage_wait (P-frame rows), the cross
// edges, the stages skipped at the start of each iteration (the w·i offset of Fig. 2, line 16) and
// the cross edges that leave a null node of the previous iteration (Fig. 3).
#include "lesson.hpp"

#include <pipescope/workloads/x264.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace pipescope::lessons {

namespace {

namespace tm = pipescope::trace;
namespace ws = pipescope::workloads;

// One iteration of the recorded DAG, as x264's pipeline shaped it.
struct iteration_shape {
    std::uint64_t iteration = 0;
    std::vector<std::uint32_t> nodes;        // indices into the DAG's nodes, by stage
    std::uint64_t first_row_stage = 0;       // the stage of its first macroblock row
    std::size_t rows = 0, waited_rows = 0;   // row-range nodes (rows, and an I-frame's gate), entered with stage_wait
    bool p_frame = false;                    // its first row waits for the previous frame
    bool bframes = false;                    // it passes PROCESS_BFRAMES
};

bool is_row_stage(std::uint64_t stage) { return stage > 0 && stage < ws::x264_stage_bframes; }

std::vector<iteration_shape> shapes_of(const tm::pipeline_dag& dag) {
    std::map<std::uint64_t, iteration_shape> by_iteration;
    for (std::uint32_t k = 0; k < dag.nodes.size(); ++k) {   // sorted by (iteration, stage)
        const tm::dag_node& n = dag.nodes[k];
        iteration_shape& s = by_iteration[n.iteration];
        s.iteration = n.iteration;
        s.nodes.push_back(k);
        if (n.stage == ws::x264_stage_bframes) s.bframes = true;
        if (!is_row_stage(n.stage)) continue;
        if (s.rows == 0) {
            s.first_row_stage = n.stage;
            s.p_frame = n.waited;
        }
        ++s.rows;
        if (n.waited) ++s.waited_rows;
    }
    std::vector<iteration_shape> v;
    for (auto& [i, s] : by_iteration) v.push_back(std::move(s));
    return v;
}

// The run's time as a fraction of the document's span (the viewer's absolute axis).
double fraction_of(const tm::trace_model& m, std::uint64_t t) {
    if (m.last_ts <= m.first_ts) return 0.5;
    return std::clamp(static_cast<double>(t - std::min(t, m.first_ts)) / static_cast<double>(m.last_ts - m.first_ts), 0.0, 1.0);
}

class on_the_fly final : public lesson {
public:
    const char* name() const override { return "on-the-fly"; }
    const char* title() const override {
        return "On-the-fly pipelines: x264's shape is decided as it runs — PIPER runs it, TBB cannot";
    }
    const char* seeds() const override { return "001 §2–3, Figs. 2–3, §10, Figs. 10 and 13"; }

    std::vector<run_spec> runs(const options&) const override {
        // The workload's own GOP (keyint 24, IBBP, scene cuts): I- and P-frame iterations with and
        // without B-frames, so the DAG shows every shape Fig. 2 can make.
        return {{.key = "x264-piper", .workload = "x264", .policy = "piper"}};
    }
    std::vector<refusal_spec> refusals(const options&) const override { return {{"x264-tbb", "x264", "tbb"}}; }

    story tell(const lesson_data& data) const override {
        const recorded& run = data.run("x264-piper");
        const tm::trace_model& m = *run.model;
        const tm::pipeline_dag& dag = m.runs.at(run.report.run).dag;
        const std::vector<iteration_shape> its = shapes_of(dag);

        // Cross edges: into which nodes, and from a real node or from a null node of i-1.
        std::vector<std::uint32_t> cross_into(dag.nodes.size(), 0);
        std::uint64_t cross = 0, from_null = 0;
        for (const tm::dag_edge& e : dag.edges) {
            if (e.kind != tm::dag_edge_kind::cross) continue;
            ++cross;
            ++cross_into[e.to];
            // Its source is the last node of i-1 with stage <= j: a lower stage means (i-1, j) was skipped.
            if (dag.nodes[e.from].stage < dag.nodes[e.to].stage) ++from_null;
        }

        // Frame types, shapes and the conditional dependencies (Fig. 2, lines 19–23).
        std::size_t p_frames = 0, i_frames = 0, with_b = 0;
        bool conditional_edges_hold = !its.empty();
        std::map<std::pair<std::size_t, std::size_t>, std::size_t> shape_count;   // (nodes, waited) -> iterations
        for (const iteration_shape& s : its) {
            (s.p_frame ? p_frames : i_frames)++;
            if (s.bframes) ++with_b;
            std::size_t waited = 0;
            for (std::uint32_t k : s.nodes) waited += dag.nodes[k].waited;
            ++shape_count[{s.nodes.size(), waited}];
            for (std::uint32_t k : s.nodes) {
                const tm::dag_node& n = dag.nodes[k];
                if (!is_row_stage(n.stage)) continue;
                const bool gate = !s.p_frame && n.waited;   // an I-frame's wait for the reference, before its B-frames
                // A P-frame row has exactly one cross edge (iteration 0 has none to have); an I-frame row none.
                if (s.p_frame && s.iteration > 0 && cross_into[k] != 1) conditional_edges_hold = false;
                if (!s.p_frame && !gate && (n.waited || cross_into[k] != 0)) conditional_edges_hold = false;
            }
        }
        std::size_t most_common = 0;
        for (const auto& [shape, n] : shape_count) most_common = std::max(most_common, n);
        const std::size_t other_shapes = its.size() - most_common;

        // Stage skipping (Fig. 2, line 16): iteration i's rows start w·i stages further down.
        std::uint64_t skipped = 0, w = 0;
        bool offset_grows = its.size() >= 2;
        for (const iteration_shape& s : its) {
            if (s.rows == 0) {
                offset_grows = false;
                continue;
            }
            const std::uint64_t skip = s.first_row_stage - 1;
            if (s.iteration == 1) w = skip;
            skipped += skip;
            if (s.iteration > 0 && (w == 0 || skip != w * s.iteration)) offset_grows = false;
        }

        const analysis::dag_bounds& b = run.report.dag;
        const unsigned P = run.spec.workers;
        const refusal* tbb = data.refusals.empty() ? nullptr : &data.refusals.front();
        const bool refused = tbb && !tbb->reason.empty();

        story s;
        s.findings.push_back(
            {"iterations", "pipeline iterations (one per I/P frame; B-frames ride in the iteration after them)",
             static_cast<double>(its.size()), std::to_string(its.size()),
             "001 §3, Fig. 2: stage 0 reads frames up to the next I- or P-frame, buffering the B-frames before it",
             its.size() >= 2 && p_frames > 0 && i_frames > 0,
             "the video had only one frame type: raise frames or lower keyint"});
        s.findings.push_back(
            {"iteration_shapes", "distinct iteration shapes (nodes, nodes entered with stage_wait)",
             static_cast<double>(shape_count.size()), std::to_string(shape_count.size()),
             "001 §1, §3: Cilk-P lets the structure be a function of the data — a variable number of stages across "
             "iterations, and dependencies chosen per frame",
             shape_count.size() >= 2, "every iteration got the same frame type and GOP position"});
        s.findings.push_back(
            {"cross_edges", "cross edges of the DAG — every P-frame row has one, no I-frame row has any",
             static_cast<double>(cross), std::to_string(cross),
             "001 §3, Fig. 2 lines 19–23: a P-frame row runs after pipe_stage_wait, an I-frame row after "
             "pipe_stage — dependencies a construct-and-run pipeline would have to fix for the whole run",
             conditional_edges_hold && cross > 0,
             "a row's cross edge did not follow its frame type: the DAG was not rebuilt from a complete trace"});
        s.findings.push_back(
            {"skipped_stages", "stages skipped at the start of iterations (iteration i's first row is stage 1 + w·i)",
             static_cast<double>(skipped), std::to_string(skipped),
             "001 §3, Fig. 2 line 16: skipping w·i stages turns \"row r + w of the previous frame\" into a cross "
             "edge between equal stage numbers",
             offset_grows && skipped > 0, "the rows did not start w·i stages down"});
        s.findings.push_back(
            {"null_node_edges", "cross edges that leave a null node (a stage the previous iteration skipped)",
             static_cast<double>(from_null), std::to_string(from_null) + " of " + std::to_string(cross),
             "001 Fig. 3: stage skipping produces cross edges into iteration i from null nodes in iteration i − 1; "
             "null nodes add no work and no span",
             from_null > 0, "no P-frame waited for a row past the previous frame's last one"});
        s.findings.push_back(
            {"parallelism", "parallelism T1/T∞ of the recorded DAG (speedup bound min(P, T1/T∞))", b.parallelism,
             fixed(b.parallelism, 2),
             "001 §10, Figs. 10 and 13: Cilk-P's x264 speedup T_S/T_P 2.21 (AMD) and 1.97 (Xeon) on 2 cores, "
             "13.81 and 12.08 on 16",
             b.available && b.parallelism >= static_cast<double>(P),
             "the frames are too few or too small for " + std::to_string(P) + " workers: raise --size"});
        s.findings.push_back(
            {"tbb_refuses", "the tbb policy refuses the same program, with a reason", refused ? 1.0 : 0.0,
             refused ? "refused" : "accepted",
             "001 §10: \"TBB's construct-and-run approach proved inadequate for the on-the-fly nature of x264\"; "
             "no TBB x264 was benchmarked",
             refused, "the tbb policy accepted x264"});

        // Where to look: a P-frame row in the middle of the run (it has a cross edge; near the last row
        // its edge comes from a null node), and an I-frame after the first (its rows do not wait).
        std::pair<std::uint64_t, std::uint64_t> p_node{0, 0}, i_node{0, 0};
        double p_cursor = 0.5, i_cursor = 0.5;
        const iteration_shape* p_it = nullptr;
        const iteration_shape* i_it = nullptr;
        for (const iteration_shape& s : its) {
            if (s.p_frame && s.rows > 0 && (!p_it || s.iteration <= its.size() / 2)) p_it = &s;
            if (!s.p_frame && s.iteration > 0 && s.rows > 0 && !i_it) i_it = &s;
        }
        if (p_it) {
            const tm::dag_node& n = dag.nodes[p_it->nodes[1 + p_it->rows / 2]];
            p_node = {n.iteration, n.stage};
            p_cursor = fraction_of(m, n.start + (n.end - n.start) / 2);
        }
        if (i_it) {
            const tm::dag_node& n = dag.nodes[i_it->nodes[1 + i_it->rows / 2]];
            i_node = {n.iteration, n.stage};
            i_cursor = fraction_of(m, n.start + (n.end - n.start) / 2);
        }
        const auto select_if = [](const iteration_shape* it, std::pair<std::uint64_t, std::uint64_t> node) {
            return it ? std::optional(node) : std::nullopt;
        };

        s.steps.push_back(
            {"What to look at",
             "The pipeline DAG of one x264 run: iterations across, stages down. Each iteration starts with stage "
             "0 (read frames, pick the type), then one node per macroblock row, then the B-frames and the "
             "in-order output. The selected node is row " + std::to_string(p_node.second - (p_it ? p_it->first_row_stage : 0)) +
                 " of P-frame iteration " + std::to_string(p_node.first) + ": its cyan cross edge comes from the "
                 "previous frame's row r + w (w = " + std::to_string(w) + "). Each iteration's rows start w "
                 "stages lower than the last one's — the skipped stages are the hollow null nodes.",
             {"dag", p_cursor, std::nullopt, select_if(p_it, p_node), false}});
        s.steps.push_back(
            {"What the paper found",
             "Lee et al. (seed 001 §3) write x264 as a pipe_while whose shape depends on the data: stage 0 decides "
             "the frame type; a P-frame row waits (pipe_stage_wait) for the reference frame, an I-frame row does "
             "not (pipe_stage); each iteration skips w·i stages so that \"row r + w of frame i − 1\" becomes a "
             "cross edge between equal stage numbers, and the skipped stages become null nodes (Fig. 3). A TBB "
             "pipeline must declare its filters before it runs, so they had no TBB x264 (§10); Cilk-P reached "
             "speedups of 13.81 (AMD) and 12.08 (Xeon) on 16 cores (Figs. 10, 13)." +
                 (i_it ? " Selected now: row " + std::to_string(i_node.second - i_it->first_row_stage) + " of I-frame "
                         "iteration " + std::to_string(i_node.first) + " — no cross edge enters its rows."
                       : std::string()),
             {"dag", i_cursor, std::nullopt, select_if(i_it, i_node), false}});
        s.steps.push_back(
            {"What this run shows",
             std::to_string(its.size()) + " iterations (" + std::to_string(p_frames) + " P-frames, " +
                 std::to_string(i_frames) + " I-frames, " + std::to_string(with_b) + " with B-frames) in " +
                 std::to_string(shape_count.size()) + " shapes — " + std::to_string(other_shapes) +
                 " iterations differ from the most common one; " + std::to_string(cross) + " cross edges, " +
                 std::to_string(from_null) + " of them from null nodes; " + std::to_string(skipped) +
                 " stages skipped at the starts of iterations (w = " + std::to_string(w) + "). The DAG's "
                 "parallelism T1/T∞ is " + fixed(b.parallelism, 2) + ", so the on-the-fly structure leaves room "
                 "for " + fixed(b.speedup_bound, 2) + " of the " + std::to_string(P) + " workers; this run's "
                 "speedup over the serial encoder was " + fixed(b.observed_speedup, 2) + " (a few tens of "
                 "milliseconds on a shared machine; the paper's runs took minutes). On the timeline's lines, "
                 "P-frames wait at their row stages while the previous frame is still encoding its lower rows.",
             {"timeline", std::nullopt, std::pair{0.3, 0.7}, std::nullopt, false}});
        s.steps.push_back(
            {"Refused by tbb",
             (refused ? "The same program under `--policy tbb` is refused before it runs: " + tbb->reason + ". "
                      : std::string("The tbb policy accepted x264 — it should have refused it. ")) +
                 "The stage graph shows the stages as the program describes them: \"stage 1 + w·i + r\" is a "
                 "family of stages whose numbers depend on the iteration and whose waits depend on the frame "
                 "type — nothing a list of filters declared before the loop could say.",
             {"graph", p_cursor, std::nullopt, std::nullopt, false}});
        s.steps.push_back(
            {"Try next",
             "All P-frames (no B-frames, no gate stage): `pipescope run x264 --param bframes=0 -o ippp.pftrace`. A "
             "wider search window skips more stages per iteration: `--param range=40` (w = 3). Every frame an "
             "I-frame: `--param keyint=1` — no cross edges between rows at all. And see the refusal yourself: "
             "`pipescope run x264 --policy tbb`.",
             {"dag", 1.0, std::nullopt, std::nullopt, false}});
        return s;
    }
};

}  // namespace

std::unique_ptr<lesson> make_on_the_fly_lesson() { return std::make_unique<on_the_fly>(); }

}  // namespace pipescope::lessons
