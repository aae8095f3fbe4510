// Lesson "on-the-fly": the x264-like encoder under PIPER, whose pipeline is decided while the loop
// runs — which stages an iteration passes and which of them wait depend on the frame type stage 0
// picks — and the same program refused by TBB's construct-and-run pipeline (seed 001 §3, Figs. 2–3,
// §10).
//
// Everything is read back from the recorded pipeline DAG (trace_model.hpp, pipeline_dag): an
// iteration's nodes and which of them were entered through stage_wait (P-frame rows), the cross
// edges, the stages skipped at the start of each iteration (the w·i offset of Fig. 2, line 16) and
// the cross edges that leave a null node of the previous iteration (Fig. 3).
#include <pipescope/lessons/lesson.hpp>

#include <pipescope/workloads/x264.hpp>

#include <algorithm>
#include <map>
#include <optional>
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
    return std::clamp(static_cast<double>(t - std::min(t, m.first_ts)) / static_cast<double>(m.last_ts - m.first_ts), 0.0,
                      1.0);
}

// What the story quotes, measured from the recorded DAG and the refusal.
struct measures {
    std::size_t iterations = 0, p_frames = 0, i_frames = 0, with_b = 0;
    std::size_t shapes = 0, other_shapes = 0;   // distinct (nodes, waited) shapes; iterations not of the most common
    bool conditional_edges_hold = false;        // P-frame rows have one cross edge, I-frame rows none
    std::uint64_t cross = 0, from_null = 0;     // cross edges, those leaving a null node of i-1
    std::uint64_t skipped = 0, w = 0;           // stages skipped at iteration starts; w (iteration 1's skip)
    bool offset_grows = false;                  // iteration i's rows start w·i stages down
    analysis::dag_bounds bounds;
    unsigned P = 0;
    const refusal* tbb = nullptr;
    bool refused = false;
};

// Cross edges, frame types, iteration shapes and the conditional dependencies (Fig. 2, lines 19–23).
void measure_edges_and_shapes(const tm::pipeline_dag& dag, const std::vector<iteration_shape>& its, measures& m) {
    std::vector<std::uint32_t> cross_into(dag.nodes.size(), 0);
    for (const tm::dag_edge& e : dag.edges) {
        if (e.kind != tm::dag_edge_kind::cross) continue;
        ++m.cross;
        ++cross_into[e.to];
        // Its source is the last node of i-1 with stage <= j: a lower stage means (i-1, j) was skipped.
        if (dag.nodes[e.from].stage < dag.nodes[e.to].stage) ++m.from_null;
    }
    m.conditional_edges_hold = !its.empty();
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> shape_count;   // (nodes, waited) -> iterations
    for (const iteration_shape& s : its) {
        (s.p_frame ? m.p_frames : m.i_frames)++;
        if (s.bframes) ++m.with_b;
        std::size_t waited = 0;
        for (std::uint32_t k : s.nodes) waited += dag.nodes[k].waited;
        ++shape_count[{s.nodes.size(), waited}];
        for (std::uint32_t k : s.nodes) {
            const tm::dag_node& n = dag.nodes[k];
            if (!is_row_stage(n.stage)) continue;
            const bool gate = !s.p_frame && n.waited;   // an I-frame's wait for the reference, before its B-frames
            // A P-frame row has exactly one cross edge (iteration 0 has none to have); an I-frame row none.
            if (s.p_frame && s.iteration > 0 && cross_into[k] != 1) m.conditional_edges_hold = false;
            if (!s.p_frame && !gate && (n.waited || cross_into[k] != 0)) m.conditional_edges_hold = false;
        }
    }
    std::size_t most_common = 0;
    for (const auto& [shape, n] : shape_count) most_common = std::max(most_common, n);
    m.shapes = shape_count.size();
    m.other_shapes = its.size() - most_common;
}

// Stage skipping (Fig. 2, line 16): iteration i's rows start w·i stages further down.
void measure_skipping(const std::vector<iteration_shape>& its, measures& m) {
    m.offset_grows = its.size() >= 2;
    for (const iteration_shape& s : its) {
        if (s.rows == 0) {
            m.offset_grows = false;
            continue;
        }
        const std::uint64_t skip = s.first_row_stage - 1;
        if (s.iteration == 1) m.w = skip;
        m.skipped += skip;
        if (s.iteration > 0 && (m.w == 0 || skip != m.w * s.iteration)) m.offset_grows = false;
    }
}

// A row node to select: the middle row of an iteration, and where the replay cursor shows it running.
struct row_place {
    const iteration_shape* it = nullptr;
    std::pair<std::uint64_t, std::uint64_t> node{0, 0};
    double cursor = 0.5;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> select() const { return it ? std::optional(node) : std::nullopt; }
    std::uint64_t row() const { return node.second - (it ? it->first_row_stage : 0); }
};

row_place middle_row(const tm::trace_model& m, const tm::pipeline_dag& dag, const iteration_shape* it) {
    row_place r;
    r.it = it;
    if (it) {
        const tm::dag_node& n = dag.nodes[it->nodes[1 + it->rows / 2]];
        r.node = {n.iteration, n.stage};
        r.cursor = fraction_of(m, n.start + (n.end - n.start) / 2);
    }
    return r;
}

