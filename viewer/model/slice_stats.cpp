#include "slice_stats.hpp"

#include "lod.hpp"
#include "stage_graph.hpp"
#include "view_state.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <unordered_map>

namespace pipescope::viewer {

namespace an = pipescope::analysis;

namespace {

// Durations grouped by a key (a string id by name, a stage number by stage), in first-seen order.
class grouper {
public:
    explicit grouper(const loaded_file& f, stats_group g) : f_(f), g_(g) {
        if (g == stats_group::name) by_name_.assign(f.model.strings.size(), tm::no_index);
    }

    // A slice overlapping the range (r == nullptr: no range), with its nodes by stage.
    void add(const tm::slice& s, const std::pair<std::uint64_t, std::uint64_t>* r) {
        if (g_ == stats_group::name) {
            if (!r || overlaps(s.begin, s.end, *r)) group_of_name(s.name).push_back(s.duration());
            return;
        }
        if (s.kind != an::slice_kind::node) return;
        const an::node_extent x = f_.model.node_of(s);
        if (x.stage < 0) return;
        if (!x.folded()) {
            if (!r || overlaps(s.begin, s.end, *r))
                group_of_stage(static_cast<std::uint64_t>(x.stage)).push_back(s.duration());
            return;
        }
        constexpr std::uint64_t max_nodes_per_slice = 1u << 20;   // as the area selection: more is damage
        const std::uint64_t d = s.duration(), n = std::min(x.nodes, max_nodes_per_slice);
        for (std::uint64_t j = 0; j < n; ++j) {
            const std::uint64_t b = s.begin + an::node_share(d, j, x.nodes), e = s.begin + an::node_share(d, j + 1, x.nodes);
            if (!r || overlaps(b, e, *r)) group_of_stage(stage_of_node(x, j)).push_back(e - b);
        }
    }

    // The rows in key order (names in byte order, stages by number).
    stats_table finish() {
        std::vector<std::uint32_t> order(keys_.size());
        for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](auto x, auto y) {
            return g_ == stats_group::name ? f_.model.str(static_cast<tm::string_id>(keys_[x])) <
                                                 f_.model.str(static_cast<tm::string_id>(keys_[y]))
                                           : keys_[x] < keys_[y];
        });
        stats_table t;
        for (std::uint32_t i : order) {
            stats_row row;
            if (g_ == stats_group::name) row.name = f_.model.str(static_cast<tm::string_id>(keys_[i]));
            else describe_stage(row, keys_[i]);
            summarize_into(row, durations_[i]);
            t.slices += row.count;
            t.rows.push_back(std::move(row));
            t.durations.push_back(std::move(durations_[i]));
        }
        return t;
    }

    std::span<const tm::stage_info> stages;   // the run metadata's program.stages (names the stage rows)

private:
    const loaded_file& f_;
    stats_group g_;

    void describe_stage(stats_row& row, std::uint64_t j) const {
        row.stage = j;
        row.name = "stage " + std::to_string(j);
        row.what = stage_name_of_number(stages, j);
    }
    std::vector<std::uint32_t> by_name_;   // string id -> group
    std::unordered_map<std::uint64_t, std::uint32_t> by_stage_;
    std::vector<std::uint64_t> keys_;
    std::vector<std::vector<std::uint64_t>> durations_;

    static bool overlaps(std::uint64_t b, std::uint64_t e, const std::pair<std::uint64_t, std::uint64_t>& r) {
        return b < r.second && (e > r.first || (b == e && b >= r.first));
    }
    std::vector<std::uint64_t>& new_group(std::uint64_t key) {
        keys_.push_back(key);
        return durations_.emplace_back();
    }
    std::vector<std::uint64_t>& group_of_name(tm::string_id id) {
        if (by_name_[id] == tm::no_index) {
            by_name_[id] = static_cast<std::uint32_t>(keys_.size());
            return new_group(id);
        }
        return durations_[by_name_[id]];
    }
    std::vector<std::uint64_t>& group_of_stage(std::uint64_t stage) {
        const auto [it, added] = by_stage_.try_emplace(stage, static_cast<std::uint32_t>(keys_.size()));
        return added ? new_group(stage) : durations_[it->second];
    }

