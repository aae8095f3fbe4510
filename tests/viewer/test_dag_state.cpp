#include <catch2/catch.hpp>

#include <model/dag_state.hpp>

#include <filesystem>

using namespace pipescope::viewer;
namespace fs = std::filesystem;
using tm::dag_edge_kind;

namespace {

// Three iterations, K = 2, stages 0..3 with skips (null nodes (0,2), (1,2), (2,1)):
//   n0 (0,0) [0,10)  w0          n3 (1,0) [12,15) w1            n6 (2,0) [45,47) w1
//   n1 (0,1) [10,30) w0 waited   n4 (1,1) [35,50) w1 waited     n7 (2,2) [52,70) w1 waited
//   n2 (0,3) [30,40) w0          n5 (1,3) [50,60) w0 waited
// Edges (grouped by target, as build_pipeline_dag makes them): stage down each iteration, cross
// n1->n4, n2->n5, n4->n7 (holder of stage <= 2 in iteration 1), retire n5->n7, throttle n2->n6.
// Iteration 1 suspends at 16 (before n4), iteration 2 at 48 (before n7).
tm::pipeline_dag hand_dag() {
    tm::pipeline_dag d;
    auto node = [&](std::uint64_t i, std::uint64_t j, std::uint64_t s, std::uint64_t e, int w, bool waited) {
        tm::dag_node n;
        n.iteration = i;
        n.stage = j;
        n.start = s;
        n.end = e;
        n.worker = w;
        n.waited = waited;
        n.slice = {static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(d.nodes.size()), false};
        d.nodes.push_back(n);
    };
    node(0, 0, 0, 10, 0, false);
    node(0, 1, 10, 30, 0, true);
    node(0, 3, 30, 40, 0, false);
    node(1, 0, 12, 15, 1, false);
    node(1, 1, 35, 50, 1, true);
    node(1, 3, 50, 60, 0, true);
    node(2, 0, 45, 47, 1, false);
    node(2, 2, 52, 70, 1, true);
    d.edges = {{0, 1, dag_edge_kind::stage},    {1, 2, dag_edge_kind::stage}, {3, 4, dag_edge_kind::stage},
               {1, 4, dag_edge_kind::cross},    {4, 5, dag_edge_kind::stage}, {2, 5, dag_edge_kind::cross},
               {2, 6, dag_edge_kind::throttle}, {6, 7, dag_edge_kind::stage}, {4, 7, dag_edge_kind::cross},
               {5, 7, dag_edge_kind::retire}};
    d.K = 2;
    d.iterations = 3;
    return d;
}
const std::vector<suspend_mark> hand_suspends = {{1, 16}, {2, 48}};

using S = node_state;
std::vector<S> states(const tm::pipeline_dag& d, const dag_index& x, std::uint64_t t, edge_mask m = ready_edge_kinds) {
    std::vector<S> v;
    for (std::uint32_t i = 0; i < d.nodes.size(); ++i) v.push_back(state_at(d, x, i, t, m));
    return v;
}

}   // namespace

TEST_CASE("dag index: columns, rows, suspensions, events", "[viewer][dag]") {
    const auto d = hand_dag();
    const dag_index x = build_dag_index(d, hand_suspends);
    CHECK(x.columns() == 3);
    CHECK(x.col_iteration == std::vector<std::uint64_t>{0, 1, 2});
    CHECK(x.col_first == std::vector<std::uint32_t>{0, 3, 6, 8});
    CHECK(x.row_stage == std::vector<std::uint64_t>{0, 1, 2, 3});
    CHECK(x.node_row == std::vector<std::uint32_t>{0, 1, 3, 0, 1, 3, 0, 2});
    CHECK(x.suspend_at[4] == 16);
    CHECK(x.suspend_at[7] == 48);
    CHECK(x.suspend_at[5] == no_time);
    CHECK(x.edge_span == 2);
    CHECK(x.workers == 2);
    CHECK(x.start == 0);
    CHECK(x.end == 70);
    CHECK(x.node_at_cell(0, 2) == tm::no_index);   // null node
    CHECK(x.node_at_cell(2, 2) == 7);
    CHECK(x.node_of_slice({1, 4, false}) == 4);
    CHECK(x.node_of_slice({0, 4, false}) == tm::no_index);
    CHECK(x.next_event(12) == 15u);
    CHECK(x.prev_event(12) == 10u);
    CHECK(x.next_event(0) == 10u);
    CHECK_FALSE(x.next_event(70));
    CHECK_FALSE(x.prev_event(0));
    CHECK(x.events == std::vector<std::uint64_t>{0, 10, 12, 15, 30, 35, 40, 45, 47, 50, 52, 60, 70});
}

