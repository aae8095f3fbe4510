#include "dag_state.hpp"

#include "stage_graph.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace pipescope::viewer {

const char* to_string(node_state s) {
    switch (s) {
        case node_state::not_ready: return "not ready";
        case node_state::ready: return "ready";
        case node_state::running: return "running";
        case node_state::suspended: return "suspended";
        case node_state::done: return "done";
    }
    return "?";
}

std::string stage_number_text(std::uint64_t stage) {
    if (stage >> 32 == 0) return vocab::numbered(vocab::stage_prefix, stage);
    const int power = std::bit_width(stage) - 1;
    const std::uint64_t above = stage - (std::uint64_t{1} << power);
    if (above >= (std::uint64_t{1} << 16)) return vocab::numbered(vocab::stage_prefix, stage);
    std::string s = "stage 2^" + std::to_string(power);
    if (above) s += " + " + std::to_string(above);
    return s;
}

std::vector<dag_row_label> dag_row_labels(std::span<const tm::stage_info> stages, std::span<const std::uint64_t> row_stage) {
    std::vector<dag_row_label> out;
    out.reserve(row_stage.size());
    for (std::uint64_t j : row_stage) out.push_back({stage_number_text(j), stage_name_of_number(stages, j)});
    return out;
}

std::vector<suspend_mark> find_suspends(const tm::trace_model& m, const tm::run& r) {
    std::vector<suspend_mark> out;
    for (std::uint32_t ti : r.workers) {
        if (ti == tm::no_index || ti >= m.tracks.size()) continue;
        for (const tm::instant& in : m.tracks[ti].instants) {
            if (m.str(in.name) != vocab::suspend) continue;
            if (auto it = m.uint_arg(in, vocab::arg_key::iteration)) out.push_back({*it, in.ts});
        }
    }
    return out;
}

