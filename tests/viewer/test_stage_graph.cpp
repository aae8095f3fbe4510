// The stage graph view's model (viewer/model/stage_graph.hpp): the program structure read from run
// metadata strings, counters at a time and their peaks, a hand-built bind-to-stage run's indices,
// a graph run's derived footprint, and the layout (exact positions; boxes ordered and not overlapping).
#include <catch2/catch.hpp>

#include <model/stage_graph.hpp>

#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

using namespace pipescope::viewer;

namespace {

// The metadata `pipescope run ferret --policy bind-to-stage --workers 2` writes (notes shortened).
const std::string bts_meta = R"({"format":"pipescope-run/1","params":[],"policy":"bind-to-stage","program":{"c":2,
 "dependency_folding":true,"kind":"pipeline","lazy_enabling":true,"queue":20,"shape":"static",
 "stages":[{"index":0,"kind":"serial","name":"stage 0 \u00b7 load","note":"generate query image i"},
           {"index":1,"kind":"parallel","name":"stage 1 \u00b7 segment","note":"k-means"},
           {"index":2,"kind":"parallel","name":"stage 2 \u00b7 extract","note":"features"},
           {"index":3,"kind":"parallel","name":"stage 3 \u00b7 query","note":"LSH"},
           {"index":4,"kind":"parallel","name":"stage 4 \u00b7 rank","note":"top-k"},
           {"index":5,"kind":"stage_wait","name":"stage 5 \u00b7 output","note":"in order"}]},
 "seed":1,"size":"tiny","workers":2,"workload":"ferret"})";

std::string meta_of(const char* policy, const char* program) {
    return std::string(R"({"format":"pipescope-run/1","policy":")") + policy + R"(","workload":"w","program":)" + program +
           "}";
}

bool overlap(const layout_box& a, const layout_box& b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }

void check_no_overlap(const graph_layout& L) {
    for (std::size_t i = 0; i < L.boxes.size(); ++i) {
        const layout_box& a = L.boxes[i];
        CHECK(a.x0 >= 0);
        CHECK(a.y0 >= 0);
        CHECK(a.x1 <= L.width);
        CHECK(a.y1 <= L.height);
        for (std::size_t j = i + 1; j < L.boxes.size(); ++j) CHECK_FALSE(overlap(a, L.boxes[j]));
    }
}

std::vector<graph_stage> n_stages(std::size_t n) { return std::vector<graph_stage>(n); }
graph_edge edge(std::uint32_t a, std::uint32_t b, bool queue = false) {
    graph_edge e;
    e.from = a;
    e.to = b;
    if (queue) {
        e.queue_counter = "queue " + std::to_string(b) + " fill";
        e.capacity = 20;
    }
    return e;
}

}   // namespace

TEST_CASE("stage graph: structure read from bind-to-stage metadata", "[viewer][stage_graph]") {
    const program_structure p = read_program_structure(bts_meta);
    REQUIRE(p.valid);
    CHECK(p.policy == "bind-to-stage");
    CHECK(p.workload == "ferret");
    CHECK(p.c == 2u);
    CHECK(p.queue == 20u);
    CHECK_FALSE(p.K);
    REQUIRE(p.stages.size() == 6);
    const char* kinds[] = {"serial", "parallel", "parallel", "parallel", "parallel", "stage_wait"};
    const std::uint64_t threads[] = {1, 2, 2, 2, 2, 1};
    for (std::uint32_t k = 0; k < 6; ++k) {
        const graph_stage& s = p.stages[k];
        CHECK(s.entry == k);
        CHECK(s.index == k);
        CHECK(s.number == k);
        CHECK_FALSE(s.all_from);
        CHECK(s.kind == kinds[k]);
        CHECK(s.threads == threads[k]);
        CHECK(s.colour == static_cast<colour_key>(k));   // the timeline's key of "stage k"
        CHECK(s.buffer_counter == "stage " + std::to_string(k) + " reorder buffer");
    }
    CHECK(p.stages[1].name == "stage 1 \xC2\xB7 segment");
    CHECK(p.stages[0].note == "generate query image i");
    REQUIRE(p.edges.size() == 5);
    for (std::uint32_t k = 0; k < 5; ++k) {
        CHECK(p.edges[k].from == k);
        CHECK(p.edges[k].to == k + 1);
        CHECK(p.edges[k].queue_counter == "queue " + std::to_string(k + 1) + " fill");
        CHECK(p.edges[k].capacity == 20.0);
    }
}