// Where to look: a P-frame row in the middle of the run (it has a cross edge; near the last row its
// edge comes from a null node), and an I-frame after the first (its rows do not wait).
std::pair<row_place, row_place> p_and_i_rows(const tm::trace_model& m, const tm::pipeline_dag& dag,
                                             const std::vector<iteration_shape>& its) {
    const iteration_shape* p_it = nullptr;
    const iteration_shape* i_it = nullptr;
    for (const iteration_shape& s : its) {
        if (s.p_frame && s.rows > 0 && (!p_it || s.iteration <= its.size() / 2)) p_it = &s;
        if (!s.p_frame && s.iteration > 0 && s.rows > 0 && !i_it) i_it = &s;
    }
    return {middle_row(m, dag, p_it), middle_row(m, dag, i_it)};
}

story_values values_of(const measures& m, const row_place& p_row, const row_place& i_row) {
    story_values v;
    v.push_back(fmt::arg("iterations", m.iterations));
    v.push_back(fmt::arg("p_frames", m.p_frames));
    v.push_back(fmt::arg("i_frames", m.i_frames));
    v.push_back(fmt::arg("with_b", m.with_b));
    v.push_back(fmt::arg("shapes", m.shapes));
    v.push_back(fmt::arg("other_shapes", m.other_shapes));
    v.push_back(fmt::arg("cross", m.cross));
    v.push_back(fmt::arg("from_null", m.from_null));
    v.push_back(fmt::arg("skipped", m.skipped));
    v.push_back(fmt::arg("w", m.w));
    v.push_back(fmt::arg("P", m.P));
    v.push_back(fmt::arg("parallelism", fixed(m.bounds.parallelism, 2)));
    v.push_back(fmt::arg("speedup_bound", fixed(m.bounds.speedup_bound, 2)));
    v.push_back(fmt::arg("observed_speedup", fixed(m.bounds.observed_speedup, 2)));
    v.push_back(fmt::arg("p_row", p_row.row()));
    v.push_back(fmt::arg("p_iteration", p_row.node.first));
    v.push_back(fmt::arg("i_frame_selected", i_row.it ? " Selected now: row " + std::to_string(i_row.row()) +
                                                            " of I-frame iteration " + std::to_string(i_row.node.first) +
                                                            " — no cross edge enters its rows."
                                                      : std::string()));
    v.push_back(fmt::arg("tbb_refusal",
                         m.refused
                             ? "The same program under `--policy tbb` is refused before it runs: " + m.tbb->reason + ". "
                             : std::string("The tbb policy accepted x264 — it should have refused it. ")));
    return v;
}

std::vector<finding_measure> findings_of(const measures& m) {
    const analysis::dag_bounds& b = m.bounds;
    return {
        {"iterations", static_cast<double>(m.iterations), std::to_string(m.iterations),
         m.iterations >= 2 && m.p_frames > 0 && m.i_frames > 0},
        {"iteration_shapes", static_cast<double>(m.shapes), std::to_string(m.shapes), m.shapes >= 2},
        {"cross_edges", static_cast<double>(m.cross), std::to_string(m.cross), m.conditional_edges_hold && m.cross > 0},
        {"skipped_stages", static_cast<double>(m.skipped), std::to_string(m.skipped), m.offset_grows && m.skipped > 0},
        {"null_node_edges", static_cast<double>(m.from_null), std::to_string(m.from_null) + " of " + std::to_string(m.cross),
         m.from_null > 0},
        {"parallelism", b.parallelism, fixed(b.parallelism, 2), b.available && b.parallelism >= static_cast<double>(m.P)},
        {"tbb_refuses", m.refused ? 1.0 : 0.0, m.refused ? "refused" : "accepted", m.refused},
    };
}

const finding_text findings[] = {
    {"iterations", "pipeline iterations (one per I/P frame; B-frames ride in the iteration after them)",
     "001 §3, Fig. 2: stage 0 reads frames up to the next I- or P-frame, buffering the B-frames before it",
     "the video had only one frame type: raise frames or lower keyint"},
    {"iteration_shapes", "distinct iteration shapes (nodes, nodes entered with stage_wait)",
     "001 §1, §3: Cilk-P lets the structure be a function of the data — a variable number of stages across iterations, "
     "and dependencies chosen per frame",
     "every iteration got the same frame type and GOP position"},
    {"cross_edges", "cross edges of the DAG — every P-frame row has one, no I-frame row has any",
     "001 §3, Fig. 2 lines 19–23: a P-frame row runs after pipe_stage_wait, an I-frame row after pipe_stage — "
     "dependencies a construct-and-run pipeline would have to fix for the whole run",
     "a row's cross edge did not follow its frame type: the DAG was not rebuilt from a complete trace"},
    {"skipped_stages", "stages skipped at the start of iterations (iteration i's first row is stage 1 + w·i)",
     "001 §3, Fig. 2 line 16: skipping w·i stages turns \"row r + w of the previous frame\" into a cross edge between "
     "equal stage numbers",
     "the rows did not start w·i stages down"},
    {"null_node_edges", "cross edges that leave a null node (a stage the previous iteration skipped)",
     "001 Fig. 3: stage skipping produces cross edges into iteration i from null nodes in iteration i − 1; null nodes "
     "add no work and no span",
     "no P-frame waited for a row past the previous frame's last one"},
    {"parallelism", "parallelism T1/T∞ of the recorded DAG (speedup bound min(P, T1/T∞))",
     "001 §10, Figs. 10 and 13: Cilk-P's x264 speedup T_S/T_P 2.21 (AMD) and 1.97 (Xeon) on 2 cores, 13.81 and 12.08 "
     "on 16",
     "the frames are too few or too small for {P} workers: raise --size"},
    {"tbb_refuses", "the tbb policy refuses the same program, with a reason",
     "001 §10: \"TBB's construct-and-run approach proved inadequate for the on-the-fly nature of x264\"; no TBB x264 "
     "was benchmarked",
     "the tbb policy accepted x264"},
};