namespace {

// Incoming edges by target (a counting sort): the edges into v are one range, for state_at.
void index_in_edges(const tm::pipeline_dag& dag, dag_index& x) {
    const std::size_t n = dag.nodes.size();
    x.in_first.assign(n + 1, 0);
    for (const auto& e : dag.edges)
        if (e.to < n && e.from < n) ++x.in_first[e.to + 1];
    for (std::size_t v = 0; v < n; ++v) x.in_first[v + 1] += x.in_first[v];
    x.in_edges.resize(x.in_first[n]);
    std::vector<std::uint32_t> fill(x.in_first.begin(), x.in_first.end() - 1);
    for (std::uint32_t k = 0; k < dag.edges.size(); ++k) {
        const auto& e = dag.edges[k];
        if (e.to < n && e.from < n) x.in_edges[fill[e.to]++] = k;
    }
}

// Columns: the distinct iterations, in node order (an iteration's nodes are consecutive).
void index_columns(const std::vector<tm::dag_node>& nodes, dag_index& x) {
    const std::size_t n = nodes.size();
    x.node_col.resize(n);
    for (std::uint32_t v = 0; v < n; ++v) {
        if (v == 0 || nodes[v].iteration != nodes[v - 1].iteration) {
            x.col_first.push_back(v);
            x.col_iteration.push_back(nodes[v].iteration);
        }
        x.node_col[v] = static_cast<std::uint32_t>(x.col_first.size() - 1);
    }
    x.col_first.push_back(static_cast<std::uint32_t>(n));
}

// Rows: every stage a node or a folded block holds (the union of the blocks' stage ranges), and
// the rows of each node's first and last stage.
void index_rows(const std::vector<tm::dag_node>& nodes, dag_index& x) {
    const std::size_t n = nodes.size();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    ranges.reserve(n);
    for (const auto& nd : nodes) ranges.emplace_back(nd.stage, std::max(nd.stage, nd.last_stage));
    std::sort(ranges.begin(), ranges.end());
    ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
    x.row_stage.reserve(64);
    for (const auto& [a, b] : ranges)
        for (std::uint64_t j = x.row_stage.empty() ? a : std::max(a, x.row_stage.back() + 1); j <= b && j >= a; ++j)
            x.row_stage.push_back(j);
    x.row_stage.shrink_to_fit();
    auto row_of = [&](std::uint64_t stage) {
        return static_cast<std::uint32_t>(std::lower_bound(x.row_stage.begin(), x.row_stage.end(), stage) -
                                          x.row_stage.begin());
    };
    x.node_row.resize(n);
    x.node_last_row.resize(n);
    for (std::uint32_t v = 0; v < n; ++v) {
        x.node_row[v] = row_of(nodes[v].stage);
        x.node_last_row[v] = nodes[v].folded() ? row_of(nodes[v].last_stage) : x.node_row[v];
    }
}

// Suspensions: the node an iteration waits for is its first node starting at or after the suspend.
void index_suspends(const std::vector<tm::dag_node>& nodes, std::span<const suspend_mark> suspends, dag_index& x) {
    x.suspend_at.assign(nodes.size(), no_time);
    for (const suspend_mark& s : suspends) {
        auto ci = std::lower_bound(x.col_iteration.begin(), x.col_iteration.end(), s.iteration);
        if (ci == x.col_iteration.end() || *ci != s.iteration) continue;
        const std::size_t c = static_cast<std::size_t>(ci - x.col_iteration.begin());
        for (std::uint32_t v = x.col_first[c]; v < x.col_first[c + 1]; ++v)
            if (nodes[v].start >= s.ts) {
                x.suspend_at[v] = std::min(x.suspend_at[v], s.ts);
                break;
            }
    }
}

// (end, nodes held): a block's end counts all its nodes done.
using end_mark = std::pair<std::uint64_t, std::uint32_t>;

// Each node's start, end and suspension, the workers, the node totals and the folded blocks by
// worker (a worker runs one at a time: what folded_done_at looks up). Returns the ends, unsorted.
std::vector<end_mark> collect_times(const std::vector<tm::dag_node>& nodes, dag_index& x) {
    const std::size_t n = nodes.size();
    x.starts.reserve(n);
    std::vector<end_mark> ends;
    ends.reserve(n);
    for (std::uint32_t v = 0; v < n; ++v) {
        const tm::dag_node& nd = nodes[v];
        const std::uint32_t held = std::max<std::uint32_t>(1, nd.nodes);
        x.starts.push_back(nd.start);
        ends.emplace_back(std::max(nd.start, nd.end), held);
        if (x.suspend_at[v] != no_time) {
            x.susp_from.push_back(x.suspend_at[v]);
            x.susp_to.push_back(nd.start);
        }
        x.workers = std::max(x.workers, nd.worker + 1);
        x.node_total += held;
        if (nd.folded()) {
            ++x.folded_blocks;
            x.folded_nodes += held;
            if (nd.worker >= 0) {
                if (x.folded_by_worker.size() <= static_cast<std::size_t>(nd.worker))
                    x.folded_by_worker.resize(nd.worker + 1);
                x.folded_by_worker[nd.worker].push_back({nd.start, std::max(nd.start, nd.end), held});
            }
        }
    }
    return ends;
}

// When each node (or block: its first node) is ready: from its last ready-edge predecessor's end
// until it starts or its iteration suspends before it (state_at's precedence), kept when not empty.
void index_ready(const tm::pipeline_dag& dag, dag_index& x) {
    for (std::uint32_t v = 0; v < dag.nodes.size(); ++v) {
        std::uint64_t from = 0;
        for (std::uint32_t k = x.in_first[v]; k < x.in_first[v + 1]; ++k) {
            const tm::dag_edge& e = dag.edges[x.in_edges[k]];
            if (!(ready_edge_kinds & edge_bit(e.kind))) continue;
            const tm::dag_node& u = dag.nodes[e.from];
            from = std::max(from, std::max(u.start, u.end));
        }
        const std::uint64_t to = std::min(dag.nodes[v].start, x.suspend_at[v]);
        if (from < to) {
            x.ready_from.push_back(from);
            x.ready_to.push_back(to);
        }
    }
    std::sort(x.ready_from.begin(), x.ready_from.end());
    std::sort(x.ready_to.begin(), x.ready_to.end());
}

// Everything counts_at and the replay's steps look up by binary search, sorted: starts, ends with
// the nodes done by each, suspensions, and the events (starts and ends, unique).
void sort_times(std::vector<end_mark> ends, dag_index& x) {
    const std::size_t n = ends.size();
    for (auto& blocks : x.folded_by_worker)
        std::sort(blocks.begin(), blocks.end(),
                  [](const dag_index::block_time& a, const dag_index::block_time& b) { return a.start < b.start; });
    std::sort(x.starts.begin(), x.starts.end());
    std::sort(ends.begin(), ends.end());
    x.ends.reserve(n);
    x.end_nodes.assign(1, 0);
    x.end_nodes.reserve(n + 1);
    for (const auto& [e, held] : ends) {
        x.ends.push_back(e);
        x.end_nodes.push_back(x.end_nodes.back() + held);
    }
    std::sort(x.susp_from.begin(), x.susp_from.end());
    std::sort(x.susp_to.begin(), x.susp_to.end());
    x.events.reserve(2 * n);
    std::merge(x.starts.begin(), x.starts.end(), x.ends.begin(), x.ends.end(), std::back_inserter(x.events));
    x.events.erase(std::unique(x.events.begin(), x.events.end()), x.events.end());
    if (n) {
        x.start = x.starts.front();
        x.end = x.ends.back();
    }
}

// The node of each slice (clicking a slice in the timeline selects its node), and the most columns
// an edge spans (how far left of the view the draw list looks for throttle edges).
void index_slices_and_span(const tm::pipeline_dag& dag, dag_index& x) {
    const auto& nodes = dag.nodes;
    const std::size_t n = nodes.size();
    for (std::uint32_t v = 0; v < n; ++v)
        if (nodes[v].slice.valid() && !nodes[v].slice.is_instant)
            x.by_slice.emplace_back((std::uint64_t{nodes[v].slice.track} << 32) | nodes[v].slice.index, v);
    std::sort(x.by_slice.begin(), x.by_slice.end());
    for (const auto& e : dag.edges)
        if (e.to < n && e.from < n && x.node_col[e.to] > x.node_col[e.from])
            x.edge_span = std::max(x.edge_span, x.node_col[e.to] - x.node_col[e.from]);
}

}   // namespace