TEST_CASE("stage graph: a stage graph's queues become edges, one per producer", "[viewer][stage_graph]") {
    // A merge-sort-like graph: split -> sort -> merge, merge feeding itself back (two producers of "runs").
    const std::string meta = R"({"policy":"gramps","program":{"kind":"graph","stages":[
        {"index":0,"kind":"serial","name":"split"},{"index":1,"kind":"parallel","name":"sort"},
        {"index":2,"kind":"parallel","name":"merge"},{"index":3,"kind":"serial","name":"sink"}],
      "queues":[{"index":0,"name":"chunks","capacity_packets":8,"producers":[0],"consumer":1,"counter":"queue chunks packets"},
                {"index":1,"name":"runs","capacity_packets":16,"unbounded":true,"backward":true,"producers":[1,2],"consumer":2,
                 "counter":"queue runs packets"},
                {"index":2,"name":"sorted","capacity_packets":4,"producers":[2],"consumer":3},
                {"index":3,"name":"broken","producers":[9],"consumer":1}]}})";
    const program_structure p = read_program_structure(meta);
    REQUIRE(p.valid);
    CHECK(p.graph);
    REQUIRE(p.stages.size() == 4);
    REQUIRE(p.edges.size() == 4);   // chunks, runs ×2, sorted; "broken" names a stage that does not exist
    CHECK(p.edges[0].from == 0);
    CHECK(p.edges[0].to == 1);
    CHECK(p.edges[0].queue_name == "chunks");
    CHECK(p.edges[0].queue_counter == "queue chunks packets");
    CHECK(*p.edges[0].capacity == 8);
    CHECK_FALSE(p.edges[0].unbounded);
    CHECK(p.edges[1].from == 1);
    CHECK(p.edges[2].from == 2);
    CHECK(p.edges[2].to == 2);   // the feedback edge into itself
    CHECK(p.edges[2].unbounded);
    CHECK(p.edges[3].queue_counter == "queue sorted packets");   // the default name of a queue's counter
    // The layout copes with the self loop and the fan-in.
    const graph_layout L = layout_stage_graph(p.stages, p.edges, layout_params{});
    CHECK(L.boxes.size() == 4);
    CHECK(L.edges.size() == 4);
}

TEST_CASE("stage graph: tbb and piper metadata have no queues", "[viewer][stage_graph]") {
    const char* program = R"({"K":8,"kind":"pipeline","stages":[{"index":0,"kind":"serial","name":"stage 0 · in"},
        {"index":1,"kind":"parallel","name":"stage 1 · work"},{"index":2,"kind":"serial_in_order","name":"stage 2 · out"}]})";
    const program_structure tbb = read_program_structure(meta_of("tbb", program));
    REQUIRE(tbb.valid);
    CHECK(tbb.K == 8u);
    CHECK_FALSE(tbb.c);
    CHECK_FALSE(tbb.queue);
    REQUIRE(tbb.stages.size() == 3);
    REQUIRE(tbb.edges.size() == 2);
    for (const auto& e : tbb.edges) {
        CHECK(e.queue_counter.empty());
        CHECK_FALSE(e.capacity);
    }
    CHECK(tbb.stages[2].buffer_counter == "stage 2 buffer");
    CHECK(tbb.stages[2].kind == "serial_in_order");
    for (const auto& s : tbb.stages) CHECK_FALSE(s.threads);

    const program_structure piper = read_program_structure(meta_of("piper", program));
    REQUIRE(piper.stages.size() == 3);
    CHECK(piper.K == 8u);
    for (const auto& s : piper.stages) CHECK(s.buffer_counter.empty());
    for (const auto& e : piper.edges) CHECK(e.queue_counter.empty());

    // bind-to-stage with a stage's own thread count and no program.c: the entry's count, and a
    // parallel stage without one stays unknown.
    const program_structure bts = read_program_structure(meta_of("bind-to-stage", R"({"queue":4,"stages":[
        {"index":0,"kind":"serial","name":"stage 0 · a"},{"index":1,"kind":"parallel","name":"stage 1 · b","threads":3},
        {"index":2,"kind":"parallel","name":"stage 2 · c"}]})"));
    REQUIRE(bts.stages.size() == 3);
    CHECK(bts.stages[0].threads == 1u);
    CHECK(bts.stages[1].threads == 3u);
    CHECK_FALSE(bts.stages[2].threads);
    CHECK(bts.edges[1].queue_counter == "queue 2 fill");
    CHECK(bts.edges[1].capacity == 4.0);
}

