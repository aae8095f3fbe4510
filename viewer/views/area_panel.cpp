// The details panel's part for an area selection (Shift+drag or M in the timeline): the range's
// length and position, then the aggregates of model/area_selection.hpp — time per state and per
// stage, node counts and durations, steals, suspensions, wake-ups and lost events.
#include "clipboard.hpp"
#include "palette.hpp"
#include "view.hpp"

#include "../model/copy_text.hpp"

#include "../model/file_set.hpp"

#include <cmath>
#include <cstdio>

namespace pipescope::viewer {

namespace {

namespace an = pipescope::analysis;

// The aggregates of the area last shown: computed when the area, the axis or the document changes;
// the stage table's row order when they or its sort change.
struct area_cache {
    area_selection area;
    bool aligned = false;
    file_set files;
    area_stats stats;
    area_stage_sort sort;
    std::vector<std::uint32_t> order;
    const area_stats& of(const document& d, const area_selection& a, bool align) {
        if (!(files.same_as(d) && aligned == align && area == a)) {
            stats = compute_area_stats(d, a, align);
            area = a;
            aligned = align;
            files.take(d);
            order = sorted_stage_rows(stats.stages, sort);
        }
        return stats;
    }
    const std::vector<std::uint32_t>& rows(area_stage_sort by) {
        if (!(by == sort)) order = sorted_stage_rows(stats.stages, sort = by);
        return order;
    }
};

ImU32 state_colour(int state) {
    switch (static_cast<an::slice_kind>(state)) {
        case an::slice_kind::node: return rgb(stage_palette[0]);
        case an::slice_kind::task: return key_colour(key_task);
        case an::slice_kind::idle: return key_colour(key_idle);
        case an::slice_kind::parked: return key_colour(key_parked);
        case an::slice_kind::running: return key_colour(key_running);
        case an::slice_kind::waiting: return key_colour(key_waiting);
        case an::slice_kind::throttled: return key_colour(key_throttled);
        default: return state == area_between_slices ? col_background : key_colour(key_other);
    }
}

void swatch(ImU32 c) {
    ImGui::ColorButton("##c", ImColor(c), ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoBorder, ImVec2(10, 10));
    ImGui::SameLine();
}

std::string ns_text(double ns) { return format_duration(ns, 3); }

void states_table(const area_stats& s) {
    const double total = s.length * static_cast<double>(s.tracks_with_slices);
    if (!ImGui::BeginTable("##states", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH)) return;
    for (int k = 0; k < area_state_count; ++k) {
        if (!s.state_ns[k]) continue;
        ImGui::PushID(k);
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        swatch(state_colour(k));
        ImGui::TextUnformatted(area_state_name(k));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(ns_text(static_cast<double>(s.state_ns[k])).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%.1f %%", total > 0 ? 100.0 * static_cast<double>(s.state_ns[k]) / total : 0.0);
        ImGui::PopID();
    }
    ImGui::EndTable();
}

// The headers: each names its measure (tooltip: how), and a click sorts by it (`sort` follows).
void stage_headers(area_stage_sort& sort, layout_audit& audit) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (int c = 0; c < area_stage_column_count; ++c) {
        const auto col = static_cast<area_stage_column>(c);
        // Times and counts sort largest first on the first click: what one looks for.
        const ImGuiTableColumnFlags f =
            col == area_stage_column::stage ? ImGuiTableColumnFlags_DefaultSort : ImGuiTableColumnFlags_PreferSortDescending;
        ImGui::TableSetupColumn(area_stage_column_name(col), f, 0, static_cast<ImGuiID>(c));
    }
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (int c = 0; c < area_stage_column_count; ++c) {
        ImGui::TableSetColumnIndex(c);
        const char* name = ImGui::TableGetColumnName(c);
        // ImGui leaves room for the sort arrow beside a sortable header's label.
        const float arrow = std::floor(ImGui::GetFontSize() * 0.65f + ImGui::GetStyle().FramePadding.x);
        const float visible = ImGui::GetWindowDrawList()->GetClipRectMax().x - ImGui::GetCursorScreenPos().x;
        audit.check("area stage table header", name, ImGui::CalcTextSize(name).x + arrow,
                    std::min(ImGui::GetContentRegionAvail().x, visible));
        ImGui::TableHeader(name);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s; click to sort", area_stage_column_tip(static_cast<area_stage_column>(c)));
    }
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsCount > 0) {
        sort.column = static_cast<area_stage_column>(specs->Specs[0].ColumnUserID);
        sort.descending = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
        specs->SpecsDirty = false;
    }
}

void stages_table(const area_stats& s, area_cache& cache, area_stage_sort& sort, layout_audit& audit) {
    const float rows_h =
        ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(std::min<std::size_t>(s.stages.size(), 10) + 1) + 6;
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_RowBg | ImGuiTableFlags_Sortable;
    if (!ImGui::BeginTable("##stages", area_stage_column_count, flags, ImVec2(0, rows_h))) return;
    stage_headers(sort, audit);
    const std::vector<std::uint32_t>& order = cache.rows(sort);
    ImGuiListClipper clip;   // thousands of stages (pipe-fib): only the visible rows
    clip.Begin(static_cast<int>(order.size()));
    while (clip.Step()) {
        for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
            const area_stage& st = s.stages[order[static_cast<std::size_t>(i)]];
            ImGui::PushID(i);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            swatch(key_colour(static_cast<colour_key>(std::min<std::uint64_t>(st.stage, key_special - 1))));
            ImGui::Text("%llu", static_cast<unsigned long long>(st.stage));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(ns_text(static_cast<double>(st.ns)).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%llu", static_cast<unsigned long long>(st.nodes.count));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(ns_text(st.inside.mean).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(ns_text(static_cast<double>(st.inside.p95)).c_str());
            ImGui::PopID();
        }
    }
    ImGui::EndTable();
}

}   // namespace