dag_index build_dag_index(const tm::pipeline_dag& dag, std::span<const suspend_mark> suspends) {
    dag_index x;
    index_in_edges(dag, x);
    index_columns(dag.nodes, x);
    index_rows(dag.nodes, x);
    index_suspends(dag.nodes, suspends, x);   // after the columns: it finds the iteration's column
    sort_times(collect_times(dag.nodes, x), x);
    index_ready(dag, x);   // after the suspensions
    index_slices_and_span(dag, x);
    return x;
}

std::uint32_t dag_index::node_of_slice(const tm::event_ref& e) const {
    if (!e.valid() || e.is_instant) return tm::no_index;
    const std::uint64_t key = (std::uint64_t{e.track} << 32) | e.index;
    auto it = std::lower_bound(by_slice.begin(), by_slice.end(), std::pair{key, std::uint32_t{0}});
    return it != by_slice.end() && it->first == key ? it->second : tm::no_index;
}

std::uint32_t dag_index::node_at_cell(std::uint32_t col, std::uint32_t row) const {
    if (col >= columns()) return tm::no_index;
    const auto b = node_row.begin() + col_first[col], e = node_row.begin() + col_first[col + 1];
    auto it = std::upper_bound(b, e, row);   // the last node starting at or above the row: it or nothing
    if (it == b) return tm::no_index;
    const auto v = static_cast<std::uint32_t>(it - 1 - node_row.begin());
    return node_last_row[v] >= row ? v : tm::no_index;
}

node_state state_at(const tm::pipeline_dag& dag, const dag_index& idx, std::uint32_t v, std::uint64_t t,
                    edge_mask ready_mask) {
    const tm::dag_node& nd = dag.nodes[v];
    if (t >= std::max(nd.start, nd.end)) return node_state::done;
    if (t >= nd.start) return node_state::running;
    if (idx.suspend_at[v] <= t) return node_state::suspended;
    for (std::uint32_t k = idx.in_first[v]; k < idx.in_first[v + 1]; ++k) {
        const tm::dag_edge& e = dag.edges[idx.in_edges[k]];
        if (!(ready_mask & edge_bit(e.kind))) continue;
        const tm::dag_node& u = dag.nodes[e.from];
        if (t < std::max(u.start, u.end)) return node_state::not_ready;
    }
    return node_state::ready;
}