TEST_CASE("stage graph: stage numbers, families and formulas in stage names", "[viewer][stage_graph]") {
    bool all = true;
    CHECK(pipescope::analysis::stage_number_of_name("stage 12", &all) == 12u);
    CHECK_FALSE(all);
    CHECK(pipescope::analysis::stage_number_of_name("stage 5 \xC2\xB7 output") == 5u);
    CHECK(pipescope::analysis::stage_number_of_name("stage 2^40 \xC2\xB7 encode B-frames") == (std::uint64_t{1} << 40));
    CHECK(pipescope::analysis::stage_number_of_name("stage 2^40 + 1 \xC2\xB7 write frames") == (std::uint64_t{1} << 40) + 1);
    CHECK(pipescope::analysis::stage_number_of_name("stage j \xE2\x89\xA5 1 \xC2\xB7 add bit block j", &all) == 1u);
    CHECK(all);
    CHECK(pipescope::analysis::stage_number_of_name("stage j >= 3 \xC2\xB7 x", &all) == 3u);
    CHECK(all);
    CHECK_FALSE(pipescope::analysis::stage_number_of_name("task"));
    CHECK_FALSE(pipescope::analysis::stage_number_of_name("stage x"));
    // A formula of the iteration (x264) names no single stage: its leading 1 is not stage 1.
    bool formula = false;
    CHECK_FALSE(pipescope::analysis::stage_number_of_name("stage 1 + w\xC2\xB7i + r \xC2\xB7 encode macroblock row r", &all,
                                                          &formula));
    CHECK(formula);
    CHECK_FALSE(pipescope::analysis::stage_number_of_name("stage 2^40 + 1 + r", &all, &formula));
    CHECK(formula);
    CHECK_FALSE(pipescope::analysis::stage_number_of_name("stage 3\xC2\xB7i", &all, &formula));
    CHECK(formula);
    CHECK(pipescope::analysis::stage_number_of_name("stage 2^40 + 1 \xC2\xB7 write frames", &all, &formula) ==
          (std::uint64_t{1} << 40) + 1);
    CHECK_FALSE(formula);
    CHECK(pipescope::analysis::stage_number_of_name("stage 3: write", &all, &formula) == 3u);
    CHECK_FALSE(formula);
    CHECK(plain_relations("stage j \xE2\x89\xA5 1, i \xE2\x89\xA4 2") == "stage j >= 1, i <= 2");
    CHECK(pipescope::analysis::is_serial_kind("serial_in_order"));
    CHECK(pipescope::analysis::is_serial_kind("stage_wait"));
    CHECK_FALSE(pipescope::analysis::is_serial_kind("parallel"));

    // pipe-fib: stage 0 and a family "stage j ≥ 1" standing for every later stage.
    const program_structure fib = read_program_structure(meta_of("piper", R"({"K":2,"stages":[
        {"index":0,"kind":"serial","name":"stage 0 \u00b7 start iteration"},
        {"index":1,"kind":"stage_wait","name":"stage j \u2265 1 \u00b7 add bit block j"}]})"));
    REQUIRE(fib.stages.size() == 2);
    CHECK(fib.stages[1].all_from);
    CHECK(fib.stages[1].number == 1);
    CHECK(fib.stages[1].colour == 1);
    CHECK(stage_of_number(fib, 0) == 0);
    CHECK(stage_of_number(fib, 1) == 1);
    CHECK(stage_of_number(fib, 17) == 1);
    REQUIRE(fib.edges.size() == 1);

    // x264: a stage numbered 2^40 has no palette colour in the timeline (key_other), nor here.
    const program_structure x = read_program_structure(meta_of("piper", R"({"stages":[
        {"index":0,"kind":"serial","name":"stage 0 \u00b7 read"},
        {"index":1,"kind":"stage_wait","name":"stage 1 + w\u00b7i + r \u00b7 encode macroblock row r"},
        {"index":2,"kind":"stage_wait","name":"stage 1 + w\u00b7i + rows \u00b7 references ready"},
        {"index":3,"kind":"parallel","name":"stage 2^40 \u00b7 encode B-frames"},
        {"index":4,"kind":"stage_wait","name":"stage 2^40 + 1 \u00b7 write frames"}]})"));
    REQUIRE(x.stages.size() == 5);
    CHECK(x.stages[3].index == 3);
    CHECK(x.stages[3].number == (std::uint64_t{1} << 40));
    CHECK(x.stages[3].colour == key_other);
    CHECK(x.stages[1].formula);
    CHECK(x.stages[2].formula);
    CHECK(x.stages[1].colour == key_other);
    CHECK_FALSE(x.stages[3].formula);
    CHECK(stage_of_number(x, (std::uint64_t{1} << 40) + 1) == 4);
    // The formula entries' stages depend on w and the frame height: no stage number maps to them
    // (not even 1 or 2, their positions).
    for (std::uint64_t j : {1, 2, 3, 7}) CHECK(stage_of_number(x, j) == tm::no_index);
}

