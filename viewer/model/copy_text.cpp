#include "copy_text.hpp"

#include <fmt/format.h>

namespace pipescope::viewer {

namespace {

std::string ns(double v) { return fmt::format("{}", v); }
std::string ns(std::uint64_t v) { return std::to_string(v); }

}   // namespace

std::string to_tsv(const std::vector<std::vector<std::string>>& rows) {
    std::string out;
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (c) out += '\t';
            for (char ch : row[c]) out += ch == '\t' || ch == '\n' || ch == '\r' ? ' ' : ch;
        }
        out += '\n';
    }
    return out;
}

std::string event_details_text(const document& d, const selection& s, bool aligned) {
    if (!holds(d, s.file, s.ev)) return "";
    const loaded_file& f = *d.files[s.file];
    const tm::trace_model& m = f.model;
    const tm::track& t = m.tracks[s.ev.track];
    const double off = display_offset_of(d, s.file, s.ev.track, aligned);
    std::vector<std::vector<std::string>> rows;
    const tm::model_arg *a0, *a1;
    if (s.ev.is_instant) {
        const tm::instant& in = t.instants[s.ev.index];
        rows = {{"name", m.str(in.name)},
                {"kind", "instant"},
                {"at", format_duration(static_cast<double>(in.ts) - off, 3)},
                {"ts (ns)", ns(in.ts)}};
        a0 = m.args_begin(in);
        a1 = m.args_end(in);
    } else {
        const tm::slice& sl = t.slices[s.ev.index];
        rows = {{"name", m.str(sl.name)},
                {"kind", fmt::format("slice, depth {}{}", unsigned(sl.depth), sl.unterminated ? ", unterminated" : "")},
                {"start", format_duration(static_cast<double>(sl.begin) - off, 3)},
                {"end", format_duration(static_cast<double>(sl.end) - off, 3)},
                {"duration", format_duration(static_cast<double>(sl.duration()), 3)},
                {"ts (ns)", ns(sl.begin)},
                {"duration (ns)", ns(sl.duration())}};
        a0 = m.args_begin(sl);
        a1 = m.args_end(sl);
    }
    rows.push_back({"track", t.name});
    if (const std::uint32_t r = run_of(d, s.file, s.ev.track); r != tm::no_index) rows.push_back({"run", d.runs[r].title});
    rows.push_back({"file", f.name});
    for (auto* a = a0; a != a1; ++a) rows.push_back({m.str(a->name), m.arg_text(*a)});
    return to_tsv(rows);
}

std::string area_tsv(const area_stats& s) {
    std::vector<std::vector<std::string>> states{{"state", "time (ns)", "share"}};
    const double total = s.length * static_cast<double>(s.tracks_with_slices);
    for (int k = 0; k < area_state_count; ++k)
        if (s.state_ns[k])
            states.push_back(
                {area_state_name(k), ns(s.state_ns[k]),
                 fmt::format("{:.1f} %", total > 0 ? 100.0 * static_cast<double>(s.state_ns[k]) / total : 0.0)});
    // As the panel's stage table: every column inside the area (area_selection.hpp).
    std::vector<std::vector<std::string>> stages{
        {"stage", "in area (ns)", "nodes", "mean in area (ns)", "p95 in area (ns)"}};
    for (const area_stage& g : s.stages)
        stages.push_back({ns(g.stage), ns(g.ns), ns(g.nodes.count), fmt::format("{:.1f}", g.inside.mean), ns(g.inside.p95)});
    return to_tsv(states) + "\n" + to_tsv(stages);
}

match_row describe_match(const document& d, const search_match& m) {
    match_row r;
    r.start = m.t;
    if (!holds(d, m.file, m.ev)) return r;
    const loaded_file& f = *d.files[m.file];
    const tm::track& t = f.model.tracks[m.ev.track];
    const std::uint32_t run = run_of(d, m.file, m.ev.track);
    r.run = run != tm::no_index ? d.runs[run].title : f.name;
    r.track = t.name;
    if (m.ev.is_instant) {
        r.name = f.model.str(t.instants[m.ev.index].name);
    } else {
        const tm::slice& s = t.slices[m.ev.index];
        r.name = f.model.str(s.name);
        r.duration = static_cast<double>(s.duration());
    }
    return r;
}

std::string search_results_tsv(const document& d, const search_state& s, const std::vector<std::uint32_t>& order) {
    std::vector<std::vector<std::string>> rows{{"match", "run", "track", "name", "start (ns)", "duration (ns)"}};
    rows.reserve(order.size() + 1);
    for (std::uint32_t i : order) {
        const match_row r = describe_match(d, s.matches[i]);
        rows.push_back({std::to_string(i + 1), r.run, r.track, r.name, ns(r.start), r.duration ? ns(*r.duration) : ""});
    }
    return to_tsv(rows);
}

}   // namespace pipescope::viewer