TEST_CASE("dag node states at several times follow the definition", "[viewer][dag]") {
    const auto d = hand_dag();
    const dag_index x = build_dag_index(d, hand_suspends);
    const S nr = S::not_ready, rd = S::ready, ru = S::running, su = S::suspended, dn = S::done;
    CHECK(states(d, x, 5) == std::vector<S>{ru, nr, nr, rd, nr, nr, nr, nr});
    CHECK(states(d, x, 12) == std::vector<S>{dn, ru, nr, ru, nr, nr, nr, nr});
    CHECK(states(d, x, 15) == std::vector<S>{dn, ru, nr, dn, nr, nr, nr, nr});   // n4 waits on n1 (cross)
    CHECK(states(d, x, 16) == std::vector<S>{dn, ru, nr, dn, su, nr, nr, nr});   // iteration 1 suspended
    CHECK(states(d, x, 30) == std::vector<S>{dn, dn, ru, dn, su, nr, nr, nr});   // end is exclusive
    CHECK(states(d, x, 40) == std::vector<S>{dn, dn, dn, dn, ru, nr, rd, nr});   // throttle edge satisfied
    CHECK(states(d, x, 45) == std::vector<S>{dn, dn, dn, dn, ru, nr, ru, nr});
    CHECK(states(d, x, 48) == std::vector<S>{dn, dn, dn, dn, ru, nr, dn, su});
    CHECK(states(d, x, 50) == std::vector<S>{dn, dn, dn, dn, dn, ru, dn, su});
    CHECK(states(d, x, 52) == std::vector<S>{dn, dn, dn, dn, dn, ru, dn, ru});
    CHECK(states(d, x, 70) == std::vector<S>(8, dn));
    // Without the suspend marks, a node whose predecessors are done is ready; retire edges count
    // only when asked for.
    const dag_index y = build_dag_index(d);
    CHECK(state_at(d, y, 7, 50) == S::ready);
    CHECK(state_at(d, y, 7, 50, all_edge_kinds) == S::not_ready);   // retire edge from n5 (ends 60)
    CHECK(state_at(d, y, 4, 16) == S::not_ready);
    CHECK(state_at(d, y, 4, 30) == S::ready);
}

// counts_at(t) against the states of every node at t, one by one (ready and not ready apart: the
// legend's count line once folded them into "not started"); returns the counts.
static state_counts check_counts_at(const tm::pipeline_dag& d, const dag_index& x, std::uint64_t t) {
    std::uint64_t k[node_state_count] = {};
    for (S s : states(d, x, t)) ++k[static_cast<int>(s)];
    const state_counts c = counts_at(x, t);
    INFO("t = " << t);
    CHECK(c.done == k[static_cast<int>(S::done)]);
    CHECK(c.running == k[static_cast<int>(S::running)]);
    CHECK(c.suspended == k[static_cast<int>(S::suspended)]);
    CHECK(c.ready == k[static_cast<int>(S::ready)]);
    CHECK(c.not_ready == k[static_cast<int>(S::not_ready)]);
    CHECK(c.done + c.running + c.suspended + c.ready + c.not_ready == d.nodes.size());
    return c;
}