state_counts counts_at(const dag_index& idx, std::uint64_t t) {
    auto le = [t](const std::vector<std::uint64_t>& v) {
        return static_cast<std::uint64_t>(std::upper_bound(v.begin(), v.end(), t) - v.begin());
    };
    state_counts c;
    const std::uint64_t started = le(idx.starts), ended = le(idx.ends);
    c.done = idx.end_nodes[ended];     // the nodes of the blocks that have ended
    c.running = started - ended;       // one node of each block running
    c.done += idx.folded_done_at(t);   // the nodes of running folded blocks whose share has passed
    c.suspended = le(idx.susp_from) - le(idx.susp_to);
    c.ready = le(idx.ready_from) - le(idx.ready_to);   // an interval that has ended has begun
    c.not_ready = idx.node_total - c.done - c.running - c.suspended - c.ready;
    return c;
}

critical_path critical_path_of(const tm::pipeline_dag& dag, const dag_index& idx, const analysis::span_result& path) {
    critical_path cp;
    cp.on_node.assign(dag.nodes.size(), 0);
    cp.on_edge.assign(dag.edges.size(), 0);
    cp.length = path.span;
    std::uint32_t prev = tm::no_index;
    for (const analysis::path_node& pn : path.critical_path) {
        const std::uint32_t v = pn.node;
        if (v >= dag.nodes.size()) break;   // a path of another DAG: mark nothing more
        cp.nodes.push_back(v);
        cp.on_node[v] = 1;
        if (prev != tm::no_index)
            for (std::uint32_t k = idx.in_first[v]; k < idx.in_first[v + 1]; ++k)
                if (dag.edges[idx.in_edges[k]].from == prev) {
                    cp.on_edge[idx.in_edges[k]] = 1;
                    break;
                }
        prev = v;
    }
    return cp;
}

// --- camera ----------------------------------------------------------------------------------

void dag_camera::zoom_at(double px, double py, double fx, double fy) {
    const double wx = col_at(px), wy = row_at(py);
    sx = std::clamp(sx * fx, min_scale, max_scale);
    sy = std::clamp(sy * fy, min_scale, max_scale);
    x0 = wx - px / sx;
    y0 = wy - py / sy;
}

void dag_camera::fit(double cols, double rows, double margin, double max_cell, double max_aspect) {
    cols = std::max(cols, 1.0);
    rows = std::max(rows, 1.0);
    sx = std::min(std::max(1.0, width - 2 * margin) / cols, max_cell);
    sy = std::min(std::max(1.0, height - 2 * margin) / rows, max_cell);
    sx = std::min(sx, sy * max_aspect);   // cells not much wider than tall
    sx = std::clamp(sx, min_scale, max_scale);
    sy = std::clamp(sy, min_scale, max_scale);
    x0 = cols / 2 - width / 2 / sx;   // centred across
    y0 = -margin / sy;                // hanging from the top
}

void dag_camera::centre_on(double col, double row) {
    x0 = col - width / 2 / sx;
    y0 = row - height / 2 / sy;
}

void dag_camera::clamp(double cols, double rows) {
    sx = std::clamp(sx, min_scale, max_scale);
    sy = std::clamp(sy, min_scale, max_scale);
    // At least 40 px of the grid stay in view in each direction.
    x0 = std::clamp(x0, -width / sx + 40 / sx, std::max(-width / sx + 40 / sx, cols - 40 / sx));
    y0 = std::clamp(y0, -height / sy + 40 / sy, std::max(-height / sy + 40 / sy, rows - 40 / sy));
}

std::uint32_t node_at_px(const dag_index& idx, const dag_camera& cam, double px, double py) {
    const double c = std::floor(cam.col_at(px)), r = std::floor(cam.row_at(py));
    if (c < 0 || r < 0 || c >= static_cast<double>(idx.columns()) || r >= static_cast<double>(idx.rows()))
        return tm::no_index;
    return idx.node_at_cell(static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(r));
}

// --- draw list -------------------------------------------------------------------------------

