// The pipeline DAG view's model (Cilk-P's picture, seed 001 Fig. 1 and 3): indices over a run's
// `pipeline_dag` built once, the state of each node at a time t, the critical path, a 2-D camera
// (iterations across, stages down) and the draw list of one frame. Pure C++ (no ImGui, no GL).
//
// Node states at time t (absolute ns), in this order of precedence:
//   done       t >= end
//   running    start <= t < end (on node.worker)
//   suspended  t < start and the iteration made a "suspend" before this node at or before t: it waits
//              (for the cross edge into this node) between the suspend and this node's start
//   ready      t < start and every predecessor (stage, cross and throttle edges; retire edges order
//              retirement, not starts) has ended at or before t
//   not ready  otherwise
//
// Folded traces (trace_model.hpp, pipeline_dag): a DAG node may be a folded block holding the
// consecutive stages [stage, last_stage] of one iteration, one node each. It covers the rows of all
// its stages (rows are every stage any node or block holds) and is drawn as one box over them. Its
// nodes take equal shares of its time (analysis/scope.hpp, node_share): node k runs in
// [start + share(k), start + share(k + 1)), so at t inside the block the nodes before the one
// running are done and those after it not ready (their stage predecessor has not finished); before
// the block starts its first node has the block's state and the others are not ready.
//
// Per frame, the draw list touches only the visible columns (plus the K columns a throttle edge can
// reach back over) and rows; when cells get smaller than `min_box_px`, groups of columns/rows become
// one cell (all columns of a group counted up to 16, 16 evenly spread ones beyond) coloured by the
// most active state in it (running, then suspended, then ready), else by the majority of done and
// not ready nodes, so that the front of the execution stays visible when zoomed out.
#pragma once

#include <pipescope/analysis/dag_bounds.hpp>

#include "document.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <vector>

namespace pipescope::viewer {

enum class node_state : std::uint8_t { not_ready, ready, running, suspended, done };
inline constexpr int node_state_count = 5;
const char* to_string(node_state s);

// A set of DAG edge kinds.
using edge_mask = unsigned;
inline constexpr edge_mask edge_bit(tm::dag_edge_kind k) { return 1u << static_cast<unsigned>(k); }
inline constexpr edge_mask all_edge_kinds = 0xF;
inline constexpr edge_mask ready_edge_kinds =
    edge_bit(tm::dag_edge_kind::stage) | edge_bit(tm::dag_edge_kind::cross) | edge_bit(tm::dag_edge_kind::throttle);

inline constexpr std::uint64_t no_time = ~std::uint64_t{0};

// A "suspend" instant: iteration `iteration` suspended at `ts`.
struct suspend_mark {
    std::uint64_t iteration = 0;
    std::uint64_t ts = 0;
};
// The "suspend" instants (with an `iteration` annotation) on the run's worker tracks.
std::vector<suspend_mark> find_suspends(const tm::trace_model& m, const tm::run& r);

// Indices over one run's DAG, built once (O(N log N)); nothing here is rebuilt per frame.
struct dag_index {
    std::vector<std::uint32_t> in_first;        // nodes + 1: edges into v are edges[in_first[v], in_first[v+1])
    std::vector<std::uint32_t> in_edges;        // edge indices grouped by target
    std::vector<std::uint32_t> col_first;       // columns + 1: nodes of column c are [col_first[c], col_first[c+1])
    std::vector<std::uint64_t> col_iteration;   // iteration of each column (ascending)
    std::vector<std::uint32_t> node_col;        // column of each node
    std::vector<std::uint64_t>
        row_stage;   // distinct stages (those inside folded blocks too), ascending: row r shows stage row_stage[r]
    std::vector<std::uint32_t> node_row;        // row of each node (a folded block: of its first stage)
    std::vector<std::uint32_t> node_last_row;   // row of each node's last stage (== node_row unless folded)
    std::vector<std::uint64_t> suspend_at;      // per node: when its iteration suspended before it, or no_time
    std::vector<std::uint64_t> events;          // node starts and ends, sorted, unique
    std::vector<std::uint64_t> starts, ends;    // sorted (for state counts)
    std::vector<std::uint64_t> end_nodes;       // ends.size() + 1: nodes of the blocks ending by ends[k], prefix sums
    struct block_time {
        std::uint64_t start, end;
        std::uint32_t nodes;
    };
    std::vector<std::vector<block_time>> folded_by_worker;   // folded blocks per worker, by start (running ones at t)
    std::uint64_t node_total = 0;                            // nodes, those inside folded blocks included
    std::uint64_t folded_blocks = 0, folded_nodes = 0;       // folded blocks and the nodes they hold
    std::vector<std::uint64_t> susp_from, susp_to;           // suspended nodes: suspend times, their starts (sorted)
    std::vector<std::uint64_t> ready_from, ready_to;   // ready nodes: [last predecessor's end, start or suspend) (sorted)
    std::vector<std::pair<std::uint64_t, std::uint32_t>> by_slice;   // (track << 32 | slice index, node), sorted
    int workers = 0;                                                 // max worker + 1
    std::uint64_t start = 0, end = 0;                                // first start, last end (0, 0 if no nodes)
    std::uint32_t edge_span = 1;                                     // the most columns an edge spans (K for throttle edges)