TEST_CASE("dag state counts agree with the node states at every time", "[viewer][dag]") {
    const auto d = hand_dag();
    const dag_index x = build_dag_index(d, hand_suspends);
    for (std::uint64_t t = 0; t <= 75; ++t) check_counts_at(d, x, t);
    const state_counts c = counts_at(x, 48);
    CHECK(c.done == 5);
    CHECK(c.running == 1);
    CHECK(c.suspended == 1);
    CHECK(c.ready + c.not_ready == 1);
}

TEST_CASE("critical path: the analysis' longest path, marked on nodes and edges", "[viewer][dag]") {
    const auto d = hand_dag();
    const dag_index x = build_dag_index(d, hand_suspends);
    // Retirement is a chain, not an edge (analysis/dag_bounds.hpp): n0 n1 -cross-> n4 -cross-> n7,
    // 10 + 20 + 15 + 18; the throttling edge n2 -> n6 gives n6 only 40 + 2.
    const critical_path cp = critical_path_of(d, x, pipescope::analysis::longest_path(d, true));
    CHECK(cp.nodes == std::vector<std::uint32_t>{0, 1, 4, 7});
    CHECK(cp.length == 63);
    int on = 0;
    for (char c : cp.on_edge) on += c;
    CHECK(on == 3);
    CHECK(cp.on_edge[0]);   // the stage edge n0 -> n1
    CHECK(cp.on_edge[3]);   // the cross edge n1 -> n4
    CHECK(cp.on_edge[8]);   // the cross edge n4 -> n7
    CHECK(cp.on_node[4]);
    CHECK_FALSE(cp.on_node[2]);
    tm::pipeline_dag empty;
    CHECK(critical_path_of(empty, build_dag_index(empty), pipescope::analysis::longest_path(empty, true)).empty());
}

TEST_CASE("dag camera: fit, zoom at the cursor, clamp, hit testing", "[viewer][dag]") {
    const auto d = hand_dag();
    const dag_index x = build_dag_index(d, hand_suspends);
    dag_camera cam;
    cam.width = 300;
    cam.height = 200;
    cam.fit(3, 4);
    CHECK(cam.px_x(0) >= 0);
    CHECK(cam.px_x(3) <= 300);
    CHECK(cam.px_y(0) >= 0);
    CHECK(cam.px_y(4) <= 200);
    const double wx = cam.col_at(123), wy = cam.row_at(77);
    cam.zoom_at(123, 77, 1.7, 0.6);
    CHECK(cam.col_at(123) == Approx(wx));
    CHECK(cam.row_at(77) == Approx(wy));
    // The cell centre of (column 1, row 3) hits n5; a null node's cell hits nothing.
    CHECK(node_at_px(x, cam, cam.px_x(1.5), cam.px_y(3.5)) == 5);
    CHECK(node_at_px(x, cam, cam.px_x(0.5), cam.px_y(2.5)) == tm::no_index);
    CHECK(node_at_px(x, cam, cam.px_x(-0.5), cam.px_y(0.5)) == tm::no_index);
    cam.pan_px(1e6, -1e6);
    cam.clamp(3, 4);
    CHECK(cam.px_x(3) > 0);   // the grid stays in view
    CHECK(cam.px_y(0) < cam.height);
}

