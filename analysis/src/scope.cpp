// Run scopes and slice-name classification (scope.hpp).
#include <pipescope/analysis/scope.hpp>

#include <algorithm>

namespace pipescope::analysis {

void time_span(const tm::trace_model& m, const std::vector<std::uint32_t>& tracks, std::uint64_t& start,
               std::uint64_t& end) {
    std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
    for (auto ti : tracks) {
        const tm::track& t = m.tracks[ti];
        if (!t.slices.empty()) {
            lo = std::min(lo, t.slices.front().begin);
            for (const auto& s : t.slices) hi = std::max(hi, s.end);
        }
        if (!t.instants.empty()) lo = std::min(lo, t.instants.front().ts), hi = std::max(hi, t.instants.back().ts);
        if (!t.counters.empty()) lo = std::min(lo, t.counters.front().ts), hi = std::max(hi, t.counters.back().ts);
    }
    if (lo > hi) lo = hi = 0;
    start = lo;
    end = hi;
}

namespace {

bool has_events(const tm::track& t) { return !t.slices.empty() || !t.instants.empty() || !t.counters.empty(); }

// A track that is not a worker's into the scope's lines, counters or others: the writer's layout
// puts "line k" and "control" under the "lines" group, counters on the process track.
void add_track(const tm::trace_model& m, run_scope& s, std::uint32_t ti) {
    const tm::track& t = m.tracks[ti];
    if (t.worker >= 0 || t.kind == tm::track_kind::line) return;   // already in workers / lines, in order
    if (t.parent != tm::no_index && m.tracks[t.parent].name == vocab::lines_group) s.lines.push_back(ti);
    else if (t.kind == tm::track_kind::counter || !t.counters.empty()) s.counters.push_back(ti);
    else if (t.kind != tm::track_kind::process && has_events(t)) s.others.push_back(ti);
}

}   // namespace

run_scope scope_of(const tm::trace_model& m, std::uint32_t ri) {
    const tm::run& r = m.runs.at(ri);
    run_scope s;
    s.model = &m;
    s.run = ri;
    s.title = r.name.empty() ? m.tracks[r.track].name : r.name;
    for (auto w : r.workers)
        if (w != tm::no_index) s.workers.push_back(w);
    for (auto l : r.lines)
        if (l != tm::no_index) s.lines.push_back(l);
    for (auto ti : r.tracks) add_track(m, s, ti);
    time_span(m, r.tracks, s.start, s.end);
    return s;
}

std::vector<run_scope> scopes_of(const tm::trace_model& m, std::string_view whole_trace_title) {
    std::vector<run_scope> out;
    for (std::uint32_t ri = 0; ri < m.runs.size(); ++ri) out.push_back(scope_of(m, ri));
    if (!out.empty()) return out;
    run_scope s;
    s.model = &m;
    s.title = whole_trace_title;
    std::vector<std::uint32_t> all;
    for (std::uint32_t ti = 0; ti < m.tracks.size(); ++ti) {
        const tm::track& t = m.tracks[ti];
        if (!has_events(t)) continue;
        all.push_back(ti);
        if (t.kind == tm::track_kind::thread) s.workers.push_back(ti);
        else add_track(m, s, ti);
    }
    time_span(m, all, s.start, s.end);
    out.push_back(std::move(s));
    return out;
}

slice_kind classify_slice(std::string_view n) {
    switch (vocab::classify_slice(n)) {
        case vocab::slice_class::node: return stage_of_name(n) >= 0 ? slice_kind::node : slice_kind::other;   // fits a long
        case vocab::slice_class::task: return slice_kind::task;
        case vocab::slice_class::idle: return slice_kind::idle;
        case vocab::slice_class::parked: return slice_kind::parked;
        case vocab::slice_class::blocked: return slice_kind::blocked;
        case vocab::slice_class::queue_operation: return slice_kind::queue;
        case vocab::slice_class::running: return slice_kind::running;
        case vocab::slice_class::waiting: return slice_kind::waiting;
        case vocab::slice_class::throttled: return slice_kind::throttled;
        case vocab::slice_class::other: break;
    }
    return slice_kind::other;
}

std::vector<slice_kind> classify_strings(const tm::trace_model& m) {
    std::vector<slice_kind> k(m.strings.size());
    for (std::size_t i = 0; i < m.strings.size(); ++i) k[i] = classify_slice(m.strings[i]);
    return k;
}

long stage_of_name(std::string_view n) {
    const auto p = n.find(vocab::stage_prefix);
    if (p == std::string_view::npos) return -1;
    const auto j = vocab::leading_number(n.substr(p), vocab::stage_prefix);
    return j ? static_cast<long>(*j) : -1;
}

tm::string_id find_string(const tm::trace_model& m, std::string_view s) {
    for (std::size_t i = 0; i < m.strings.size(); ++i)
        if (m.strings[i] == s) return static_cast<tm::string_id>(i);
    return tm::no_index;
}

std::uint64_t node_extent::nodes_of_stage(std::uint64_t j) const {
    if (stage < 0 || j < static_cast<std::uint64_t>(stage) || j > last_stage) return 0;
    const std::uint64_t stages = last_stage - static_cast<std::uint64_t>(stage) + 1;
    // nodes spread over the stages in order (one each for a pipeline block, all of them for one stage)
    const std::uint64_t k = j - static_cast<std::uint64_t>(stage);
    return nodes / stages + (k < nodes % stages ? 1 : 0);
}

node_arg_ids node_arg_ids::of(const tm::trace_model& m) {
    node_arg_ids ids;
    for (std::size_t i = 0; i < m.strings.size(); ++i) {
        const auto key = vocab::classify_arg(m.strings[i]);
        if (!key) continue;
        const auto id = static_cast<tm::string_id>(i);
        if (*key == vocab::arg_key::iteration) ids.iteration = id;
        else if (*key == vocab::arg_key::stage) ids.stage = id;
        else if (*key == vocab::arg_key::last_stage) ids.last_stage = id;
        else if (*key == vocab::arg_key::nodes) ids.nodes = id;
        else if (*key == vocab::arg_key::waited) ids.waited = id;
    }
    return ids;
}

node_extent node_extent_of(const tm::trace_model& m, const tm::slice& s, const node_arg_ids& ids) {
    node_extent e;
    e.stage = stage_of_name(m.str(s.name));
    bool has_last = false;
    for (auto* a = m.args_begin(s); a != m.args_end(s); ++a) {
        if (a->kind == tm::arg_kind::string_value || a->kind == tm::arg_kind::double_value) continue;
        if (a->name == ids.stage) e.stage = static_cast<long>(a->bits());
        else if (a->name == ids.iteration) e.iteration = static_cast<long long>(a->bits());
        else if (a->name == ids.nodes)
            e.nodes = std::clamp<std::uint64_t>(a->bits(), 1, 0xFFFFFFFFu);   // as the DAG keeps it
        else if (a->name == ids.last_stage) e.last_stage = a->bits(), has_last = true;
        else if (a->name == ids.waited) e.waited = (a->bits() & 1) != 0;
    }
    if (e.stage < 0) return e;
    const auto first = static_cast<std::uint64_t>(e.stage);
    // A range that does not fit its node count (or no range) is the nodes of the first stage.
    if (!has_last || e.last_stage < first || e.last_stage - first + 1 > e.nodes) e.last_stage = first;
    return e;
}

}   // namespace pipescope::analysis
