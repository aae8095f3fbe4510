#include "track_controls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace pipescope::viewer {

file_arrangement& arrangement_for(view_state& st, std::uint32_t file) {
    if (st.arranged.size() <= file) st.arranged.resize(file + 1);
    return st.arranged[file];
}

void disclosure_triangle(ImDrawList* dl, float cx, float cy, float u, bool open) {
    const ImU32 c = IM_COL32(200, 200, 210, 255);
    if (open)
        dl->AddTriangleFilled(ImVec2(cx - 4 * u, cy - 2 * u), ImVec2(cx + 4 * u, cy - 2 * u), ImVec2(cx, cy + 3 * u), c);
    else dl->AddTriangleFilled(ImVec2(cx - 2 * u, cy - 4 * u), ImVec2(cx - 2 * u, cy + 4 * u), ImVec2(cx + 3 * u, cy), c);
}

void pinned_run_badge(view_context& ctx, const track_area& band, std::uint32_t run, float y0, float y1) {
    if (ctx.doc.runs.size() < 2 || !band.visible(y0, y0 + 1)) return;
    const std::string n = std::to_string(run + 1);
    const float fs = ImGui::GetFontSize(), y = y0 + 2 + (std::min(y1 - y0, fs * 1.2f) - fs) * 0.5f;
    band.dl->AddText(ImVec2(band.x_labels + 3, y), IM_COL32(140, 170, 230, 255), n.c_str());
    const ImVec2 mp = ImGui::GetIO().MousePos;
    if (ImGui::IsWindowHovered() && mp.x >= band.x_labels && mp.x < band.x0 && mp.y >= y0 && mp.y < y1 &&
        mp.y < band.clip_y1)
        ImGui::SetTooltip("pinned from run %u: %s", run + 1, ctx.doc.runs[run].title.c_str());
}

namespace {

// "pipe-fib · piper · P=2: worker 1": a track named with its run, for the hidden tracks' menu.
std::string track_title(const document& d, std::uint32_t file, std::uint32_t track) {
    const std::uint32_t r = run_of(d, file, track);
    const std::string& name = d.files[file]->model.tracks[track].name;
    return r == tm::no_index ? name : d.runs[r].title + ": " + name;
}

// Shows every hidden track of a run (or of every run: run == no_index).
void show_hidden(view_state& st, const document& d, std::uint32_t run) {
    for (std::uint32_t f = 0; f < st.arranged.size() && f < d.files.size(); ++f) {
        auto& hidden = st.arranged[f].hidden;
        hidden.erase(std::remove_if(hidden.begin(), hidden.end(),
                                    [&](std::uint32_t t) { return run != tm::no_index && run_of(d, f, t) != run; }),
                     hidden.end());
    }
}

}   // namespace

void track_controls::toolbar(view_context& ctx, toolbar_flow& flow, const track_arrangement& arr) {
    view_state& st = ctx.state;
    const float w = ImGui::GetFontSize() * 9;
    flow.next(w, "track filter");
    ImGui::SetNextItemWidth(w);
    // The field follows the state (a filter restored with its file) unless it is being edited.
    if (!editing_ && st.track_filter != filter_) {
        std::strncpy(filter_, st.track_filter.c_str(), sizeof filter_ - 1);
        filter_[sizeof filter_ - 1] = '\0';
    }
    if (ImGui::InputTextWithHint("##track filter", "filter tracks", filter_, sizeof filter_)) st.track_filter = filter_;
    editing_ = ImGui::IsItemActive();
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Show only the tracks whose name has every word typed (pinned tracks stay); right-click a track's name to pin or hide it");
    const std::size_t hidden = arr.hidden();
    if (hidden == 0) return;
    char label[48];
    *fmt::format_to_n(label, sizeof label - 1, "{} hidden", hidden).out = '\0';
    flow.next(toolbar_flow::button_width(label), label);
    if (ImGui::Button(label)) ImGui::OpenPopup("##hidden tracks");
    if (ImGui::BeginPopup("##hidden tracks")) {
        if (ImGui::MenuItem("Show all hidden tracks")) show_hidden(st, ctx.doc, tm::no_index);
        ImGui::Separator();
        for (std::uint32_t f = 0; f < st.arranged.size() && f < ctx.doc.files.size(); ++f)
            for (const std::uint32_t t : std::vector<std::uint32_t>(st.arranged[f].hidden))
                if (ImGui::MenuItem(track_title(ctx.doc, f, t).c_str())) toggle_in(st.arranged[f].hidden, t);
        ImGui::EndPopup();
    }
}