TEST_CASE("dag draw list: one box per visible node, null marks, edges, LOD", "[viewer][dag]") {
    const auto d = hand_dag();
    const dag_index x = build_dag_index(d, hand_suspends);
    const critical_path cp = critical_path_of(d, x, pipescope::analysis::longest_path(d, true));
    dag_camera cam;
    cam.width = 300;
    cam.height = 200;
    cam.fit(3, 4);
    dag_draw_params p;
    p.t = 48;
    p.critical = &cp;
    dag_draw_list out;
    build_dag_draw_list(d, x, cam, p, out);
    REQUIRE_FALSE(out.lod);
    REQUIRE(out.boxes.size() == d.nodes.size());
    CHECK(out.nulls.size() == 3);
    CHECK(out.edges.size() == d.edges.size());
    for (const dag_box& b : out.boxes) {
        CHECK(b.state == state_at(d, x, b.node, 48));
        CHECK(b.critical == bool(cp.on_node[b.node]));
        CHECK(b.x1 > b.x0);
        CHECK(b.y1 > b.y0);
        CHECK(b.x0 == std::floor(b.x0));   // whole pixels
    }
    // Boxes never touch: at least one pixel between any two.
    for (const dag_box& a : out.boxes)
        for (const dag_box& b : out.boxes)
            if (&a != &b) CHECK((a.x1 < b.x0 || b.x1 < a.x0 || a.y1 < b.y0 || b.y1 < a.y0));
    int crit_edges = 0;
    for (const auto& e : out.edges) crit_edges += e.critical;
    CHECK(crit_edges == 3);
    // Only stage edges.
    p.edges_shown = edge_bit(dag_edge_kind::stage);
    build_dag_draw_list(d, x, cam, p, out);
    CHECK(out.edges.size() == 5);
    for (const auto& e : out.edges) CHECK(e.kind == dag_edge_kind::stage);
    // Zoomed in on column 1: its three nodes; the throttle edge from column 0 into column 2 and the
    // edges into column 1 are still drawn (they cross the view).
    cam.sx = cam.sy = 100;
    cam.width = 100;
    cam.height = 400;
    cam.x0 = 1;
    cam.y0 = 0;
    p.edges_shown = all_edge_kinds;
    build_dag_draw_list(d, x, cam, p, out);
    CHECK(out.col0 == 1);
    CHECK(out.col1 == 2);
    REQUIRE(out.boxes.size() == 3);
    for (const dag_box& b : out.boxes) CHECK(x.node_col[b.node] == 1);
    int throttle = 0;
    for (const auto& e : out.edges) throttle += e.kind == dag_edge_kind::throttle;
    CHECK(throttle == 1);
    // LOD: cells smaller than min_box_px merge into groups coloured by the dominant state.
    cam.sx = 0.5;
    cam.sy = 0.5;
    cam.x0 = 0;
    cam.y0 = 0;
    cam.width = 100;
    cam.height = 100;
    p.t = 1000;
    build_dag_draw_list(d, x, cam, p, out);
    REQUIRE(out.lod);
    CHECK(out.boxes.empty());
    REQUIRE(out.cells.size() == 1);
    CHECK(out.cells[0].nodes == 8);
    CHECK(out.cells[0].state == S::done);
    CHECK(out.cells[0].worker >= 0);
    // Scrolled entirely off the grid: nothing.
    cam.x0 = 50;
    build_dag_draw_list(d, x, cam, p, out);
    CHECK(out.cells.empty());
    CHECK(out.boxes.empty());
}

