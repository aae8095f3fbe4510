#include "state_dump.hpp"

#include "../views/arrangement_state.hpp"
#include "../views/run_panel.hpp"
#include "../views/timeline_state.hpp"

#include <imgui.h>

#include <cmath>

namespace pipescope::viewer {

namespace {

using json = nlohmann::json;

// The selected slice or instant: where it is and what pipeline node it is.
json selection_json(const document& d, const view_state& st) {
    const selection& s = st.sel;
    if (!s.valid() || s.file >= d.files.size()) return json{{"valid", false}};
    const loaded_file& f = *d.files[s.file];
    const tm::trace_model& m = f.model;
    const tm::track& t = m.tracks[s.ev.track];
    json j{{"valid", true},
           {"file", s.file},
           {"track", t.name},
           {"kind", s.ev.is_instant ? "instant" : "slice"},
           {"index", s.ev.index}};
    using vocab::arg_key;
    std::optional<std::uint64_t> iteration, stage;
    if (s.ev.is_instant) {
        const tm::instant& i = t.instants[s.ev.index];
        j["name"] = m.str(i.name);
        iteration = m.uint_arg(i, arg_key::iteration);
        stage = m.uint_arg(i, arg_key::stage);
    } else {
        const tm::slice& sl = t.slices[s.ev.index];
        j["name"] = m.str(sl.name);
        iteration = m.uint_arg(sl, arg_key::iteration);
        stage = m.uint_arg(sl, arg_key::stage);
    }
    j["iteration"] = iteration ? json(*iteration) : json(nullptr);
    j["stage"] = stage ? json(*stage) : json(nullptr);
    if (const auto r = selection_range(d, s, st.align_runs)) j["range"] = {r->first, r->second};
    j["flows"] = st.sel_flows.size();
    return j;
}

}   // namespace

json dump_state(const shell& sh, window_size win) {
    const document& d = sh.doc;
    const view_state& st = sh.state;
    json j;
    j["window"] = {{"width", win.width}, {"height", win.height}};
    j["view"] = st.active_view;
    j["ui_scale"] = sh.ui_scale;
    j["font_px"] = ImGui::GetIO().Fonts->Fonts.empty() ? 0.f : ImGui::GetIO().Fonts->Fonts[0]->FontSize;
    json files = json::array();
    for (const auto& f : d.files) files.push_back({{"path", f->path.string()}, {"name", f->name}});
    j["files"] = std::move(files);
    json runs = json::array();
    for (const auto& r : d.runs)
        runs.push_back({{"title", r.title},
                        {"file", r.file},
                        {"start", r.start},
                        {"end", r.end},
                        {"events_lost", r.events_lost},
                        {"truncated", r.truncated}});
    j["runs"] = std::move(runs);
    j["errors"] = sh.errors;
    j["warnings"] = sh.warnings;
    j["loading"] = sh.loads.busy();
    j["run_panel"] = run_panel_state(sh.runs);
    j["selection"] = selection_json(d, st);
    // The timeline's axis, in display ns (from the document's start, or each run's start when aligned).
    j["visible"] = {{"start", st.vp.t0},
                    {"end", st.vp.t0 + st.vp.npp * st.vp.width},
                    {"ns_per_px", st.vp.npp},
                    {"width_px", st.vp.width}};
    j["cursor"] = st.cursor ? json(*st.cursor) : json(nullptr);
    j["playing"] = st.playing;
    j.update(timeline_state_json(d, st));      // search, area, ruler
    j.update(arrangement_state_json(d, st));   // tracks (pinned, hidden, filter, collapsed), bookmarks
    j["align_runs"] = st.align_runs;
    j["all_flows"] = st.all_flows;
    j["overlays"] = {{"help", st.show_help},
                     {"file_browser", sh.file_browser_open()},
                     {"popup",
                      ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel)}};   // a menu
    // The labels laid out in the last frame that do not fit their cells (model/layout_audit.hpp).
    json clipped = json::array();
    for (const label_fit& l : st.layout.clipped())
        clipped.push_back(l.where + ": \"" + l.text + "\" needs " + std::to_string(static_cast<int>(std::ceil(l.need))) +
                          " px, has " + std::to_string(static_cast<int>(std::floor(l.have))));
    j["layout"] = {{"labels", st.layout.labels().size()}, {"clipped", std::move(clipped)}};
    // A sweep (the scaling view): its rows' points as last drawn, in window pixels, and the hovered row.
    if (st.scaling) {
        json points = json::array();
        for (const plot_point& p : st.scaling_points)
            points.push_back({{"row", p.row},
                              {"policy", st.scaling->data.rows[p.row].policy},
                              {"workers", st.scaling->data.rows[p.row].workers},
                              {"x", p.x},
                              {"y", p.y}});
        j["scaling"] = {{"rows", st.scaling->data.rows.size()},
                        {"refused", st.scaling->data.refused.size()},
                        {"points", std::move(points)},
                        {"hovered", st.scaling_hover == no_row ? json(nullptr) : json(st.scaling_hover)}};
    } else {
        j["scaling"] = nullptr;
    }
    if (const auto& g = st.dag_shown; g && st.active_view == "dag")   // the DAG view's run length and counts
        j["dag"] = {{"run", g->run},
                    {"start", g->start},
                    {"end", g->end},
                    {"nodes", g->nodes},
                    {"counts",
                     {{"done", g->done},
                      {"running", g->running},
                      {"suspended", g->suspended},
                      {"ready", g->ready},
                      {"not_ready", g->not_ready}}}};
    else j["dag"] = nullptr;
    j["panels"] = {{"details", st.show_details}, {"lesson", st.show_lesson}, {"side_width", sh.side_width()}};
    j["lesson"] = sh.lesson_loaded ? json{{"name", sh.lesson_loaded->name}, {"step", sh.lesson_step + 1}} : json(nullptr);
    json recent = json::array();
    for (const auto& r : sh.recent_files()) recent.push_back(r.string());
    j["recent"] = std::move(recent);
    j["clipboard"] = st.clipboard;                                                           // what Copy put there last
    j["screenshot"] = {{"last", sh.screenshot.last_path}, {"error", sh.screenshot.error}};   // File > Save screenshot...
    return j;
}

}   // namespace pipescope::viewer