void dag_draw_list::clear() {
    boxes.clear();
    nulls.clear();
    edges.clear();
    cells.clear();
    lod = false;
    col0 = col1 = row0 = row1 = 0;
}

namespace {

std::uint32_t clamp_index(double v, std::size_t hi) {
    if (!(v > 0)) return 0;
    return v >= static_cast<double>(hi) ? static_cast<std::uint32_t>(hi) : static_cast<std::uint32_t>(v);
}

// Box extent along one axis: `s` px per cell; at least 1 px and at least 1 px of gap.
double box_size(double s, double frac) { return std::max(1.0, std::min(std::round(s * frac), std::floor(s) - 1)); }

// What the parts of one frame's draw list share: its inputs and the visible cells.
struct draw_frame {
    const tm::pipeline_dag& dag;
    const dag_index& idx;
    const dag_camera& cam;
    const dag_draw_params& p;
    std::uint32_t c0, c1, r0, r1;   // visible [c0, c1) x [r0, r1)
    bool crit;                      // the critical path is marked

    // The first node of column c that reaches row r or below (a folded block starting above r
    // but reaching into it included).
    std::uint32_t first_row_at_least(std::uint32_t c, std::uint32_t r) const {
        const auto& rows = idx.node_row;
        auto v = static_cast<std::uint32_t>(
            std::lower_bound(rows.begin() + idx.col_first[c], rows.begin() + idx.col_first[c + 1], r) - rows.begin());
        if (v > idx.col_first[c] && idx.node_last_row[v - 1] >= r) --v;
        return v;
    }
};

// --- zoomed out: groups of columns and rows as one cell ---

// The groups: gx columns by gy rows, so that a cell is at least min_box_px; the row groups in
// view; per row group the counts of each state, of the done/running nodes of each of the first 64
// workers and of the nodes in folded blocks (`stride` counters).
struct lod_grid {
    std::uint32_t gx, gy;
    std::uint32_t rg0, rg1, nrg;   // visible row groups [rg0, rg1), nrg of them
    int wk;                        // workers counted
    std::size_t stride;
    double bw, bh;   // box size when a group is one column / one row (0 otherwise: the cell fills the group)

    explicit lod_grid(const draw_frame& f) {
        const dag_camera& cam = f.cam;
        gx = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(f.p.min_box_px / cam.sx)));
        gy = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(f.p.min_box_px / cam.sy)));
        rg0 = f.r0 / gy;
        rg1 = (f.r1 + gy - 1) / gy;
        nrg = rg1 - rg0;
        wk = std::min(f.idx.workers, 64);
        stride = node_state_count + static_cast<std::size_t>(wk) + 1;   // states, workers, folded
        bw = gx == 1 ? box_size(cam.sx, f.p.box_frac) : 0;
        bh = gy == 1 ? box_size(cam.sy, f.p.box_frac) : 0;
    }
};

// Counts the nodes of columns [ca, cb) into `counts`, `stride` counters per row group: every
// column of a group up to 16, 16 evenly spread ones beyond (a zoomed-out frame stays cheap however
// many columns a group has).
void count_group(const draw_frame& f, const lod_grid& lg, std::uint32_t ca, std::uint32_t cb,
                 std::vector<std::uint32_t>& counts) {
    const auto& rows = f.idx.node_row;
    const auto& last_rows = f.idx.node_last_row;
    counts.assign(static_cast<std::size_t>(lg.nrg) * lg.stride, 0);
    const std::uint32_t span = cb - ca, samples = std::min<std::uint32_t>(span, 16);
    for (std::uint32_t s = 0; s < samples; ++s) {
        const std::uint32_t c = ca + static_cast<std::uint32_t>(static_cast<std::uint64_t>(s) * span / samples);
        for (std::uint32_t v = f.first_row_at_least(c, lg.rg0 * lg.gy);
             v < f.idx.col_first[c + 1] && rows[v] < lg.rg1 * lg.gy; ++v) {
            const bool folded = f.dag.nodes[v].folded();
            // A folded block: each of its nodes in the visible rows, by its share.
            const std::uint32_t ra = std::max(rows[v], lg.rg0 * lg.gy), rb = std::min(last_rows[v], lg.rg1 * lg.gy - 1);
            for (std::uint32_t rw = ra; rw <= rb; ++rw) {
                const node_state st = folded ? state_in_block(f.dag, f.idx, v, rw - rows[v], f.p.t, f.p.ready_mask)
                                             : state_at(f.dag, f.idx, v, f.p.t, f.p.ready_mask);
                std::uint32_t* cnt = &counts[static_cast<std::size_t>(rw / lg.gy - lg.rg0) * lg.stride];
                ++cnt[static_cast<int>(st)];
                const int w = f.dag.nodes[v].worker;
                if ((st == node_state::done || st == node_state::running) && w >= 0 && w < lg.wk)
                    ++cnt[node_state_count + w];
                cnt[lg.stride - 1] += folded;
            }
        }
    }
}

