#include "area_selection.hpp"

#include "lod.hpp"
#include "view_state.hpp"

#include <algorithm>
#include <map>

namespace pipescope::viewer {

namespace an = pipescope::analysis;

namespace {

using time_range = std::pair<std::uint64_t, std::uint64_t>;   // [first, second), absolute ns

// The innermost slice at each moment of [r.first, r.second) on track t, by kind, into `ns`.
void add_state_time(const loaded_file& f, std::uint32_t ti, time_range r, std::array<std::uint64_t, area_state_count>& ns) {
    const tm::track& t = f.model.tracks[ti];
    struct open_slice {
        std::uint64_t end;
        int state;
    };
    std::vector<open_slice> stack;
    // The slices open at the range's start, outermost first: one per depth, found in its row.
    for (std::uint16_t depth = 0; depth <= t.max_depth; ++depth) {
        const row_view row = f.row(ti, depth);
        std::size_t k = first_ending_at_or_after(row, static_cast<double>(r.first));
        while (k < row.size && row[k].end <= r.first) ++k;
        if (k == row.size || row[k].begin >= r.first) break;
        stack.push_back({row[k].end, static_cast<int>(row[k].kind)});
    }
    std::uint64_t cursor = r.first;
    auto advance_to = [&](std::uint64_t to) {
        while (!stack.empty() && stack.back().end <= to) {
            if (stack.back().end > cursor) ns[stack.back().state] += stack.back().end - cursor, cursor = stack.back().end;
            stack.pop_back();
        }
        if (to > cursor) ns[stack.empty() ? area_between_slices : stack.back().state] += to - cursor, cursor = to;
    };
    auto it = std::lower_bound(t.slices.begin(), t.slices.end(), r.first,
                               [](const tm::slice& s, std::uint64_t v) { return s.begin < v; });
    for (; it != t.slices.end() && it->begin < r.second; ++it) {
        advance_to(it->begin);
        const std::uint64_t end = stack.empty() ? it->end : std::min(it->end, stack.back().end);   // nested in its parent
        stack.push_back({end, static_cast<int>(it->kind)});
    }
    advance_to(r.second);
}

}   // namespace

// Which stage node k of a node slice's n nodes is: one per stage for a pipeline block, all of
// one stage for a graph's run of instances, else spread over the stages in order (node_extent).
std::uint64_t stage_of_node(const an::node_extent& x, std::uint64_t k) {
    const auto first = static_cast<std::uint64_t>(x.stage);
    const std::uint64_t stages = x.last_stage - first + 1;
    const std::uint64_t per = x.nodes / stages, extra = x.nodes % stages;   // the first `extra` stages hold per + 1
    if (k < extra * (per + 1)) return first + k / (per + 1);
    return first + extra + (per ? (k - extra * (per + 1)) / per : 0);
}

namespace {

struct stage_acc {
    std::uint64_t ns = 0;
    std::vector<std::uint64_t> durations, inside;   // per node: whole, and inside the range
};

// The nodes of track t overlapping r: their time inside r by stage, and their durations.
void add_nodes(const loaded_file& f, std::uint32_t ti, time_range r, std::map<std::uint64_t, stage_acc>& by_stage) {
    // Nodes of one slice looked at, at most: a folded slice claiming billions of nodes is damage.
    constexpr std::uint64_t max_nodes_per_slice = 1u << 20;
    const tm::track& t = f.model.tracks[ti];
    auto overlaps = [&](std::uint64_t b, std::uint64_t e) {
        return b < r.second && (e > r.first || (b == e && b >= r.first));
    };
    auto clipped = [&](std::uint64_t b, std::uint64_t e) {
        return std::min(e, r.second) - std::min(std::max(b, r.first), std::min(e, r.second));
    };
    for (std::uint16_t depth = 0; depth <= t.max_depth && !t.slices.empty(); ++depth) {
        const row_view row = f.row(ti, depth);
        for (std::size_t k = first_ending_at_or_after(row, static_cast<double>(r.first));
             k < row.size && row[k].begin < r.second; ++k) {
            const tm::slice& s = row[k];
            if (s.kind != an::slice_kind::node || !overlaps(s.begin, s.end)) continue;
            const an::node_extent x = f.model.node_of(s);
            if (x.stage < 0) continue;
            const std::uint64_t d = s.duration(), n = std::min(x.nodes, max_nodes_per_slice);
            for (std::uint64_t j = 0; j < n; ++j) {
                const std::uint64_t b = s.begin + an::node_share(d, j, x.nodes),
                                    e = s.begin + an::node_share(d, j + 1, x.nodes);
                if (!overlaps(b, e)) continue;
                stage_acc& acc = by_stage[stage_of_node(x, j)];
                acc.ns += clipped(b, e);
                acc.durations.push_back(e - b);
                acc.inside.push_back(clipped(b, e));
            }
        }
    }
}

// Steals, suspensions, wake-ups and events lost on track t inside r.
void add_instants(const loaded_file& f, std::uint32_t ti, time_range r, area_stats& out) {
    const auto& v = f.model.tracks[ti].instants;
    auto it = std::lower_bound(v.begin(), v.end(), r.first, [](const tm::instant& a, std::uint64_t t) { return a.ts < t; });
    for (; it != v.end() && it->ts < r.second; ++it) {
        switch (f.instant_of_string[it->name]) {
            case instant_kind::steal: ++out.steals; break;
            case instant_kind::suspend: ++out.suspensions; break;
            case instant_kind::wake: ++out.wakeups; break;
            case instant_kind::events_lost:
                out.events_lost += f.model.uint_arg(*it, vocab::arg_key::dropped).value_or(1);
                break;
            default: break;
        }
    }
}

// [t0, t1) of the display axis on a track with display offset `off`, as absolute ns (clamped at 0).
time_range absolute_range(const area_selection& a, double off) {
    auto abs_ns = [&](double t) { return static_cast<std::uint64_t>(std::clamp(t + off, 0.0, 1.8e19)); };
    return {abs_ns(a.t0), std::max(abs_ns(a.t0), abs_ns(a.t1))};
}

}   // namespace

const char* area_state_name(int state) {
    switch (state) {
        case static_cast<int>(an::slice_kind::node): return "nodes";
        case static_cast<int>(an::slice_kind::task): return "tasks";
        case static_cast<int>(an::slice_kind::idle): return "idle";
        case static_cast<int>(an::slice_kind::parked): return "parked";
        case static_cast<int>(an::slice_kind::blocked): return "blocked";
        case static_cast<int>(an::slice_kind::queue): return "queue operations";
        case static_cast<int>(an::slice_kind::running): return "line: running";
        case static_cast<int>(an::slice_kind::waiting): return "waiting";
        case static_cast<int>(an::slice_kind::throttled): return "throttled";
        case static_cast<int>(an::slice_kind::other): return "other slices";
        case area_between_slices: return "between slices";
        default: return "?";
    }
}

area_stats compute_area_stats(const document& d, const area_selection& a, bool aligned) {
    area_stats out;
    out.length = a.length();
    std::map<std::uint64_t, stage_acc> by_stage;
    for (const track_ref& tr : a.tracks) {
        if (tr.file >= d.files.size() || tr.track >= d.files[tr.file]->model.tracks.size()) continue;
        const loaded_file& f = *d.files[tr.file];
        const time_range r = absolute_range(a, display_offset_of(d, tr.file, tr.track, aligned));
        if (!f.model.tracks[tr.track].slices.empty()) {
            ++out.tracks_with_slices;
            add_state_time(f, tr.track, r, out.state_ns);
            add_nodes(f, tr.track, r, by_stage);
        }
        add_instants(f, tr.track, r, out);
    }
    std::vector<std::uint64_t> all;
    for (auto& [stage, acc] : by_stage) {
        all.insert(all.end(), acc.durations.begin(), acc.durations.end());
        out.stages.push_back({stage, acc.ns, an::summarize(std::move(acc.durations)), an::summarize(std::move(acc.inside))});
    }
    out.nodes = an::summarize(std::move(all));
    return out;
}

const char* area_stage_column_name(area_stage_column c) {
    switch (c) {
        case area_stage_column::stage: return "stage";
        case area_stage_column::time_in_area: return "in area";
        case area_stage_column::nodes: return "nodes";
        case area_stage_column::mean_in_area: return "mean";
        case area_stage_column::p95_in_area: return "p95";
    }
    return "?";
}

const char* area_stage_column_tip(area_stage_column c) {
    switch (c) {
        case area_stage_column::stage: return "the stage (its colour in the timeline)";
        case area_stage_column::time_in_area: return "node time inside the area (a node cut by its edge: the part inside)";
        case area_stage_column::nodes: return "nodes overlapping the area";
        case area_stage_column::mean_in_area: return "the mean of those nodes' time inside the area";
        case area_stage_column::p95_in_area: return "the 95th percentile of those nodes' time inside the area";
    }
    return "";
}

std::vector<std::uint32_t> sorted_stage_rows(const std::vector<area_stage>& stages, area_stage_sort sort) {
    auto key = [&](const area_stage& s) -> double {
        switch (sort.column) {
            case area_stage_column::stage: return static_cast<double>(s.stage);
            case area_stage_column::time_in_area: return static_cast<double>(s.ns);
            case area_stage_column::nodes: return static_cast<double>(s.nodes.count);
            case area_stage_column::mean_in_area: return s.inside.mean;
            case area_stage_column::p95_in_area: return static_cast<double>(s.inside.p95);
        }
        return 0;
    };
    std::vector<std::uint32_t> rows(stages.size());
    for (std::uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::sort(rows.begin(), rows.end(), [&](std::uint32_t a, std::uint32_t b) {
        const double ka = key(stages[a]), kb = key(stages[b]);
        if (ka != kb) return sort.descending ? ka > kb : ka < kb;
        return stages[a].stage < stages[b].stage;
    });
    return rows;
}

}   // namespace pipescope::viewer