void track_controls::mouse(view_context& ctx, const track_area& fr, float top, std::span<const track_region> tracks,
                           std::span<const header_row> headers) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const bool right = ImGui::IsMouseClicked(ImGuiMouseButton_Right), left = ImGui::IsMouseClicked(ImGuiMouseButton_Left);
    if ((right || left) && ImGui::IsWindowHovered() && mp.y >= fr.clip_y0 && mp.y < fr.clip_y1 && mp.x >= fr.x_labels) {
        const bool in_names = mp.x < fr.x0;
        std::uint32_t run = tm::no_index;
        if (mp.y >= top)   // the last header drawn at a place is on top (a sticky one)
            for (auto h = headers.rbegin(); h != headers.rend() && run == tm::no_index; ++h)
                if (mp.y >= h->y0 && mp.y < h->y1) run = h->run;
        const auto t =
            std::find_if(tracks.begin(), tracks.end(), [&](const track_region& r) { return mp.y >= r.y0 && mp.y < r.y1; });
        if (run != tm::no_index && right) {
            menu_run_ = run;
            ImGui::OpenPopup("##run menu");
        } else if (run != tm::no_index && left && in_names) {
            const run_ref& rr = ctx.doc.runs[run];
            toggle_in(arrangement_for(ctx.state, rr.file).collapsed_runs, run_ordinal(ctx.doc, run));
        } else if (run == tm::no_index && right && in_names && t != tracks.end()) {
            menu_track_ = t->track;
            ImGui::OpenPopup("##track menu");
        }
    }
    track_menu(ctx);
    run_menu(ctx);
}

void track_controls::track_menu(view_context& ctx) {
    if (!ImGui::BeginPopup("##track menu")) return;
    view_state& st = ctx.state;
    const track_ref t = menu_track_;
    if (t.file < ctx.doc.files.size() && t.track < ctx.doc.files[t.file]->model.tracks.size()) {
        file_arrangement& a = arrangement_for(st, t.file);
        ImGui::TextDisabled("%s", ctx.doc.files[t.file]->model.tracks[t.track].name.c_str());
        ImGui::Separator();
        if (ImGui::MenuItem(contains(a.pinned, t.track) ? "Unpin" : "Pin to the top")) toggle_in(a.pinned, t.track);
        if (ImGui::MenuItem("Hide")) {
            a.pinned.erase(std::remove(a.pinned.begin(), a.pinned.end(), t.track), a.pinned.end());
            if (!contains(a.hidden, t.track)) a.hidden.push_back(t.track);
        }
    }
    ImGui::EndPopup();
}

void track_controls::run_menu(view_context& ctx) {
    if (!ImGui::BeginPopup("##run menu")) return;
    view_state& st = ctx.state;
    if (menu_run_ < ctx.doc.runs.size()) {
        const run_ref& rr = ctx.doc.runs[menu_run_];
        file_arrangement& a = arrangement_for(st, rr.file);
        const std::uint32_t k = run_ordinal(ctx.doc, menu_run_);
        ImGui::TextDisabled("%s", rr.title.c_str());
        ImGui::Separator();
        if (ImGui::MenuItem(contains(a.collapsed_runs, k) ? "Expand" : "Collapse")) toggle_in(a.collapsed_runs, k);
        std::size_t hidden = 0;
        for (const std::uint32_t t : a.hidden) hidden += run_of(ctx.doc, rr.file, t) == menu_run_;
        char label[48];
        *fmt::format_to_n(label, sizeof label - 1, "Show hidden tracks ({})", hidden).out = '\0';
        if (ImGui::MenuItem(label, nullptr, false, hidden > 0)) show_hidden(st, ctx.doc, menu_run_);
    }
    ImGui::EndPopup();
}

}   // namespace pipescope::viewer