    std::size_t columns() const { return col_iteration.size(); }
    std::size_t rows() const { return row_stage.size(); }
    // The node of a slice (its node slice on a worker track), or no_index.
    std::uint32_t node_of_slice(const tm::event_ref& e) const;
    // The node or folded block at (column, row), or no_index (a null node or an empty cell).
    std::uint32_t node_at_cell(std::uint32_t col, std::uint32_t row) const;
    // The first event (node start or end; inside a running folded block, the end of a node's
    // share) strictly after t / strictly before t. O(log N + the folded blocks' workers x log N).
    std::optional<std::uint64_t> next_event(std::uint64_t t) const;
    std::optional<std::uint64_t> prev_event(std::uint64_t t) const;
    // The nodes of the folded blocks running at t whose share has passed (each worker runs one
    // block at a time: the last of its blocks starting at or before t, if it has not ended).
    std::uint64_t folded_done_at(std::uint64_t t) const;
};

dag_index build_dag_index(const tm::pipeline_dag& dag, std::span<const suspend_mark> suspends = {});

// "stage 5"; numbers at 2^32 and beyond that sit just above a power of two as that power
// ("stage 2^40 + 1", x264's output stage), so that they fit the row labels.
std::string stage_number_text(std::uint64_t stage);

// The label of a DAG row: its stage number, and the run metadata's description of that stage.
struct dag_row_label {
    std::string stage;   // stage_number_text
    std::string name;    // the program.stages entry describing the stage ("≥" written ">="), or ""
};
// The labels of the rows showing stages `row_stage`. The name is the entry whose name says it
// describes that stage (stage_graph.hpp, stage_name_of_number): "stage 5 · output" exactly stage 5,
// "stage j ≥ 1 · …" every later stage no entry names; an entry whose name has no stage number
// describes the stage of its index. A formula ("stage 1 + w·i + r · …", x264: which stage is row r
// of iteration i depends on w and the frame height, and two formula entries cover the same
// numbers) describes no row: no name is better than a wrong one.
std::vector<dag_row_label> dag_row_labels(std::span<const tm::stage_info> stages, std::span<const std::uint64_t> row_stage);

// The state of node v at absolute time t (see the definition above); for a folded block, of the
// block as a whole (running from its start to its end).
node_state state_at(const tm::pipeline_dag& dag, const dag_index& idx, std::uint32_t v, std::uint64_t t,
                    edge_mask ready_mask = ready_edge_kinds);
// How many of a block's nodes are done at t, each taking an equal share of the block's time (a
// node: 0 or 1).
std::uint32_t nodes_done_at(const tm::dag_node& nd, std::uint64_t t);
std::uint32_t nodes_done_at(std::uint64_t start, std::uint64_t end, std::uint32_t nodes, std::uint64_t t);
// When node k of block nd starts and ends (its share; a node: its own times).
std::pair<std::uint64_t, std::uint64_t> node_share_times(const tm::dag_node& nd, std::uint32_t k);
// The state of node k (stage nd.stage + k) of block v at t (see the definition above; a node: state_at).
node_state state_in_block(const tm::pipeline_dag& dag, const dag_index& idx, std::uint32_t v, std::uint32_t k,
                          std::uint64_t t, edge_mask ready_mask = ready_edge_kinds);

// How many nodes are done / running / suspended / ready / not ready at t: O(log N + the folded
// blocks' workers x log N); the nodes inside folded blocks counted by their shares.
struct state_counts {
    // Every state state_in_block draws, so they sum to node_total (a folded block's later nodes are
    // never ready: their stage predecessor is the node before them in the block).
    std::uint64_t done = 0, running = 0, suspended = 0, ready = 0, not_ready = 0;
};
state_counts counts_at(const dag_index& idx, std::uint64_t t);

// The critical path the analysis computed (analysis/dag_bounds.hpp: node weight = duration,
// retirement as a chain, throttling edges from retirements), marked on the DAG's nodes and edges
// for drawing. A step of the path with no DAG edge between its two nodes (a throttling edge leaves
// from the retirement that set R, which the DAG draws from another node) marks no edge.
struct critical_path {
    std::vector<std::uint32_t> nodes;   // first to last
    std::uint64_t length = 0;           // sum of the durations on the path (ns)
    std::vector<char> on_node;          // per node
    std::vector<char> on_edge;          // per edge
    bool empty() const { return nodes.empty(); }
};
critical_path critical_path_of(const tm::pipeline_dag& dag, const dag_index& idx, const analysis::span_result& path);

// The camera over the grid: world x = column, world y = row (a cell is 1 x 1), pixels relative to
// the canvas' top-left corner.
struct dag_camera {
    double x0 = 0, y0 = 0;     // world coordinates at the canvas' top-left
    double sx = 24, sy = 24;   // pixels per column / per row
    double width = 800, height = 600;
    double min_scale = 1e-4, max_scale = 400;