void draw_area_panel(view_context& ctx) {
    static area_cache cache;
    view_state& st = ctx.state;
    if (!st.area) return;
    const area_stats& s = cache.of(ctx.doc, *st.area, st.align_runs);
    ImGui::TextUnformatted("Area selection");
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear##area")) {
        st.area.reset();
        return;
    }
    ImGui::SameLine();
    copy_button(st, "Copy as TSV##area", "Its tables (time by state, by stage) tab-separated, times in ns",
                [&] { return area_tsv(s); });
    ImGui::Separator();
    ImGui::Text("length   %s", ns_text(s.length).c_str());
    ImGui::TextDisabled("from %s to %s", ns_text(st.area->t0).c_str(), ns_text(st.area->t1).c_str());
    ImGui::TextDisabled("%zu track%s, %zu with slices", st.area->tracks.size(), st.area->tracks.size() == 1 ? "" : "s",
                        s.tracks_with_slices);
    if (s.tracks_with_slices) {
        ImGui::Spacing();
        ImGui::TextDisabled("time by state (innermost slice)");
        states_table(s);
    }
    if (s.nodes.count) {
        ImGui::Spacing();
        ImGui::Text("nodes    %llu   whole mean %s   p95 %s", static_cast<unsigned long long>(s.nodes.count),
                    ns_text(s.nodes.mean).c_str(), ns_text(static_cast<double>(s.nodes.p95)).c_str());
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped(
            "by stage, inside the area: node time, the nodes overlapping it, the mean and p95 of their time in it");
        ImGui::PopStyleColor();
        stages_table(s, cache, st.area_sort, st.layout);
    }
    ImGui::Spacing();
    ImGui::Text("steals %llu   suspensions %llu   wake-ups %llu", static_cast<unsigned long long>(s.steals),
                static_cast<unsigned long long>(s.suspensions), static_cast<unsigned long long>(s.wakeups));
    if (s.events_lost)
        ImGui::TextColored(ImColor(col_events_lost), "%llu events lost in this range: counts are incomplete",
                           static_cast<unsigned long long>(s.events_lost));
    ImGui::Separator();
}

}   // namespace pipescope::viewer