TEST_CASE("stage graph: metadata that is not a program", "[viewer][stage_graph]") {
    for (const char* bad : {"", "not json", "[1, 2]", "{}", R"({"program": 3})", R"({"program": {"K": 4}})"}) {
        const program_structure p = read_program_structure(bad);
        CHECK_FALSE(p.valid);
        CHECK(p.stages.empty());
        CHECK(p.edges.empty());
    }
    CHECK(read_program_structure(R"({"program": {"K": 4}})").K == 4u);
    // A run without metadata stages: one box per distinct stage of its DAG, in order.
    tm::run r;
    r.policy = "piper";
    for (std::uint64_t s : {0, 2, 1, 2, 0}) {
        tm::dag_node n;
        n.stage = s;
        r.dag.nodes.push_back(n);
    }
    r.dag.K = 3;
    const program_structure d = program_structure_of(r);
    CHECK_FALSE(d.valid);
    REQUIRE(d.stages.size() == 3);
    CHECK(d.stages[2].number == 2);
    CHECK(d.stages[2].name == "stage 2");
    CHECK(d.K == 3u);
    REQUIRE(d.edges.size() == 2);
    CHECK(d.edges[1].from == 1);
    CHECK(d.edges[1].to == 2);
}

TEST_CASE("stage graph: a counter's value at t, its peak, steps", "[viewer][stage_graph]") {
    const std::vector<tm::counter_sample> s = {{10, 1}, {20, 3}, {20, 4}, {30, 0}, {40, 4}};
    CHECK_FALSE(counter_value_at(s, 0));
    CHECK_FALSE(counter_value_at(s, 9));
    CHECK(counter_value_at(s, 10) == 1.0);
    CHECK(counter_value_at(s, 19) == 1.0);
    CHECK(counter_value_at(s, 20) == 4.0);   // of two samples at one time, the last
    CHECK(counter_value_at(s, 29) == 4.0);
    CHECK(counter_value_at(s, 30) == 0.0);
    CHECK(counter_value_at(s, 39) == 0.0);
    CHECK(counter_value_at(s, 1000) == 4.0);
    CHECK_FALSE(counter_value_at({}, 5));
    const counter_peak pk = peak_of(s);
    CHECK(pk.any);
    CHECK(pk.value == 4.0);
    CHECK(pk.ts == 20);   // the first time it was reached
    CHECK_FALSE(peak_of({}).any);

    const std::vector<std::uint64_t> t = {5, 10, 20};
    CHECK(next_time(t, 0) == 5u);
    CHECK(next_time(t, 5) == 10u);
    CHECK(next_time(t, 12) == 20u);
    CHECK_FALSE(next_time(t, 20));
    CHECK_FALSE(prev_time(t, 5));
    CHECK(prev_time(t, 6) == 5u);
    CHECK(prev_time(t, 20) == 10u);
    CHECK(prev_time(t, 99) == 20u);
}

