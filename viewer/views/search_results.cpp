#include "search_results.hpp"

#include "clipboard.hpp"
#include "search_box.hpp"

#include "../model/copy_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace pipescope::viewer {

namespace {

enum column : ImGuiID { col_match, col_run, col_track, col_name, col_start, col_duration };

}   // namespace

// Time order is the matches' own; by duration is sorted once per search or sort change (an
// instant counts as no duration).
void search_results::sort(const view_context& ctx) {
    const search_state& s = ctx.state.search;
    order_.resize(s.matches.size());
    std::iota(order_.begin(), order_.end(), 0u);
    if (by_duration_) {
        std::vector<double> dur(s.matches.size(), -1);
        for (std::size_t i = 0; i < dur.size(); ++i)
            if (const search_match& m = s.matches[i]; !m.ev.is_instant && holds(ctx.doc, m.file, m.ev))
                dur[i] = static_cast<double>(ctx.doc.files[m.file]->model.tracks[m.ev.track].slices[m.ev.index].duration());
        std::stable_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) { return dur[a] < dur[b]; });
    }
    if (descending_) std::reverse(order_.begin(), order_.end());
    order_revision_ = s.revision;
    ctx.state.search.list_sort = std::string(by_duration_ ? "duration" : "time") + (descending_ ? " descending" : "");
}

void search_results::draw(view_context& ctx) {
    search_state& s = ctx.state.search;
    if (!s.list_open) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float fs = ImGui::GetFontSize();
    // Over the lower part of the tracks, at its place every time it opens (the window can be moved).
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + fs, vp->WorkPos.y + vp->WorkSize.y - fs * 21), ImGuiCond_Appearing);
    ImGui::SetNextWindowSize(ImVec2(std::min(vp->WorkSize.x - 2 * fs, fs * 62), fs * 20), ImGuiCond_Appearing);
    bool open = true;
    const std::string title = fmt::format("Search results: {}###search results", s.counter());
    if (ImGui::Begin(title.c_str(), &open, ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse)) {
        ImGui::Text("\"%s\"", s.text.c_str());
        ImGui::SameLine();
        constexpr std::size_t copy_max = 100000;   // a bigger clipboard helps nobody
        ImGui::BeginDisabled(s.matches.size() > copy_max);
        copy_button(ctx.state, "Copy as TSV", "The rows in the order shown, tab-separated, times in ns",
                    [&] { return search_results_tsv(ctx.doc, s, order_); });
        ImGui::EndDisabled();
        table(ctx);
    }
    ImGui::End();
    if (!open) s.list_open = false;
}

void search_results::table(view_context& ctx) {
    search_state& s = ctx.state.search;
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
                                  ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("##results", 6, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_DefaultSort, 0.5f, col_match);
    ImGui::TableSetupColumn("run", ImGuiTableColumnFlags_NoSort, 2.5f, col_run);
    ImGui::TableSetupColumn("track", ImGuiTableColumnFlags_NoSort, 1.2f, col_track);
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_NoSort, 1.5f, col_name);
    ImGui::TableSetupColumn("start", 0, 1, col_start);
    ImGui::TableSetupColumn("duration", ImGuiTableColumnFlags_PreferSortDescending, 1, col_duration);
    ImGui::TableHeadersRow();
    ImGuiTableSortSpecs* spec = ImGui::TableGetSortSpecs();
    if ((spec && spec->SpecsDirty) || order_revision_ != s.revision || order_.size() != s.matches.size()) {
        if (spec && spec->SpecsCount > 0) {
            by_duration_ = spec->Specs[0].ColumnUserID == col_duration;
            descending_ = spec->Specs[0].SortDirection == ImGuiSortDirection_Descending;
        }
        if (spec) spec->SpecsDirty = false;
        sort(ctx);
    }
    s.list_rows = order_.size();
    // Enter stepped to another match: scroll its row into view.
    int scroll_row = -1;
    if (s.current != scrolled_to_ && s.current < s.matches.size()) {
        scroll_row = static_cast<int>(std::find(order_.begin(), order_.end(), s.current) - order_.begin());
        scrolled_to_ = s.current;
    }
    std::size_t clicked = search_state::none;
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(order_.size()));
    if (scroll_row >= 0) clip.ForceDisplayRangeByIndices(scroll_row, scroll_row + 1);
    while (clip.Step()) {
        for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
            const std::uint32_t mi = order_[static_cast<std::size_t>(i)];
            const match_row r = describe_match(ctx.doc, s.matches[mi]);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            const std::string label = fmt::format("{}##{}", mi + 1, mi);
            if (ImGui::Selectable(label.c_str(), mi == s.current, ImGuiSelectableFlags_SpanAllColumns)) clicked = mi;
            if (i == scroll_row) ImGui::SetScrollHereY(0.5f);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.run.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.track.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.name.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_duration(r.start, 3).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.duration ? format_duration(*r.duration, 3).c_str() : "instant");
        }
    }
    ImGui::EndTable();
    if (clicked != search_state::none) {
        scrolled_to_ = clicked;   // its row is where the pointer is
        show_match(ctx, clicked);
    }
}

}   // namespace pipescope::viewer
