// Run scopes (scope.hpp).
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

tm::string_id find_string(const tm::trace_model& m, std::string_view s) {
    for (std::size_t i = 0; i < m.strings.size(); ++i)
        if (m.strings[i] == s) return static_cast<tm::string_id>(i);
    return tm::no_index;
}

}   // namespace pipescope::analysis