    // count, total, min, max, mean; the median and p95 by nearest rank (analysis::summarize's
    // definition) with two nth_element calls instead of a sort.
    static void summarize_into(stats_row& row, std::vector<std::uint64_t>& d) {
        row.count = d.size();
        if (d.empty()) return;
        row.min = ~std::uint64_t{0};
        for (std::uint64_t v : d) row.total += v, row.min = std::min(row.min, v), row.max = std::max(row.max, v);
        row.mean = static_cast<double>(row.total) / static_cast<double>(d.size());
        auto rank = [&](double q) {
            const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(d.size())));
            return std::clamp<std::size_t>(k, 1, d.size()) - 1;
        };
        const std::size_t k95 = rank(0.95), k50 = rank(0.50);
        std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k95), d.end());
        row.p95 = d[k95];
        std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k50),
                         d.begin() + static_cast<std::ptrdiff_t>(k95));
        row.median = k50 == k95 ? row.p95 : d[k50];
    }
};

// The tracks of a run that may hold slices.
std::vector<std::uint32_t> slice_tracks(const run_ref& r) {
    std::vector<std::uint32_t> v(r.workers);
    v.insert(v.end(), r.lines.begin(), r.lines.end());
    v.insert(v.end(), r.others.begin(), r.others.end());
    return v;
}

}   // namespace

const char* to_string(stats_group g) { return g == stats_group::name ? "name" : "stage"; }
const char* to_string(stats_scope s) { return s == stats_scope::run ? "run" : "area"; }

stats_table compute_slice_stats(const document& d, std::uint32_t run, stats_group g, const area_selection* area,
                                bool aligned) {
    if (run >= d.runs.size()) return {};
    const run_ref& rr = d.runs[run];
    const loaded_file& f = *d.files[rr.file];
    grouper groups(f, g);
    if (rr.run != tm::no_index) groups.stages = f.model.runs[rr.run].stages;
    for (std::uint32_t ti : slice_tracks(rr)) {
        if (ti >= f.model.tracks.size()) continue;
        const tm::track& t = f.model.tracks[ti];
        if (!area) {
            for (const tm::slice& s : t.slices) groups.add(s, nullptr);
            continue;
        }
        if (!std::binary_search(area->tracks.begin(), area->tracks.end(), track_ref{rr.file, ti})) continue;
        const double off = display_offset_of(d, rr.file, ti, aligned);
        auto abs_ns = [&](double v) { return static_cast<std::uint64_t>(std::clamp(v + off, 0.0, 1.8e19)); };
        const std::pair<std::uint64_t, std::uint64_t> r{abs_ns(area->t0), std::max(abs_ns(area->t0), abs_ns(area->t1))};
        for (std::uint16_t depth = 0; depth <= t.max_depth && !t.slices.empty(); ++depth) {
            const row_view row = f.row(ti, depth);
            for (std::size_t k = first_ending_at_or_after(row, static_cast<double>(r.first));
                 k < row.size && row[k].begin < r.second; ++k)
                groups.add(row[k], &r);
        }
    }
    return groups.finish();
}

bool slice_in_row(const loaded_file& f, const tm::slice& s, stats_group g, const stats_row& row) {
    if (g == stats_group::name) return f.model.str(s.name) == row.name;
    if (s.kind != an::slice_kind::node) return false;
    const an::node_extent x = f.model.node_of(s);
    return x.stage >= 0 && static_cast<std::uint64_t>(x.stage) <= row.stage && row.stage <= x.last_stage;
}

std::optional<tm::event_ref> longest_slice(const document& d, std::uint32_t run, stats_group g, const stats_row& row) {
    if (run >= d.runs.size()) return std::nullopt;
    const run_ref& rr = d.runs[run];
    const loaded_file& f = *d.files[rr.file];
    std::optional<tm::event_ref> best;
    std::uint64_t best_d = 0;
    for (std::uint32_t ti : slice_tracks(rr)) {
        if (ti >= f.model.tracks.size()) continue;
        const auto& v = f.model.tracks[ti].slices;
        for (std::uint32_t k = 0; k < v.size(); ++k)
            if ((!best || v[k].duration() > best_d) && slice_in_row(f, v[k], g, row))
                best = tm::event_ref{ti, k, false}, best_d = v[k].duration();
    }
    return best;
}

