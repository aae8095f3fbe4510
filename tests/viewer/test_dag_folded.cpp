// The DAG view's model on folded blocks (viewer/model/dag_state.hpp; docs/viewer.md, "Folded
// traces"): a block covers the rows of its stages, its nodes take equal shares of its time, the
// state counts count its nodes, the draw list draws it as one box split at the share boundaries.
#include <catch2/catch.hpp>

#include <model/dag_state.hpp>

#include <algorithm>
#include <optional>

using namespace pipescope::viewer;
using tm::dag_edge_kind;

namespace {

// Three iterations, stages 0..3, worker 0 except (2, 0):
//   b0 (0, 0–2) [0, 30)  3 nodes: shares [0,10) [10,20) [20,30)
//   n1 (1, 0)   [30, 35)
//   b2 (1, 1–3) [35, 47) 3 nodes: shares [35,39) [39,43) [43,47)
//   n3 (2, 0)   [47, 50) w1
//   n4 (2, 2)   [60, 70) waited (null node (2, 1))
// Edges as the trace model makes them: stage down each iteration; the cross edge into a block from
// the block of i-1 holding its last stage (b0 holds stage 2 <= 3); (2, 2) waits on b2.
tm::pipeline_dag folded_dag() {
    tm::pipeline_dag d;
    auto add = [&](std::uint64_t i, std::uint64_t j, std::uint64_t last, std::uint64_t s, std::uint64_t e, int w,
                   bool waited) {
        d.nodes.push_back({.iteration = i,
                           .stage = j,
                           .last_stage = last,
                           .start = s,
                           .end = e,
                           .nodes = static_cast<std::uint32_t>(last - j + 1),
                           .worker = w,
                           .waited = waited,
                           .slice = {static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(d.nodes.size()), false}});
    };
    add(0, 0, 2, 0, 30, 0, false);
    add(1, 0, 0, 30, 35, 0, false);
    add(1, 1, 3, 35, 47, 0, false);
    add(2, 0, 0, 47, 50, 1, false);
    add(2, 2, 2, 60, 70, 0, true);
    d.edges = {{1, 2, dag_edge_kind::stage},
               {0, 2, dag_edge_kind::cross},
               {3, 4, dag_edge_kind::stage},
               {2, 4, dag_edge_kind::cross}};
    d.iterations = 3;
    d.node_count = 9;
    d.folded_blocks = 2;
    return d;
}

}   // namespace

TEST_CASE("dag folded: a block covers its stages' rows, cells inside it hit it", "[viewer][dag][folded]") {
    const auto d = folded_dag();
    const dag_index x = build_dag_index(d);
    CHECK(x.row_stage == std::vector<std::uint64_t>{0, 1, 2, 3});   // stage 3 only inside b2
    CHECK(x.node_row == std::vector<std::uint32_t>{0, 0, 1, 0, 2});
    CHECK(x.node_last_row == std::vector<std::uint32_t>{2, 0, 3, 0, 2});
    CHECK(x.node_total == 9);
    CHECK(x.folded_blocks == 2);
    CHECK(x.folded_nodes == 6);
    for (std::uint32_t r = 0; r < 3; ++r) CHECK(x.node_at_cell(0, r) == 0);
    CHECK(x.node_at_cell(0, 3) == tm::no_index);
    CHECK(x.node_at_cell(1, 0) == 1);
    for (std::uint32_t r = 1; r < 4; ++r) CHECK(x.node_at_cell(1, r) == 2);
    CHECK(x.node_at_cell(2, 1) == tm::no_index);   // the null node (2, 1)
    CHECK(x.node_at_cell(2, 2) == 4);
    CHECK(x.node_at_cell(2, 3) == tm::no_index);
}

TEST_CASE("dag folded: the nodes of a block are done by their share of its time", "[viewer][dag][folded]") {
    const auto d = folded_dag();
    const dag_index x = build_dag_index(d);
    const tm::dag_node& b0 = d.nodes[0];
    const std::pair<std::uint64_t, std::uint32_t> done_at[] = {{0, 0},  {9, 0},  {10, 1}, {19, 1},
                                                               {20, 2}, {29, 2}, {30, 3}, {99, 3}};
    for (const auto& [t, n] : done_at) {
        INFO("t = " << t);
        CHECK(nodes_done_at(b0, t) == n);
    }
    CHECK(node_share_times(b0, 1) == std::pair<std::uint64_t, std::uint64_t>{10, 20});
    CHECK(node_share_times(d.nodes[2], 2) == std::pair<std::uint64_t, std::uint64_t>{43, 47});
    CHECK(nodes_done_at(d.nodes[1], 34) == 0);   // a node: 0 until its end, then 1
    CHECK(nodes_done_at(d.nodes[1], 35) == 1);

    using S = node_state;
    // At 15 ns b0's first node is done, its second runs, its third is not ready.
    CHECK(state_in_block(d, x, 0, 0, 15) == S::done);
    CHECK(state_in_block(d, x, 0, 1, 15) == S::running);
    CHECK(state_in_block(d, x, 0, 2, 15) == S::not_ready);
    CHECK(state_at(d, x, 0, 15) == S::running);   // the block as a whole
    // Before b2 starts: its first node has the block's state (its stage and cross predecessors are
    // done at 35), the others wait for it.
    CHECK(state_in_block(d, x, 2, 0, 34) == S::not_ready);   // (1, 0) ends at 35
    CHECK(state_in_block(d, x, 2, 0, 35) == S::running);
    CHECK(state_in_block(d, x, 2, 1, 35) == S::not_ready);
    CHECK(state_in_block(d, x, 2, 1, 40) == S::running);
    CHECK(state_in_block(d, x, 2, 2, 46) == S::running);
    CHECK(state_in_block(d, x, 2, 2, 47) == S::done);
    // A node: state_in_block is state_at.
    CHECK(state_in_block(d, x, 4, 0, 55) == state_at(d, x, 4, 55));
}

