#include "timeline_state.hpp"

#include "time_ruler.hpp"

namespace pipescope::viewer {

namespace {

using json = nlohmann::json;

// The timeline's search box: what was searched, how many matched, the one shown (1-based).
json search_json(const view_state& st) {
    const search_state& s = st.search;
    return {{"text", s.text},
            {"matches", s.total},
            {"current", s.current < s.matches.size() ? json(s.current + 1) : json(nullptr)},
            {"counter", s.counter()},
            {"marked", s.marked},
            {"list_open", s.list_open},
            {"list_rows", s.list_rows},
            {"list_sort", s.list_sort}};
}

// The stage numbers in the area panel's table order (its headers sort it).
json stage_order(const area_stats& s, area_stage_sort sort) {
    json order = json::array();
    for (std::uint32_t i : sorted_stage_rows(s.stages, sort)) order.push_back(s.stages[i].stage);
    return order;
}

// The area selection and its aggregates (model/area_selection.hpp), or null.
json area_json(const document& d, const view_state& st) {
    if (!st.area) return nullptr;
    const area_selection& a = *st.area;
    const area_stats s = compute_area_stats(d, a, st.align_runs);
    json tracks = json::array(), states = json::object(), stages = json::array();
    for (const track_ref& t : a.tracks)
        if (t.file < d.files.size() && t.track < d.files[t.file]->model.tracks.size())
            tracks.push_back({{"file", t.file}, {"name", d.files[t.file]->model.tracks[t.track].name}});
    for (int k = 0; k < area_state_count; ++k)
        if (s.state_ns[k]) states[area_state_name(k)] = s.state_ns[k];
    for (const area_stage& g : s.stages) stages.push_back({{"stage", g.stage}, {"ns", g.ns}, {"nodes", g.nodes.count}});
    return {{"start", a.t0},
            {"end", a.t1},
            {"length", s.length},
            {"tracks", std::move(tracks)},
            {"tracks_with_slices", s.tracks_with_slices},
            {"state_ns", std::move(states)},
            {"stages", std::move(stages)},
            {"sort", {{"column", area_stage_column_name(st.area_sort.column)}, {"descending", st.area_sort.descending}}},
            {"order", stage_order(s, st.area_sort)},
            {"nodes", {{"count", s.nodes.count}, {"mean", s.nodes.mean}, {"p95", s.nodes.p95}}},
            {"steals", s.steals},
            {"suspensions", s.suspensions},
            {"wakeups", s.wakeups},
            {"events_lost", s.events_lost}};
}

// The timeline ruler's labels as drawn (model/ruler.hpp, in the UI font), what they count from, and
// whether they all fit: inside the time area, none overlapping.
json ruler_json(const view_state& st) {
    const ruler_layout r = ruler_ticks(st.vp.t0, st.vp.t1(), st.vp.width, st.ruler_base(), imgui_text_width);
    json labels = json::array();
    bool fits = true;
    double prev_end = -1e300;
    for (const ruler_tick& t : r.ticks) {
        if (t.label.empty()) continue;
        labels.push_back(t.label);
        fits = fits && t.label_x >= 0 && t.label_x + t.label_w <= st.vp.width && t.label_x > prev_end;
        prev_end = t.label_x + t.label_w;
    }
    return {{"base", st.ruler_base()}, {"step", r.step}, {"labels", std::move(labels)}, {"fits", fits}};
}

}   // namespace

json timeline_state_json(const document& d, const view_state& st) {
    return {{"search", search_json(st)}, {"area", area_json(d, st)}, {"ruler", ruler_json(st)}};
}

}   // namespace pipescope::viewer