// The activity front stays visible: running, then suspended, then ready nodes win over the
// majority of done / not ready ones.
node_state cell_state(const std::uint32_t* cnt) {
    int best = cnt[static_cast<int>(node_state::done)] >= cnt[static_cast<int>(node_state::not_ready)]
                   ? static_cast<int>(node_state::done)
                   : static_cast<int>(node_state::not_ready);
    for (node_state s : {node_state::ready, node_state::suspended, node_state::running})
        if (cnt[static_cast<int>(s)] > 0) best = static_cast<int>(s);
    return static_cast<node_state>(best);
}

// The worker that ran most of a cell's done/running nodes (the lowest on a tie), or -1.
int cell_worker(const std::uint32_t* cnt, int wk) {
    int worker = -1;
    for (int w = 0; w < wk; ++w)
        if (cnt[node_state_count + w] > 0 && (worker < 0 || cnt[node_state_count + w] > cnt[node_state_count + worker]))
            worker = w;
    return worker;
}

// A group's extent in pixels along one axis, from cell a to cell b: a box centred in its cell when
// the group is one cell wide (`box` px), else the whole group (at least 1 px).
std::pair<double, double> group_extent(double px_a, double px_b, double cell_px, std::uint32_t group, double box) {
    if (group == 1) {
        const double a = std::round(px_a + (cell_px - box) / 2);
        return {a, a + box};
    }
    const double a = std::round(px_a);
    return {a, std::max(a + 1, std::round(px_b))};
}

// One cell per row group with nodes, of the column group [ca, cb) counted in `out.scratch`.
void add_group_cells(const draw_frame& f, const lod_grid& lg, std::uint32_t ca, std::uint32_t cb, dag_draw_list& out) {
    const dag_camera& cam = f.cam;
    const auto [x0, x1] = group_extent(cam.px_x(ca), cam.px_x(cb), cam.sx, lg.gx, lg.bw);
    for (std::uint32_t rg = 0; rg < lg.nrg; ++rg) {
        const std::uint32_t* cnt = &out.scratch[static_cast<std::size_t>(rg) * lg.stride];
        std::uint32_t total = 0;
        for (int k = 0; k < node_state_count; ++k) total += cnt[k];
        if (total == 0) continue;
        const std::uint32_t ra = (lg.rg0 + rg) * lg.gy,
                            rb = std::min<std::uint32_t>(static_cast<std::uint32_t>(f.idx.rows()), ra + lg.gy);
        const auto [y0, y1] = group_extent(cam.px_y(ra), cam.px_y(rb), cam.sy, lg.gy, lg.bh);
        out.cells.push_back({static_cast<float>(x0), static_cast<float>(y0), static_cast<float>(x1), static_cast<float>(y1),
                             cell_state(cnt), cell_worker(cnt, lg.wk), total, cnt[lg.stride - 1]});
    }
}

// Zoomed out: column group by column group, the counts (in the reused scratch) and the cells.
void add_lod_cells(const draw_frame& f, dag_draw_list& out) {
    const lod_grid lg(f);
    const std::uint32_t g0 = f.c0 / lg.gx, g1 = (f.c1 + lg.gx - 1) / lg.gx;
    const auto ncols = static_cast<std::uint32_t>(f.idx.columns());
    for (std::uint32_t g = g0; g < g1; ++g) {
        const std::uint32_t ca = g * lg.gx, cb = std::min<std::uint32_t>(ncols, ca + lg.gx);
        count_group(f, lg, ca, cb, out.scratch);
        add_group_cells(f, lg, ca, cb, out);
    }
}