TEST_CASE("stage graph: a hand-built bind-to-stage run", "[viewer][stage_graph]") {
    tm::trace_model m;
    m.strings = {""};
    auto track = [&](const char* name, tm::track_kind k) {
        tm::track t;
        t.name = name;
        t.kind = k;
        t.run = 0;
        return t;
    };
    tm::track proc = track("demo \xC2\xB7 bind-to-stage \xC2\xB7 P=2", tm::track_kind::process);
    tm::track w = track("stage 0 \xC2\xB7 thread 0", tm::track_kind::thread);
    tm::track q1 = track("queue 1 fill", tm::track_kind::counter);
    q1.counters = {{10, 1}, {20, 2}, {30, 1}, {40, 0}};
    tm::track q2 = track("queue 2 fill", tm::track_kind::counter);
    q2.counters = {{25, 1}, {35, 0}};
    tm::track rb = track("stage 2 reorder buffer", tm::track_kind::counter);
    rb.counters = {{30, 1}, {45, 0}};
    tm::track live = track("live iterations", tm::track_kind::counter);
    live.counters = {{5, 1}, {12, 2}, {50, 0}};
    m.tracks = {proc, w, q1, q2, rb, live};
    tm::run r;
    r.track = 0;
    r.name = proc.name;
    r.policy = "bind-to-stage";
    r.workers = {1};
    r.tracks = {0, 1, 2, 3, 4, 5};
    r.metadata_valid = true;
    r.metadata_json =
        meta_of("bind-to-stage", R"({"c":2,"queue":4,"stages":[{"index":0,"kind":"serial","name":"stage 0 · read"},
        {"index":1,"kind":"parallel","name":"stage 1 · work"},{"index":2,"kind":"serial_in_order","name":"stage 2 · write"}]})");
    // Nodes (iteration, stage) [start, end): (0,0) [5,10) (0,1) [10,30) (0,2) [35,40)
    //                                        (1,0) [10,12) (1,1) [20,25) (1,2) [40,45)
    auto node = [&](std::uint64_t i, std::uint64_t j, std::uint64_t b, std::uint64_t e) {
        tm::dag_node n;
        n.iteration = i;
        n.stage = j;
        n.start = b;
        n.end = e;
        n.slice = {1, static_cast<std::uint32_t>(r.dag.nodes.size()), false};
        r.dag.nodes.push_back(n);
    };
    node(0, 0, 5, 10);
    node(0, 1, 10, 30);
    node(0, 2, 35, 40);
    node(1, 0, 10, 12);
    node(1, 1, 20, 25);
    node(1, 2, 40, 45);
    m.runs.push_back(r);
    document d;
    d.add(prepare_file(std::move(m), "demo.pftrace"));
    REQUIRE(d.runs.size() == 1);

    const run_graph g = build_run_graph(d, 0);
    CHECK(g.doc_run == 0);
    REQUIRE(g.program.stages.size() == 3);
    CHECK(g.program.stages[1].threads == 2u);
    REQUIRE(g.program.edges.size() == 2);
    CHECK(g.program.edges[0].capacity == 4.0);
    CHECK(g.edge_counter == std::vector<std::uint32_t>{2, 3});
    CHECK(g.edge_peak[0].value == 2.0);
    CHECK(g.edge_peak[0].ts == 20);
    CHECK(g.edge_peak[1].value == 1.0);
    CHECK(g.edge_peak[1].ts == 25);
    CHECK(g.buffer_counter == std::vector<std::uint32_t>{tm::no_index, tm::no_index, 4});
    CHECK_FALSE(g.buffer_peak[0].any);
    CHECK(g.buffer_peak[2].value == 1.0);
    CHECK(g.buffer_peak[2].ts == 30);
    CHECK(g.live == 5);
    CHECK(g.live_peak.value == 2.0);
    CHECK(g.live_peak.ts == 12);
    CHECK(g.tokens == tm::no_index);
    CHECK_FALSE(g.tokens_peak.any);
    CHECK(g.stage_numbers == std::vector<std::uint64_t>{1, 1, 1});
    CHECK(g.events == std::vector<std::uint64_t>{5, 10, 12, 20, 25, 30, 35, 40, 45, 50});
    // The queue in front of stage 1 at the cursor.
    const auto& q = d.files[0]->model.tracks[g.edge_counter[0]].counters;
    CHECK_FALSE(counter_value_at(q, 9));
    CHECK(counter_value_at(q, 22) == 2.0);
    CHECK(counter_value_at(q, 40) == 0.0);
    // Nodes running per stage.
    CHECK(running_at(g, 1, 9) == 0);
    CHECK(running_at(g, 1, 10) == 1);
    CHECK(running_at(g, 1, 20) == 2);
    CHECK(running_at(g, 1, 25) == 1);   // (1,1) ended at 25
    CHECK(running_at(g, 1, 30) == 0);
    CHECK(running_at(g, 0, 10) == 1);   // (0,0) ended at 10, (1,0) started
    CHECK(running_at(g, 2, 44) == 1);
    CHECK(running_at(g, 7, 20) == 0);
    CHECK(latest_node_at(g, 1, 9) == tm::no_index);
    CHECK(latest_node_at(g, 1, 10) == 1);
    CHECK(latest_node_at(g, 1, 22) == 4);
    CHECK(latest_node_at(g, 1, 1000) == 4);
    CHECK(latest_node_at(g, 0, 11) == 3);
}