TEST_CASE("dag folded: replay steps stop at each node's share inside a block", "[viewer][dag][folded]") {
    const auto d = folded_dag();
    const dag_index x = build_dag_index(d);
    CHECK(x.events == std::vector<std::uint64_t>{0, 30, 35, 47, 50, 60, 70});
    // Forward from the start: b0's shares, (1, 0), b2's shares, then the nodes.
    std::vector<std::uint64_t> fwd;
    for (auto t = std::optional<std::uint64_t>{0}; t; t = x.next_event(*t)) fwd.push_back(*t);
    CHECK(fwd == std::vector<std::uint64_t>{0, 10, 20, 30, 35, 39, 43, 47, 50, 60, 70});
    std::vector<std::uint64_t> back;
    for (auto t = std::optional<std::uint64_t>{70}; t; t = x.prev_event(*t)) back.push_back(*t);
    std::reverse(back.begin(), back.end());
    CHECK(back == fwd);
    CHECK(x.next_event(12) == 20u);
    CHECK(x.prev_event(12) == 10u);
    CHECK(x.prev_event(40) == 39u);
}

TEST_CASE("dag folded: state counts count the nodes inside blocks by their shares", "[viewer][dag][folded]") {
    const auto d = folded_dag();
    const dag_index x = build_dag_index(d);
    for (std::uint64_t t = 0; t <= 75; ++t) {
        INFO("t = " << t);
        // The counts from the per-node states (every node of every block).
        state_counts want;
        for (std::uint32_t v = 0; v < d.nodes.size(); ++v)
            for (std::uint32_t k = 0; k < d.nodes[v].nodes; ++k) {
                const node_state s = state_in_block(d, x, v, k, t);
                if (s == node_state::done) ++want.done;
                else if (s == node_state::running) ++want.running;
                else if (s == node_state::suspended) ++want.suspended;
                else if (s == node_state::ready) ++want.ready;
                else ++want.not_ready;
            }
        const state_counts c = counts_at(x, t);
        CHECK(c.done == want.done);
        CHECK(c.running == want.running);
        CHECK(c.suspended == want.suspended);
        CHECK(c.ready == want.ready);
        CHECK(c.not_ready == want.not_ready);
        CHECK(c.done + c.running + c.suspended + c.ready + c.not_ready == 9);
    }
    const state_counts mid = counts_at(x, 40);   // b0 and (1, 0) done, b2: one share done, one running
    CHECK(mid.done == 5);
    CHECK(mid.running == 1);
}

TEST_CASE("dag folded: the draw list draws a block as one box over its rows, split at its shares", "[viewer][dag][folded]") {
    const auto d = folded_dag();
    const dag_index x = build_dag_index(d);
    dag_camera cam;
    cam.sx = cam.sy = 20;
    cam.width = 60;
    cam.height = 80;
    cam.x0 = cam.y0 = 0;
    dag_draw_params p;
    p.t = 15;
    p.box_frac = 0.5;   // boxes 10 px in 20 px cells, 5 px in
    dag_draw_list out;
    build_dag_draw_list(d, x, cam, p, out);
    REQUIRE(!out.lod);
    REQUIRE(out.boxes.size() == 5);
    const dag_box& b = out.boxes[0];
    CHECK(b.node == 0);
    CHECK(b.folded);
    CHECK(b.state == node_state::running);
    CHECK(b.y0 == 5);
    CHECK(b.y1 == 2 * 20 + 5 + 10);   // to the bottom of its last row's box
    CHECK(b.split0 == 25);            // its first node done: row 1 starts there
    CHECK(b.split1 == 45);            // the second running, up to row 2
    CHECK_FALSE(out.boxes[1].folded);
    CHECK(out.boxes[1].y1 - out.boxes[1].y0 == 10);
    // Null marks only where an iteration skips a stage: (2, 1), not inside the blocks.
    REQUIRE(out.nulls.size() == 1);
    CHECK(out.nulls[0].x == Approx(50));
    CHECK(out.nulls[0].y == Approx(30));
    // The cross edge into b2 enters at its last row (stage 3) from b0's last row (stage 2).
    bool cross = false;
    for (const auto& e : out.edges)
        if (e.kind == dag_edge_kind::cross && e.bx == 25) {
            cross = true;
            CHECK(e.ay == Approx(2 * 20 + 5 + 5));
            CHECK(e.by == Approx(3 * 20 + 5 + 5));
        }
    CHECK(cross);
    // A block scrolled so that it starts above the view is still drawn.
    cam.y0 = 2;
    build_dag_draw_list(d, x, cam, p, out);
    bool b2 = false;
    for (const auto& bx : out.boxes) b2 |= bx.node == 2;
    CHECK(b2);
    // Zoomed out: cells count the nodes inside blocks (and how many of them are folded).
    cam.sx = cam.sy = 0.5;
    cam.x0 = cam.y0 = 0;
    cam.width = cam.height = 100;
    build_dag_draw_list(d, x, cam, p, out);
    REQUIRE(out.lod);
    REQUIRE(out.cells.size() == 1);
    CHECK(out.cells[0].nodes == 9);
    CHECK(out.cells[0].folded_nodes == 6);
    CHECK(out.cells[0].state == node_state::running);
}