const char* to_string(stats_measure m) {
    switch (m) {
        case stats_measure::count: return "count";
        case stats_measure::total: return "total";
        case stats_measure::mean: return "mean";
        case stats_measure::median: return "median";
        case stats_measure::p95: return "p95";
        case stats_measure::max: return "max";
        case stats_measure::min: return "min";
    }
    return "?";
}

double measure_of(const stats_row& r, stats_measure m) {
    switch (m) {
        case stats_measure::count: return static_cast<double>(r.count);
        case stats_measure::total: return static_cast<double>(r.total);
        case stats_measure::mean: return r.mean;
        case stats_measure::median: return static_cast<double>(r.median);
        case stats_measure::p95: return static_cast<double>(r.p95);
        case stats_measure::max: return static_cast<double>(r.max);
        case stats_measure::min: return static_cast<double>(r.min);
    }
    return 0;
}

std::optional<double> stats_ratio(const stats_pair& p, stats_measure m) {
    if (!p.a || !p.b || measure_of(*p.a, m) <= 0) return std::nullopt;
    return measure_of(*p.b, m) / measure_of(*p.a, m);
}

namespace {

// Orders two pairs by the sort: a missing value after every present one (in both directions), then by
// name (stage number) ascending.
struct pair_order {
    stats_sort s;
    bool by_key(const stats_pair& x, const stats_pair& y) const {
        return x.stage != y.stage ? x.stage < y.stage : x.name < y.name;
    }
    std::optional<double> value(const stats_pair& p) const {
        if (s.side == stats_side::ratio) return stats_ratio(p, s.measure);
        const stats_row* r = s.side == stats_side::a ? p.a : p.b;
        return r ? std::optional(measure_of(*r, s.measure)) : std::nullopt;
    }
    bool operator()(const stats_pair& x, const stats_pair& y) const {
        if (s.by_name) return s.descending ? by_key(y, x) : by_key(x, y);
        const auto vx = value(x), vy = value(y);
        if (vx.has_value() != vy.has_value()) return vx.has_value();
        if (vx && *vx != *vy) return s.descending ? *vx > *vy : *vx < *vy;
        return by_key(x, y);
    }
};

}   // namespace

std::vector<stats_pair> join_and_sort(const stats_table& a, const stats_table* b, const stats_sort& s) {
    std::vector<stats_pair> out;
    out.reserve(a.rows.size());
    for (std::uint32_t i = 0; i < a.rows.size(); ++i)
        out.push_back({a.rows[i].name, a.rows[i].stage, &a.rows[i], nullptr, i});
    if (b) {
        // Both tables are in key order: merge.
        const pair_order key{};
        std::size_t i = 0;
        const std::size_t n = out.size();
        for (const stats_row& r : b->rows) {
            const stats_pair probe{r.name, r.stage};
            while (i < n && key.by_key(out[i], probe)) ++i;
            if (i < n && !key.by_key(probe, out[i])) out[i].b = &r;
            else out.push_back({r.name, r.stage, nullptr, &r});
        }
    }
    std::stable_sort(out.begin(), out.end(), pair_order{s});
    return out;
}

double stats_histogram::edge(std::size_t k) const {
    if (bins.empty()) return lo;
    return lo * std::pow(hi / lo, static_cast<double>(k) / static_cast<double>(bins.size()));
}

std::size_t stats_histogram::bin_of(double ns) const {
    if (bins.empty()) return 0;
    const double v = std::max(ns, 1.0);
    const double f = hi > lo ? std::log(v / lo) / std::log(hi / lo) : 0;
    const auto k = static_cast<long long>(std::floor(f * static_cast<double>(bins.size())));
    return static_cast<std::size_t>(std::clamp<long long>(k, 0, static_cast<long long>(bins.size()) - 1));
}

stats_histogram make_histogram(const std::vector<std::uint64_t>& durations, std::size_t bins,
                               const std::vector<std::uint64_t>* also) {
    stats_histogram h;
    if ((durations.empty() && (!also || also->empty())) || bins == 0) return h;
    double lo = 1e300, hi = 0;
    for (const auto* v : {&durations, also})
        if (v && !v->empty()) {
            const auto [mn, mx] = std::minmax_element(v->begin(), v->end());
            lo = std::min(lo, static_cast<double>(*mn)), hi = std::max(hi, static_cast<double>(*mx));
        }
    h.lo = std::max(1.0, lo);
    h.hi = std::max(h.lo * 1.0001, hi * 1.0001);   // the largest inside the last bin
    h.bins.assign(bins, 0);
    for (std::uint64_t v : durations) ++h.bins[h.bin_of(static_cast<double>(v))];
    h.peak = *std::max_element(h.bins.begin(), h.bins.end());
    return h;
}