TEST_CASE("stage graph layout: a chain with queues, left to right", "[viewer][stage_graph]") {
    const auto stages = n_stages(3);
    const std::vector<graph_edge> edges = {edge(0, 1, true), edge(1, 2, false)};
    const layout_params p;   // box 150 x 84, gap 48, queue gap 110, margin 12, queue pad 14, queue height 16
    const graph_layout L = layout_stage_graph(stages, edges, p);
    REQUIRE(L.boxes.size() == 3);
    CHECK(L.boxes[0].x0 == 12);
    CHECK(L.boxes[0].x1 == 162);
    CHECK(L.boxes[1].x0 == 272);   // 162 + the queue gap
    CHECK(L.boxes[2].x0 == 470);   // 422 + the plain gap
    for (const auto& b : L.boxes) {
        CHECK(b.y0 == 12);
        CHECK(b.y1 == 96);
        CHECK(b.slot == 0);
    }
    CHECK(L.boxes[2].layer == 2);
    CHECK(L.width == 632);
    CHECK(L.height == 108);
    check_no_overlap(L);
    for (std::size_t k = 0; k + 1 < L.boxes.size(); ++k) CHECK(L.boxes[k].x1 < L.boxes[k + 1].x0);
    REQUIRE(L.edges.size() == 2);
    const layout_edge& e = L.edges[0];
    REQUIRE(e.points.size() == 2);
    CHECK(e.points[0].x == 162);
    CHECK(e.points[0].y == 54);
    CHECK(e.points[1].x == 272);
    CHECK(e.points[1].y == 54);
    CHECK_FALSE(e.feedback);
    REQUIRE(e.has_queue);
    CHECK(e.qx0 == 176);
    CHECK(e.qx1 == 258);
    CHECK(e.qy0 == 46);
    CHECK(e.qy1 == 62);
    CHECK_FALSE(L.edges[1].has_queue);
    CHECK(L.edges[1].points.back().x == 470);
    // An edge naming a stage that does not exist is laid out as nothing.
    const graph_layout bad = layout_stage_graph(stages, std::vector<graph_edge>{edge(0, 7, true)}, p);
    CHECK(bad.edges[0].points.empty());
    CHECK_FALSE(bad.edges[0].has_queue);
}