// --- zoomed in: a box per node or folded block, null nodes, edges ---

// Where boxes go: bw x bh px, centred in their cells, snapped to whole pixels.
struct box_geometry {
    const dag_camera& cam;
    double bw, bh;   // box size
    double ox, oy;   // the box's offset in its cell

    explicit box_geometry(const draw_frame& f)
        : cam(f.cam),
          bw(box_size(f.cam.sx, f.p.box_frac)),
          bh(box_size(f.cam.sy, f.p.box_frac)),
          ox((f.cam.sx - bw) / 2),
          oy((f.cam.sy - bh) / 2) {}
    double x(std::uint32_t c) const { return std::round(cam.px_x(c) + ox); }
    double y(std::uint32_t r) const { return std::round(cam.px_y(r) + oy); }
};

// The box of node v in column c: over all the rows of a folded block, split where its nodes done
// at t end and where the next one's share ends.
dag_box node_box(const draw_frame& f, const box_geometry& bg, std::uint32_t c, std::uint32_t v) {
    const auto& rows = f.idx.node_row;
    const float x0 = static_cast<float>(bg.x(c));
    const float y0 = static_cast<float>(bg.y(rows[v]));
    const float y1 = static_cast<float>(bg.y(f.idx.node_last_row[v]) + bg.bh);
    dag_box b{x0,
              y0,
              x0 + static_cast<float>(bg.bw),
              y1,
              v,
              state_at(f.dag, f.idx, v, f.p.t, f.p.ready_mask),
              f.crit && f.p.critical->on_node[v]};
    const tm::dag_node& nd = f.dag.nodes[v];
    if (nd.folded()) {
        // Node k's part of the box starts at its row's top (the last one ends with the box).
        auto y_of = [&](std::uint32_t k) { return std::min(y1, static_cast<float>(bg.y(rows[v] + k))); };
        const std::uint32_t done = nodes_done_at(nd, f.p.t);
        b.folded = true;
        b.split0 = y_of(done);
        b.split1 = done < nd.nodes ? y_of(done + 1) : y1;
    }
    return b;
}

// Column c's boxes in the visible rows, and its null nodes: rows an iteration skipped between two
// of its nodes.
void add_column_boxes(const draw_frame& f, const box_geometry& bg, std::uint32_t c, dag_draw_list& out) {
    const auto& rows = f.idx.node_row;
    const std::uint32_t vb = f.idx.col_first[c], ve = f.idx.col_first[c + 1];
    const std::uint32_t first = f.first_row_at_least(c, f.r0);
    for (std::uint32_t v = first; v < ve && rows[v] < f.r1; ++v) out.boxes.push_back(node_box(f, bg, c, v));
    for (std::uint32_t v = first > vb ? first - 1 : vb; v + 1 < ve && rows[v] < f.r1; ++v) {
        const std::uint32_t ra = std::max(f.idx.node_last_row[v] + 1, f.r0), rb = std::min(rows[v + 1], f.r1);
        for (std::uint32_t r = ra; r < rb; ++r)
            out.nulls.push_back({static_cast<float>(f.cam.px_x(c + 0.5)), static_cast<float>(f.cam.px_y(r + 0.5))});
    }
}

// The rows an edge joins: a stage or throttle edge leaves a block's last row and enters the next
// one's first; a cross edge enters a block at its last row (the stage of i-1 it waits for) from
// the row of the source holding that stage; a retire edge joins last rows.
std::pair<std::uint32_t, std::uint32_t> edge_rows(const dag_index& idx, const tm::dag_edge& e) {
    const auto& rows = idx.node_row;
    const auto& last_rows = idx.node_last_row;
    const std::uint32_t u = e.from, v = e.to;
    if (e.kind == tm::dag_edge_kind::cross) return {std::max(rows[u], std::min(last_rows[u], last_rows[v])), last_rows[v]};
    if (e.kind == tm::dag_edge_kind::retire) return {last_rows[u], last_rows[v]};
    return {last_rows[u], rows[v]};
}