std::vector<step_text> steps(const row_place& p_row, const row_place& i_row) {
    return {
        {"What to look at",
         "The pipeline DAG of one x264 run: iterations across, stages down. Each iteration starts with stage 0 (read "
         "frames, pick the type), then one node per macroblock row, then the B-frames and the in-order output. The "
         "selected node is row {p_row} of P-frame iteration {p_iteration}: its cyan cross edge comes from the previous "
         "frame's row r + w (w = {w}). Each iteration's rows start w stages lower than the last one's — the skipped "
         "stages are the hollow null nodes.",
         {"dag", p_row.cursor, std::nullopt, p_row.select(), false}},
        {"What the paper found",
         "Lee et al. (seed 001 §3) write x264 as a pipe_while whose shape depends on the data: stage 0 decides the frame "
         "type; a P-frame row waits (pipe_stage_wait) for the reference frame, an I-frame row does not (pipe_stage); "
         "each iteration skips w·i stages so that \"row r + w of frame i − 1\" becomes a cross edge between equal stage "
         "numbers, and the skipped stages become null nodes (Fig. 3). A TBB pipeline must declare its filters before it "
         "runs, so they had no TBB x264 (§10); Cilk-P reached speedups of 13.81 (AMD) and 12.08 (Xeon) on 16 cores "
         "(Figs. 10, 13).{i_frame_selected}",
         {"dag", i_row.cursor, std::nullopt, i_row.select(), false}},
        {"What this run shows",
         "{iterations} iterations ({p_frames} P-frames, {i_frames} I-frames, {with_b} with B-frames) in {shapes} shapes "
         "— {other_shapes} iterations differ from the most common one; {cross} cross edges, {from_null} of them from "
         "null nodes; {skipped} stages skipped at the starts of iterations (w = {w}). The DAG's parallelism T1/T∞ is "
         "{parallelism}, so the on-the-fly structure leaves room for {speedup_bound} of the {P} workers; this run's "
         "speedup over the serial encoder was {observed_speedup} (a few tens of milliseconds on a shared machine; the "
         "paper's runs took minutes). On the timeline's lines, P-frames wait at their row stages while the previous "
         "frame is still encoding its lower rows.",
         {"timeline", std::nullopt, std::pair{0.3, 0.7}, std::nullopt, false}},
        {"Refused by tbb",
         "{tbb_refusal}The stage graph shows the stages as the program describes them: \"stage 1 + w·i + r\" is a "
         "family of stages whose numbers depend on the iteration and whose waits depend on the frame type — nothing a "
         "list of filters declared before the loop could say.",
         {"graph", p_row.cursor, std::nullopt, std::nullopt, false}},
        {"Try next",
         "All P-frames (no B-frames, no gate stage): `pipescope run x264 --param bframes=0 -o ippp.pftrace`. A wider "
         "search window skips more stages per iteration: `--param range=40` (w = 3). Every frame an I-frame: `--param "
         "keyint=1` — no cross edges between rows at all. And see the refusal yourself: `pipescope run x264 --policy tbb`.",
         {"dag", 1.0, std::nullopt, std::nullopt, false}},
    };
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
        const tm::pipeline_dag& dag = run.model->runs.at(run.report.run).dag;
        const std::vector<iteration_shape> its = shapes_of(dag);
        measures m;
        m.iterations = its.size();
        measure_edges_and_shapes(dag, its, m);
        measure_skipping(its, m);
        m.bounds = run.report.dag;
        m.P = run.spec.workers;
        m.tbb = data.refusals.empty() ? nullptr : &data.refusals.front();
        m.refused = m.tbb && !m.tbb->reason.empty();
        const auto [p_row, i_row] = p_and_i_rows(*run.model, dag, its);
        return tell_story(findings, findings_of(m), steps(p_row, i_row), values_of(m, p_row, i_row));
    }
};

}   // namespace

std::unique_ptr<lesson> make_on_the_fly_lesson() { return std::make_unique<on_the_fly>(); }

}   // namespace pipescope::lessons