TEST_CASE("stage graph layout: shrinking to a width", "[viewer][stage_graph]") {
    const auto stages = n_stages(6);
    std::vector<graph_edge> edges;
    for (std::uint32_t k = 0; k < 5; ++k) edges.push_back(edge(k, k + 1, true));
    layout_params p;
    CHECK(layout_stage_graph(stages, edges, p).width == 1474);   // 24 + 6 x 150 + 5 x 110
    p.max_width = 1200;
    const graph_layout L = layout_stage_graph(stages, edges, p);
    CHECK(L.used.box_w == 121);      // floor(150 x 1176 / 1450)
    CHECK(L.used.queue_gap == 89);   // floor(110 x 1176 / 1450)
    CHECK(L.width == 1195);
    CHECK(L.width <= p.max_width);
    check_no_overlap(L);
    for (std::size_t k = 0; k + 1 < L.boxes.size(); ++k) {
        CHECK(L.boxes[k + 1].x0 - L.boxes[k].x1 == 89);
        CHECK(L.edges[k].qx0 > L.boxes[k].x1);
        CHECK(L.edges[k].qx1 < L.boxes[k + 1].x0);
    }
    // Not below the minimums: wider than asked, the view scrolls.
    p.max_width = 600;
    const graph_layout M = layout_stage_graph(stages, edges, p);
    CHECK(M.used.box_w == p.min_box_w);
    CHECK(M.used.queue_gap == p.min_queue_gap);
    CHECK(M.width == 24 + 6 * 96 + 5 * 84);
}

TEST_CASE("stage graph layout: fan-out, fan-in, a skip edge and a feedback edge", "[viewer][stage_graph]") {
    const layout_params p;
    {
        // 0 -> 1, 0 -> 2 (queue), 1 -> 3, 2 -> 3, 3 -> 0 (feedback, queue).
        const auto stages = n_stages(4);
        const std::vector<graph_edge> edges = {edge(0, 1), edge(0, 2, true), edge(1, 3), edge(2, 3), edge(3, 0, true)};
        const graph_layout L = layout_stage_graph(stages, edges, p);
        CHECK(L.boxes[0].layer == 0);
        CHECK(L.boxes[1].layer == 1);
        CHECK(L.boxes[2].layer == 1);
        CHECK(L.boxes[3].layer == 2);
        CHECK(L.boxes[1].slot == 0);
        CHECK(L.boxes[2].slot == 1);
        CHECK(L.boxes[1].x0 == 272);   // a queued edge enters layer 1
        CHECK(L.boxes[2].x0 == 272);
        CHECK(L.boxes[3].x0 == 470);
        CHECK(L.boxes[0].y0 == 72);   // centred on the two-box layer
        CHECK(L.boxes[1].y0 == 12);
        CHECK(L.boxes[2].y0 == 132);
        CHECK(L.boxes[3].y0 == 72);
        CHECK(L.width == 632);
        CHECK(L.height == 249);   // 216 + the feedback channel (21) + margin
        check_no_overlap(L);
        const layout_edge& fan = L.edges[1];
        REQUIRE(fan.points.size() == 4);
        CHECK(fan.points[0].x == 162);
        CHECK(fan.points[0].y == 114);
        CHECK(fan.points[1].x == 169);
        CHECK(fan.points[2].y == 174);
        CHECK(fan.points[3].x == 272);
        CHECK(fan.points[3].y == 174);
        REQUIRE(fan.has_queue);
        CHECK(fan.qx0 == 183);
        CHECK(fan.qx1 == 258);
        CHECK(fan.qy0 == 166);
        const layout_edge& back = L.edges[4];
        CHECK(back.feedback);
        for (std::size_t k = 0; k < 4; ++k) CHECK_FALSE(L.edges[k].feedback);
        REQUIRE(back.points.size() == 6);
        CHECK(back.points[0].x == 620);
        CHECK(back.points[2].y == 223);   // under every box
        CHECK(back.points[3].x == 5);
        CHECK(back.points[5].x == 12);   // into stage 0 from the left
        CHECK(back.points[5].y == 114);
        for (const auto& b : L.boxes) CHECK(b.y1 < back.points[2].y);
        REQUIRE(back.has_queue);
        CHECK(back.qx0 == 19);
        CHECK(back.qx1 == 613);
        CHECK(back.qy0 == 215);
    }
    {
        // 0 -> 1 -> 2 and 0 -> 2: the skip edge goes over the boxes.
        const auto stages = n_stages(3);
        const std::vector<graph_edge> edges = {edge(0, 1), edge(1, 2), edge(0, 2)};
        const graph_layout L = layout_stage_graph(stages, edges, p);
        CHECK(L.boxes[2].layer == 2);
        CHECK(L.boxes[0].y0 == 33);   // room over the boxes for one channel
        const layout_edge& skip = L.edges[2];
        REQUIRE(skip.points.size() == 6);
        CHECK(skip.points[2].y == 26);
        CHECK(skip.points[3].x == 367);   // in the gap before stage 2, right of stage 1
        CHECK(skip.points[3].x > L.boxes[1].x1);
        for (const auto& b : L.boxes) CHECK(b.y0 > skip.points[2].y);
        CHECK(skip.points.back().x == L.boxes[2].x0);
        check_no_overlap(L);
    }
    {
        // A self-loop is feedback; isolated stages stack in one layer.
        const auto stages = n_stages(2);
        const std::vector<graph_edge> edges = {edge(1, 1)};
        const graph_layout L = layout_stage_graph(stages, edges, p);
        CHECK(L.edges[0].feedback);
        CHECK(L.boxes[0].layer == 0);
        CHECK(L.boxes[1].layer == 0);
        CHECK(L.boxes[1].y0 == L.boxes[0].y1 + p.row_gap);
        check_no_overlap(L);
    }
}