TEST_CASE("dag view model on an example trace", "[viewer][dag]") {
    const fs::path k2 = fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace";
    const auto file = load_file(k2);
    REQUIRE(file->model.runs.size() == 1);
    const tm::run& r = file->model.runs[0];
    const tm::pipeline_dag& d = r.dag;
    REQUIRE(d.nodes.size() > 1000);
    const auto susp = find_suspends(file->model, r);
    CHECK(!susp.empty());
    const dag_index x = build_dag_index(d, susp);
    CHECK(x.columns() == d.iterations);
    // The recorded metadata names stage 0 and the family "stage j ≥ 1": every row gets its entry.
    const auto labels = dag_row_labels(r.stages, x.row_stage);
    REQUIRE(labels.size() == x.rows());
    REQUIRE(x.row_stage[0] == 0);
    CHECK(labels[0].name.find("start iteration") != std::string::npos);
    for (std::size_t k = 1; k < labels.size(); k += 7) CHECK(labels[k].name.find("add bit block") != std::string::npos);
    std::size_t suspended_nodes = 0;
    for (auto s : x.suspend_at) suspended_nodes += s != no_time;
    CHECK(suspended_nodes > 0);
    // Every node slice maps back to its node.
    for (std::uint32_t v = 0; v < d.nodes.size(); v += 97) CHECK(x.node_of_slice(d.nodes[v].slice) == v);
    // In a real execution the edges that order starts are respected: a running node's predecessors
    // are done, up to a short overlap on cross edges between workers (the recorded end of (i-1, j)
    // can follow the start of (i, j) by a few hundred ns: the end is read after the release).
    // The counts are the drawn states' (ready included: the legend's line once left it out).
    std::uint64_t ready_seen = 0;
    for (std::uint64_t t = x.start; t < x.end; t += (x.end - x.start) / 37) ready_seen += check_counts_at(d, x, t).ready;
    CHECK(ready_seen > 0);
    std::size_t overlaps = 0;
    for (std::uint32_t v = 0; v < d.nodes.size(); ++v)
        for (std::uint32_t k = x.in_first[v]; k < x.in_first[v + 1]; ++k) {
            const auto& e = d.edges[x.in_edges[k]];
            if (e.kind == dag_edge_kind::retire || d.nodes[e.from].end <= d.nodes[v].start) continue;
            ++overlaps;
            CHECK(e.kind == dag_edge_kind::cross);
            CHECK(d.nodes[e.from].end - d.nodes[v].start < 2000);
        }
    CHECK(overlaps * 100 < d.edges.size());
    const critical_path cp = critical_path_of(d, x, pipescope::analysis::longest_path(d, true));
    CHECK(cp.length > 0);
    CHECK(cp.length <= x.end - x.start);
    // At a zoom where every node is at least 4 px, the draw list has one box per node.
    dag_camera cam;
    cam.sx = cam.sy = 4;
    cam.width = 4.0 * static_cast<double>(x.columns());
    cam.height = 4.0 * static_cast<double>(x.rows());
    cam.x0 = cam.y0 = 0;
    dag_draw_params p;
    p.t = (x.start + x.end) / 2;
    dag_draw_list out;
    build_dag_draw_list(d, x, cam, p, out);
    REQUIRE_FALSE(out.lod);
    CHECK(out.boxes.size() == d.nodes.size());
    // Fitted into 1200 x 700 px: LOD cells account for every column group and every state.
    cam.width = 1200;
    cam.height = 700;
    cam.fit(static_cast<double>(x.columns()), static_cast<double>(x.rows()));
    build_dag_draw_list(d, x, cam, p, out);
    CHECK(out.lod);
    CHECK(!out.cells.empty());
    CHECK(out.cells.size() <= 1200 / 3 * x.rows() + x.rows());
}

namespace {
// program.stages as recording/src/recording.cpp writes them: "index" is the entry's position, not a stage number.
std::vector<tm::stage_info> stage_list(std::initializer_list<const char*> names) {
    std::vector<tm::stage_info> v;
    for (const char* n : names) v.push_back({v.size(), n, ""});
    return v;
}
std::vector<std::string> names_of(const std::vector<dag_row_label>& labels) {
    std::vector<std::string> v;
    for (const auto& l : labels) v.push_back(l.name);
    return v;
}
constexpr std::uint64_t p40 = std::uint64_t{1} << 40;
}   // namespace