    double px_x(double col) const { return (col - x0) * sx; }
    double px_y(double row) const { return (row - y0) * sy; }
    double col_at(double px) const { return x0 + px / sx; }
    double row_at(double py) const { return y0 + py / sy; }
    // factor > 1 zooms in; the world point under (px, py) stays under it.
    void zoom_at(double px, double py, double fx, double fy);
    void pan_px(double dx, double dy) {
        x0 -= dx / sx;
        y0 -= dy / sy;
    }
    // Shows the whole grid (cols x rows) with `margin` px around it, centred across and from the
    // top; cells at most `max_cell` px and not more than `max_aspect` times wider than tall.
    void fit(double cols, double rows, double margin = 8, double max_cell = 48, double max_aspect = 2.5);
    // Centres on a cell, keeping the scale.
    void centre_on(double col, double row);
    // Keeps at least 40 px of the grid in view each way and the scales within the limits.
    void clamp(double cols, double rows);
};

// The cell under a pixel, or no_index.
std::uint32_t node_at_px(const dag_index& idx, const dag_camera& cam, double px, double py);

struct dag_box {
    float x0, y0, x1, y1;   // pixels, snapped to whole pixels, at least one pixel apart
    std::uint32_t node;
    node_state state;
    bool critical;
    // A folded block (over its rows): its nodes done at t fill [y0, split0), the next node (running,
    // or before the block starts its first node, in `state`) [split0, split1), the rest are not ready.
    bool folded = false;
    float split0 = 0, split1 = 0;
};
struct dag_null_mark {
    float x, y;
};   // centre of a null node's cell
struct dag_edge_seg {
    float ax, ay, bx, by;
    tm::dag_edge_kind kind;
    bool critical;
};
struct dag_lod_cell {
    float x0, y0, x1, y1;
    node_state state;                 // running > suspended > ready > the majority of done / not ready
    int worker;                       // dominant worker among its done/running nodes, or -1
    std::uint32_t nodes;              // nodes counted (sampled when the group is large)
    std::uint32_t folded_nodes = 0;   // how many of them are inside folded blocks
};
struct dag_draw_list {
    std::vector<dag_box> boxes;
    std::vector<dag_null_mark> nulls;
    std::vector<dag_edge_seg> edges;
    std::vector<dag_lod_cell> cells;
    bool lod = false;                                       // cells instead of boxes
    std::uint32_t col0 = 0, col1 = 0, row0 = 0, row1 = 0;   // visible [col0, col1) x [row0, row1)
    std::vector<std::uint32_t> scratch;                     // reused: per visible row group, state/worker counts
    void clear();
};
struct dag_draw_params {
    std::uint64_t t = 0;   // absolute ns
    edge_mask edges_shown = all_edge_kinds;
    edge_mask ready_mask = ready_edge_kinds;
    const critical_path* critical = nullptr;   // highlight, or nullptr
    double min_box_px = 3;                     // cells narrower (or lower) than this are grouped
    double min_edge_px = 7;                    // no edges when cells are smaller
    double box_frac = 0.68;                    // box size / cell size
};
// Fills `out` (cleared first; its vectors keep their capacity) with what is visible.
void build_dag_draw_list(const tm::pipeline_dag& dag, const dag_index& idx, const dag_camera& cam, const dag_draw_params& p,
                         dag_draw_list& out);

}   // namespace pipescope::viewer