// A stage graph's trace records only its queue counters; the trace model derives the footprint from
// them (docs/tracing.md, "Counters"), and the view's footprint row finds it by name like a recorded one.
TEST_CASE("stage graph: the footprint row of a graph run reads the footprint the trace model derived",
          "[viewer][stage_graph]") {
    namespace tr = pipescope::trace;
    const std::string meta = meta_of("gramps", R"({"kind":"graph","stages":[
        {"index":0,"kind":"serial","name":"source"},{"index":1,"kind":"serial","name":"sink"}],
        "queues":[{"index":0,"name":"a","element_bytes":8,"packet_elements":4,"capacity_packets":4,"producers":[0],"consumer":1,
                   "counter":"queue a packets"},
                  {"index":1,"name":"b","element_bytes":8,"packet_elements":4,"capacity_packets":4,"producers":[0],"consumer":1,
                   "counter":"queue b packets"}]})");
    auto counter = [](std::uint64_t ns, std::uint64_t queue, std::uint64_t value) {
        return tr::event_record{ns, queue, value, 0, tr::event_kind::counter, 0, 0};
    };
    const std::vector<tr::event_record> records = {counter(10, 0, 2), counter(20, 1, 3), counter(30, 0, 0),
                                                   counter(40, 1, 0)};
    std::ostringstream file;
    {
        tr::perfetto_writer out(file, {.counter_quantum_ns = 0});
        out.begin_run({"w · gramps · P=1", 1, meta, {"queue a packets", "queue b packets"}},
                      tr::run_clock::fixed(tr::tick_converter({0, 0}, {1000, 1000}), 0));   // ticks are ns
        out.add_chunk(0, records.data(), records.size());
        out.end_run();
        out.finish();
    }
    document d;
    d.add(prepare_file(tr::load_trace(file.str()), "graph.pftrace"));
    REQUIRE(d.runs.size() == 1);
    const run_graph g = build_run_graph(d, 0);
    REQUIRE(g.footprint != tm::no_index);
    const tm::track& footprint = d.files[0]->model.tracks[g.footprint];
    CHECK(footprint.name == "footprint packets");
    CHECK(footprint.derived);
    CHECK(g.footprint_peak.value == 5.0);
    CHECK(footprint.counters.size() == 4);
}