stats_histogram histogram_on_edges(const stats_histogram& edges, const std::vector<std::uint64_t>& durations) {
    stats_histogram h = edges;
    std::fill(h.bins.begin(), h.bins.end(), 0);
    for (std::uint64_t v : durations) ++h.bins[h.bin_of(static_cast<double>(v))];
    h.peak = h.bins.empty() ? 0 : *std::max_element(h.bins.begin(), h.bins.end());
    return h;
}

range_count count_in_range(const std::vector<std::uint64_t>& durations, double lo, double hi) {
    range_count c;
    for (std::uint64_t v : durations)
        if (static_cast<double>(v) >= lo && static_cast<double>(v) <= hi) ++c.count, c.total += v;
    return c;
}

// --- the cache ---------------------------------------------------------------------------------

bool slice_stats_cache::inputs_match(const document& d, const std::optional<area_selection>& area, bool aligned) const {
    if (!computed_) return false;
    const inputs& c = *computed_;
    const bool area_same = scope == stats_scope::run ? !c.area : (c.area == area);
    return area_same && c.group == group && c.scope == scope && c.run_a == run_a && c.run_b == run_b &&
           c.aligned == aligned && c.doc.matches(d);
}

bool slice_stats_cache::update(const document& d, const std::optional<area_selection>& area, bool aligned) {
    if (run_a >= d.runs.size()) run_a = 0;
    if (run_b && *run_b >= d.runs.size()) run_b.reset();
    bool changed = false;
    if (!inputs_match(d, area, aligned)) {
        const area_selection* in = scope == stats_scope::area ? (area ? &*area : nullptr) : nullptr;
        const bool empty_area = scope == stats_scope::area && !area;   // nothing to count in
        a = empty_area ? stats_table{} : compute_slice_stats(d, run_a, group, in, aligned);
        b = run_b && !empty_area ? compute_slice_stats(d, *run_b, group, in, aligned) : stats_table{};
        computed_ = inputs{
            document_key::of(d), group, scope, run_a, run_b, scope == stats_scope::area ? area : std::nullopt, aligned};
        ++computations;
        changed = true;
    }
    if (changed || !(sorted_by_ == sort)) {
        rows = join_and_sort(a, run_b ? &b : nullptr, sort);
        sorted_by_ = sort;
    }
    if (selected.empty() && !rows.empty() && rows.front().a)
        selected = rows.front().name;   // as Tracy's Find Zone: one shown
    if (changed || hist_of_ != selected) {
        const auto* dur = selected_durations();
        const auto* dur_b = selected_durations_b();
        hist = dur ? make_histogram(*dur, 64, dur_b) : stats_histogram{};
        hist_b = dur && dur_b ? histogram_on_edges(hist, *dur_b) : stats_histogram{};
        hist_of_ = selected;
        changed = true;
    }
    if (changed || range_of_ != hist_range) {
        const auto* dur = selected_durations();
        in_range = dur && hist_range ? count_in_range(*dur, hist_range->first, hist_range->second) : range_count{};
        const auto* dur_b = selected_durations_b();
        in_range_b = dur_b && hist_range ? count_in_range(*dur_b, hist_range->first, hist_range->second) : range_count{};
        range_of_ = hist_range;
    }
    return changed;
}

const stats_row* slice_stats_cache::selected_row() const {
    if (selected.empty()) return nullptr;
    for (const stats_row& r : a.rows)
        if (r.name == selected) return &r;
    return nullptr;
}

const std::vector<std::uint64_t>* slice_stats_cache::selected_durations() const {
    const stats_row* r = selected_row();
    return r ? &a.durations[static_cast<std::size_t>(r - a.rows.data())] : nullptr;
}

const std::vector<std::uint64_t>* slice_stats_cache::selected_durations_b() const {
    if (!run_b || selected.empty()) return nullptr;
    for (std::size_t i = 0; i < b.rows.size(); ++i)
        if (b.rows[i].name == selected) return &b.durations[i];
    return nullptr;
}

}   // namespace pipescope::viewer