TEST_CASE("dag row labels: each row gets the metadata entry naming its stage number", "[viewer][dag]") {
    // x264 (workloads/src/x264_workload.cpp): rows 1 .. 2^40 - 1 are "stage 1 + w·i + r" (row r of
    // iteration i) or "stage 1 + w·i + rows", which the names alone cannot tell apart: no name there,
    // never the entry at the row's position (row 3 used to read "stage 2^40 · encode B-frames").
    const auto x264 =
        stage_list({"stage 0 \xC2\xB7 read, decide frame type", "stage 1 + w\xC2\xB7i + r \xC2\xB7 encode macroblock row r",
                    "stage 1 + w\xC2\xB7i + rows \xC2\xB7 references ready", "stage 2^40 \xC2\xB7 encode B-frames",
                    "stage 2^40 + 1 \xC2\xB7 write frames"});
    const std::vector<std::uint64_t> x264_rows = {0, 1, 2, 3, 4, 19, p40, p40 + 1};
    const auto xl = dag_row_labels(x264, x264_rows);
    REQUIRE(xl.size() == x264_rows.size());
    CHECK(names_of(xl) == std::vector<std::string>{"stage 0 \xC2\xB7 read, decide frame type", "", "", "", "", "",
                                                   "stage 2^40 \xC2\xB7 encode B-frames",
                                                   "stage 2^40 + 1 \xC2\xB7 write frames"});
    CHECK(xl[3].stage == "stage 3");
    CHECK(xl[6].stage == "stage 2^40");
    CHECK(xl[7].stage == "stage 2^40 + 1");

    // ferret (both forms) and dedup: one entry per stage, in order; the names are kept as they are.
    const auto ferret = stage_list({"stage 0 \xC2\xB7 load", "stage 1 \xC2\xB7 segment", "stage 2 \xC2\xB7 extract",
                                    "stage 3 \xC2\xB7 query", "stage 4 \xC2\xB7 rank", "stage 5 \xC2\xB7 output"});
    const std::vector<std::uint64_t> six = {0, 1, 2, 3, 4, 5};
    const auto fl = dag_row_labels(ferret, six);
    for (std::size_t k = 0; k < six.size(); ++k) {
        CHECK(fl[k].name == ferret[k].name);
        CHECK(fl[k].stage == "stage " + std::to_string(k));
    }
    const auto sps = stage_list({"stage 0 \xC2\xB7 load", "stage 1 \xC2\xB7 search", "stage 2 \xC2\xB7 output"});
    CHECK(names_of(dag_row_labels(sps, std::vector<std::uint64_t>{0, 1, 2})) ==
          std::vector<std::string>{sps[0].name, sps[1].name, sps[2].name});
    const auto dedup = stage_list(
        {"stage 0 \xC2\xB7 read", "stage 1 \xC2\xB7 hash", "stage 2 \xC2\xB7 compress", "stage 3 \xC2\xB7 write"});
    CHECK(names_of(dag_row_labels(dedup, std::vector<std::uint64_t>{0, 1, 2, 3})) ==
          std::vector<std::string>{dedup[0].name, dedup[1].name, dedup[2].name, dedup[3].name});

    // pipe-fib: "stage j ≥ 1" names every later stage ("≥" written ">=" for the UI font).
    const auto fib = stage_list({"stage 0 \xC2\xB7 start iteration", "stage j \xE2\x89\xA5 1 \xC2\xB7 add bit block j"});
    CHECK(names_of(dag_row_labels(fib, std::vector<std::uint64_t>{0, 1, 2, 250})) ==
          std::vector<std::string>{"stage 0 \xC2\xB7 start iteration", "stage j >= 1 \xC2\xB7 add bit block j",
                                   "stage j >= 1 \xC2\xB7 add bit block j", "stage j >= 1 \xC2\xB7 add bit block j"});

    // Names without a stage number describe the stage of their index; a stage nobody names has none.
    const auto plain = stage_list({"read", "work", "write"});
    CHECK(names_of(dag_row_labels(plain, std::vector<std::uint64_t>{0, 2, 5})) ==
          std::vector<std::string>{"read", "write", ""});
    CHECK(names_of(dag_row_labels({}, std::vector<std::uint64_t>{0, 1})) == std::vector<std::string>{"", ""});
}

TEST_CASE("dag row labels: stage numbers near a power of two are written as one", "[viewer][dag]") {
    CHECK(stage_number_text(0) == "stage 0");
    CHECK(stage_number_text(123456) == "stage 123456");
    CHECK(stage_number_text(std::uint64_t{1} << 31) == "stage 2147483648");   // below 2^32: the number
    CHECK(stage_number_text(std::uint64_t{1} << 32) == "stage 2^32");
    CHECK(stage_number_text(p40) == "stage 2^40");
    CHECK(stage_number_text(p40 + 1) == "stage 2^40 + 1");
    CHECK(stage_number_text(p40 + (std::uint64_t{1} << 20)) == "stage " + std::to_string(p40 + (std::uint64_t{1} << 20)));
    CHECK(stage_number_text(~std::uint64_t{0}) == "stage 18446744073709551615");
}