// The edges into node v of column c that are shown (only its throttle edges: `only_throttle`)
// and reach the visible area.
void add_edges_into(const draw_frame& f, const box_geometry& bg, std::uint32_t v, std::uint32_t c, bool only_throttle,
                    dag_draw_list& out) {
    const double bw = bg.bw, bh = bg.bh;
    for (std::uint32_t k = f.idx.in_first[v]; k < f.idx.in_first[v + 1]; ++k) {
        const std::uint32_t ei = f.idx.in_edges[k];
        const tm::dag_edge& e = f.dag.edges[ei];
        if (!(f.p.edges_shown & edge_bit(e.kind))) continue;
        if (only_throttle && e.kind != tm::dag_edge_kind::throttle) continue;
        const std::uint32_t cu = f.idx.node_col[e.from];
        if (cu >= f.c1 && c >= f.c1) continue;
        const auto [ru, rv] = edge_rows(f.idx, e);
        if ((ru < f.r0 && rv < f.r0) || (ru >= f.r1 && rv >= f.r1)) continue;
        const double ux = bg.x(cu), uy = bg.y(ru), vx = bg.x(c), vy = bg.y(rv);
        double ax, ay, bx, by;
        switch (e.kind) {
            case tm::dag_edge_kind::stage: ax = ux + bw / 2, ay = uy + bh, bx = vx + bw / 2, by = vy; break;
            case tm::dag_edge_kind::throttle: ax = ux + bw, ay = uy + bh, bx = vx, by = vy; break;
            default: ax = ux + bw, ay = uy + bh / 2, bx = vx, by = vy + bh / 2; break;   // cross, retire
        }
        out.edges.push_back({static_cast<float>(ax), static_cast<float>(ay), static_cast<float>(bx), static_cast<float>(by),
                             e.kind, f.crit && f.p.critical->on_edge[ei]});
    }
}

// Edges into the visible columns, and throttle edges from them into columns to the right (up to
// the most columns an edge spans).
void add_edges(const draw_frame& f, const box_geometry& bg, dag_draw_list& out) {
    const std::uint32_t cend =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(f.idx.columns(), std::uint64_t{f.c1} + f.idx.edge_span));
    for (std::uint32_t c = f.c0; c < cend; ++c) {
        const std::uint32_t vb = f.idx.col_first[c], ve = f.idx.col_first[c + 1];
        if (c > f.c1) {   // beyond the column right of the view only throttle edges (into first nodes) reach in
            add_edges_into(f, bg, vb, c, true, out);
            continue;
        }
        const std::uint32_t first = f.first_row_at_least(c, f.r0);
        if (first > vb)
            add_edges_into(f, bg, vb, c, false, out);   // the first node's throttle edge, even when scrolled down
        for (std::uint32_t v = first; v < ve; ++v) add_edges_into(f, bg, v, c, false, out);
    }
}

}   // namespace

void build_dag_draw_list(const tm::pipeline_dag& dag, const dag_index& idx, const dag_camera& cam, const dag_draw_params& p,
                         dag_draw_list& out) {
    out.clear();
    const std::size_t ncols = idx.columns(), nrows = idx.rows();
    if (dag.nodes.empty() || ncols == 0 || nrows == 0) return;
    const draw_frame f{dag,
                       idx,
                       cam,
                       p,
                       clamp_index(std::floor(cam.col_at(0)), ncols),
                       clamp_index(std::ceil(cam.col_at(cam.width)), ncols),
                       clamp_index(std::floor(cam.row_at(0)), nrows),
                       clamp_index(std::ceil(cam.row_at(cam.height)), nrows),
                       p.critical && p.critical->on_node.size() == dag.nodes.size()};
    out.col0 = f.c0;
    out.col1 = f.c1;
    out.row0 = f.r0;
    out.row1 = f.r1;
    if (f.c0 >= f.c1 || f.r0 >= f.r1) return;
    out.lod = cam.sx < p.min_box_px || cam.sy < p.min_box_px;
    if (out.lod) {
        add_lod_cells(f, out);
        return;
    }
    const box_geometry bg(f);
    for (std::uint32_t c = f.c0; c < f.c1; ++c) add_column_boxes(f, bg, c, out);
    if (std::min(cam.sx, cam.sy) < p.min_edge_px || !p.edges_shown) return;
    add_edges(f, bg, out);
}

}   // namespace pipescope::viewer
