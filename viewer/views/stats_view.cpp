// Statistics (`--view stats`, key 8): per slice name or per stage, count, total, mean, median, p95,
// max and min in a sortable table (click a header), over a run or the area selection, optionally
// beside a second run with the ratio B / A — Tracy's statistics window and Perfetto's pivot table —
// and under it a log-scaled duration histogram of the selected row (Tracy's Find Zone): median and
// p95 marked, the selected slice's duration, and a range dragged on it with its count and time.
// The numbers come from model/slice_stats.hpp, computed when an input changes, not per frame.
#include "palette.hpp"
#include "time_ruler.hpp"
#include "view.hpp"

#include "../model/slice_stats.hpp"
#include "../model/text_fit.hpp"
#include "../model/viewport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace pipescope::viewer {
namespace {

constexpr ImU32 col_bar = IM_COL32(95, 150, 210, 255);
constexpr ImU32 col_range = IM_COL32(240, 200, 80, 60);
constexpr ImU32 col_median = IM_COL32(120, 220, 120, 255);
constexpr ImU32 col_p95 = IM_COL32(230, 120, 70, 255);
constexpr ImU32 col_selected = IM_COL32(255, 255, 255, 255);
constexpr ImU32 col_run_b = IM_COL32(240, 110, 200, 255);   // run B's histogram line

const char* side_name(stats_side s) { return s == stats_side::a ? "A" : s == stats_side::b ? "B" : "B/A"; }

// The run picker: the document's runs by title; `none` adds a first entry for no run. A title too
// long for the picker ends in "…" (the list and the tooltip have it whole).
bool run_combo(const char* id, const document& d, std::uint32_t& run, bool* none) {
    const bool is_none = none && *none;
    const std::string title = is_none ? std::string("none") : (run < d.runs.size() ? d.runs[run].title : "");
    const float chrome = ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().FramePadding.x;
    const float w = std::min(ImGui::GetFontSize() * 22, static_cast<float>(imgui_text_width(title)) + chrome);
    const std::string preview = elide_to_width(title, w - chrome, imgui_text_width);
    ImGui::SetNextItemWidth(w);
    bool changed = false;
    if (ImGui::BeginCombo(id, preview.c_str())) {
        if (none && ImGui::Selectable("none", is_none)) *none = true, changed = true;
        for (std::uint32_t r = 0; r < d.runs.size(); ++r) {
            ImGui::PushID(static_cast<int>(r));
            if (ImGui::Selectable(d.runs[r].title.c_str(), !is_none && r == run)) {
                run = r, changed = true;
                if (none) *none = false;
            }
            ImGui::PopID();
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered() && preview != title) ImGui::SetTooltip("%s", title.c_str());
    return changed;
}

std::string cell_text(const stats_pair& p, stats_measure m, stats_side s) {
    if (s == stats_side::ratio) {
        const auto r = stats_ratio(p, m);
        return r ? fmt::format("{:.2f}×", *r) : std::string("—");
    }
    const stats_row* row = s == stats_side::a ? p.a : p.b;
    if (!row) return "—";
    if (m == stats_measure::count) return std::to_string(row->count);
    return format_duration(measure_of(*row, m));
}

// x of a duration on the histogram's log axis.
float hist_x(const stats_histogram& h, double ns, float left, float width) {
    const double f = h.hi > h.lo ? std::log(std::max(ns, 1.0) / h.lo) / std::log(h.hi / h.lo) : 0;
    return left + static_cast<float>(std::clamp(f, 0.0, 1.0)) * width;
}
double hist_value(const stats_histogram& h, float x, float left, float width) {
    const double f = std::clamp(static_cast<double>((x - left) / width), 0.0, 1.0);
    return h.lo * std::pow(h.hi / h.lo, f);
}

// A vertical mark across the plot with its label at the top.
void mark(ImDrawList* dl, float x, ImVec2 a, ImVec2 b, ImU32 col, const std::string& label) {
    dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), col, 2);
    dl->AddText(ImVec2(x + 3, a.y), col, label.c_str());
}

// Powers of ten along the axis, labelled.
void axis(ImDrawList* dl, const stats_histogram& h, ImVec2 a, ImVec2 b) {
    const ImU32 col = IM_COL32(170, 170, 180, 255);
    dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, b.y), col);
    for (double v = std::pow(10.0, std::ceil(std::log10(h.lo))); v <= h.hi; v *= 10) {
        const float x = hist_x(h, v, a.x, b.x - a.x);
        dl->AddLine(ImVec2(x, b.y), ImVec2(x, b.y + 4), col);
        const std::string t = format_duration(v, 0);
        dl->AddText(ImVec2(x - ImGui::CalcTextSize(t.c_str()).x / 2, b.y + 5), col, t.c_str());
    }
}

// A's bins as bars and B's (on the same bins) as a step line over them, both to one scale.
void bars(ImDrawList* dl, const stats_histogram& h, const stats_histogram& hb, ImVec2 a, ImVec2 b, float top_gap) {
    const float w = b.x - a.x,
                scale = (b.y - a.y - top_gap) / static_cast<float>(std::max<std::uint64_t>({h.peak, hb.peak, 1}));
    for (std::size_t k = 0; k < h.bins.size(); ++k) {
        if (!h.bins[k]) continue;
        const float x0 = hist_x(h, h.edge(k), a.x, w), x1 = hist_x(h, h.edge(k + 1), a.x, w);
        const float y = b.y - scale * static_cast<float>(h.bins[k]);
        dl->AddRectFilled(ImVec2(x0, std::min(y, b.y - 1)), ImVec2(std::max(x1 - 1, x0 + 1), b.y), col_bar);
    }
    float prev_y = b.y;
    for (std::size_t k = 0; k < hb.bins.size(); ++k) {
        const float x0 = hist_x(hb, hb.edge(k), a.x, w), x1 = hist_x(hb, hb.edge(k + 1), a.x, w);
        const float y = hb.bins[k] ? std::min(b.y - scale * static_cast<float>(hb.bins[k]), b.y - 1) : b.y;
        dl->AddLine(ImVec2(x0, prev_y), ImVec2(x0, y), col_run_b, 2);
        dl->AddLine(ImVec2(x0, y), ImVec2(x1, y), col_run_b, 2);
        prev_y = y;
    }
}

class stats_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    float drag_from_ = -1;   // histogram x where a drag started

    void toolbar(view_context& ctx);
    void table(view_context& ctx, float height);
    void histogram(view_context& ctx, ImVec2 size);
    void sort_from(slice_stats_cache& c, ImGuiTableSortSpecs* specs, bool two);
    void on_row_clicked(view_context& ctx, const stats_pair& p, bool open_in_timeline);
};

void stats_view::draw(view_context& ctx) {
    view_state& st = ctx.state;
    if (ctx.doc.runs.empty()) {
        ImGui::TextUnformatted("No run loaded.");
        return;
    }
    toolbar(ctx);
    st.stats.update(ctx.doc, st.area, st.align_runs);
    const float hist_h = std::max(ImGui::GetFontSize() * 11, ImGui::GetContentRegionAvail().y * 0.32f);
    table(ctx,
          std::max(ImGui::GetFontSize() * 6, ImGui::GetContentRegionAvail().y - hist_h - ImGui::GetStyle().ItemSpacing.y));
    histogram(ctx, ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y));
}

void stats_view::toolbar(view_context& ctx) {
    slice_stats_cache& c = ctx.state.stats;
    int group = static_cast<int>(c.group);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("per");
    ImGui::SameLine();
    const bool by_name = ImGui::RadioButton("slice name", &group, 0);
    ImGui::SameLine();
    if (ImGui::RadioButton("stage", &group, 1) || by_name) {
        if (c.group != static_cast<stats_group>(group)) c.selected.clear(), c.hist_range.reset();
        c.group = static_cast<stats_group>(group);
    }
    ImGui::SameLine(0, 24);
    int scope = static_cast<int>(c.scope);
    ImGui::RadioButton("whole run", &scope, 0);
    ImGui::SameLine();
    ImGui::BeginDisabled(!ctx.state.area && c.scope == stats_scope::run);
    ImGui::RadioButton("area selection", &scope, 1);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("The slices of the area's tracks that overlap its time range, each with its whole duration\n"
                          "(Shift+drag in the timeline, or M on a slice)");
    c.scope = static_cast<stats_scope>(scope);
    ImGui::SameLine(0, 24);
    ImGui::TextUnformatted("run A");
    ImGui::SameLine();
    run_combo("##run_a", ctx.doc, c.run_a, nullptr);
    ImGui::SameLine();
    ImGui::TextUnformatted("run B");
    ImGui::SameLine();
    bool none = !c.run_b;
    std::uint32_t b = c.run_b.value_or(0);
    if (run_combo("##run_b", ctx.doc, b, &none)) c.run_b = none ? std::nullopt : std::optional(b);
    ImGui::TextDisabled("%s", c.scope == stats_scope::area
                                  ? (ctx.state.area ? "area selection: slices overlapping it, whole durations (not clipped)"
                                                    : "no area selection: Shift+drag in the timeline")
                                  : "whole run: every slice of its tracks");
    ImGui::SameLine();
    ImGui::TextDisabled("· median and p95 by nearest rank · click a header to sort, a row for its histogram, "
                        "double-click to show its longest slice in the timeline");
}

// ImGui's sort request into the cache: the column's user id is 0 for the name, else 1 + measure * 3 + side.
void stats_view::sort_from(slice_stats_cache& c, ImGuiTableSortSpecs* specs, bool two) {
    if (!specs || !specs->SpecsDirty || specs->SpecsCount == 0) return;
    const ImGuiTableColumnSortSpecs& s = specs->Specs[0];
    stats_sort out;
    out.by_name = s.ColumnUserID == 0;
    if (!out.by_name) {
        const int k = static_cast<int>(s.ColumnUserID) - 1;
        out.measure = static_cast<stats_measure>(two ? k / 3 : k);
        out.side = two ? static_cast<stats_side>(k % 3) : stats_side::a;
    }
    out.descending = s.SortDirection == ImGuiSortDirection_Descending;
    c.sort = out;
    specs->SpecsDirty = false;
}

void stats_view::table(view_context& ctx, float height) {
    slice_stats_cache& c = ctx.state.stats;
    const bool two = c.run_b.has_value();
    const int cols = 1 + stats_measure_count * (two ? 3 : 1);
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_BordersOuter | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
    if (!ImGui::BeginTable(two ? "##stats_ab" : "##stats_a", cols, flags, ImVec2(0, height))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn(c.group == stats_group::name ? "name" : "stage", ImGuiTableColumnFlags_NoHide, 0, 0);
    for (int m = 0; m < stats_measure_count; ++m)
        for (int s = 0; s < (two ? 3 : 1); ++s) {
            const auto measure = static_cast<stats_measure>(m);
            const std::string label = two ? fmt::format("{} {}", to_string(measure), side_name(static_cast<stats_side>(s)))
                                          : std::string(to_string(measure));
            ImGuiTableColumnFlags f = ImGuiTableColumnFlags_PreferSortDescending;
            if (measure == stats_measure::total && s == 0) f |= ImGuiTableColumnFlags_DefaultSort;
            ImGui::TableSetupColumn(label.c_str(), f, 0, static_cast<ImGuiID>(1 + (two ? m * 3 + s : m)));
        }
    ImGui::TableHeadersRow();
    sort_from(c, ImGui::TableGetSortSpecs(), two);
    c.update(ctx.doc, ctx.state.area, ctx.state.align_runs);   // re-sorted if the header was clicked
    if (ctx.mono) ImGui::PushFont(ctx.mono);
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(c.rows.size()));
    while (clip.Step())
        for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
            const stats_pair& p = c.rows[static_cast<std::size_t>(i)];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(i);
            const stats_row* described = p.a ? p.a : p.b;
            const std::string label = described && !described->what.empty() ? p.name + " · " + described->what : p.name;
            if (ImGui::Selectable(label.c_str(), p.name == c.selected,
                                  ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick))
                on_row_clicked(ctx, p, ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left));
            ImGui::PopID();
            for (int m = 0; m < stats_measure_count; ++m)
                for (int s = 0; s < (two ? 3 : 1); ++s) {
                    ImGui::TableNextColumn();
                    const std::string t = cell_text(p, static_cast<stats_measure>(m), static_cast<stats_side>(s));
                    const float w = ImGui::CalcTextSize(t.c_str()).x, avail = ImGui::GetContentRegionAvail().x;
                    if (avail > w) ImGui::SetCursorPosX(ImGui::GetCursorPosX() + avail - w);
                    ImGui::TextUnformatted(t.c_str());
                }
        }
    if (ctx.mono) ImGui::PopFont();
    ImGui::EndTable();
}

// A click shows the row's histogram; a double-click also selects its longest slice of run A and
// shows it in the timeline.
void stats_view::on_row_clicked(view_context& ctx, const stats_pair& p, bool open_in_timeline) {
    view_state& st = ctx.state;
    if (st.stats.selected != p.name) st.stats.selected = p.name, st.stats.hist_range.reset();
    if (!open_in_timeline || !p.a) return;
    if (const auto ev = longest_slice(ctx.doc, st.stats.run_a, st.stats.group, *p.a)) {
        st.select(ctx.doc, {ctx.doc.runs[st.stats.run_a].file, *ev});
        if (auto range = selection_range(ctx.doc, st.sel, st.align_runs)) st.bring_into_view(*range);
        st.view_request = "timeline";
    }
}

void stats_view::histogram(view_context& ctx, ImVec2 size) {
    slice_stats_cache& c = ctx.state.stats;
    const stats_row* row = c.selected_row();
    const stats_histogram& h = c.hist;
    if (!row || h.bins.empty()) {
        ImGui::TextDisabled("Click a row for the histogram of its durations (run A).");
        return;
    }
    ImGui::Text("%s: %llu durations, %s to %s (log scale); drag on it to measure a range, click to clear", row->name.c_str(),
                static_cast<unsigned long long>(row->count), format_duration(static_cast<double>(row->min)).c_str(),
                format_duration(static_cast<double>(row->max)).c_str());
    if (!c.hist_b.bins.empty()) {
        ImGui::SameLine();
        ImGui::TextColored(ImColor(col_bar).Value, "run A: bars");
        ImGui::SameLine();
        ImGui::TextColored(ImColor(col_run_b).Value, "run B: line");
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float margin = ImGui::GetFontSize();
    const ImVec2 a(p.x + margin, p.y + line), b(p.x + size.x - margin, p.y + std::max(size.y - 3 * line, 4 * line));
    ImGui::InvisibleButton("##hist", ImVec2(size.x, b.y - p.y + line));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(a, b, col_track_bg_a);
    const float w = b.x - a.x;
    if (c.hist_range) {
        const float x0 = hist_x(h, c.hist_range->first, a.x, w), x1 = hist_x(h, c.hist_range->second, a.x, w);
        dl->AddRectFilled(ImVec2(x0, a.y), ImVec2(std::max(x1, x0 + 1), b.y), col_range);
    }
    bars(dl, h, c.hist_b, a, b, line);
    axis(dl, h, a, b);
    dl->AddText(ImVec2(a.x + 4, a.y + 2), IM_COL32(170, 170, 180, 255),
                fmt::format("peak {}", std::max(h.peak, c.hist_b.peak)).c_str());
    mark(dl, hist_x(h, static_cast<double>(row->median), a.x, w), a, b, col_median, "median");
    mark(dl, hist_x(h, static_cast<double>(row->p95), a.x, w), ImVec2(a.x, a.y + line), b, col_p95, "p95");
    const selection& sel = ctx.state.sel;
    if (sel.valid() && !sel.ev.is_instant && sel.file < ctx.doc.files.size()) {
        const loaded_file& f = *ctx.doc.files[sel.file];
        const tm::slice& s = f.model.tracks[sel.ev.track].slices[sel.ev.index];
        if (slice_in_row(f, s, c.group, *row))
            mark(dl, hist_x(h, static_cast<double>(s.duration()), a.x, w), ImVec2(a.x, a.y + 2 * line), b, col_selected,
                 "selected " + format_duration(static_cast<double>(s.duration())));
    }
    // Dragging measures a range of durations; a click without a drag clears it.
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (ImGui::IsItemActivated()) drag_from_ = m.x;
    if (ImGui::IsItemActive() && drag_from_ >= 0 && std::abs(m.x - drag_from_) > 3) {
        const double v0 = hist_value(h, std::min(m.x, drag_from_), a.x, w),
                     v1 = hist_value(h, std::max(m.x, drag_from_), a.x, w);
        c.hist_range = std::pair{v0, v1};
    } else if (ImGui::IsItemDeactivated() && std::abs(m.x - drag_from_) <= 3) {
        c.hist_range.reset();
    }
    if (ImGui::IsItemHovered() && m.y <= b.y) {
        const std::size_t k = h.bin_of(hist_value(h, m.x, a.x, w));
        ImGui::SetTooltip("%s to %s: %llu", format_duration(h.edge(k)).c_str(), format_duration(h.edge(k + 1)).c_str(),
                          static_cast<unsigned long long>(h.bins[k]));
    }
    c.update(ctx.doc, ctx.state.area, ctx.state.align_runs);   // the range's count
    if (c.hist_range) {
        const double n = static_cast<double>(std::max<std::uint64_t>(row->count, 1)),
                     t = static_cast<double>(std::max<std::uint64_t>(row->total, 1));
        ImGui::Text("range %s to %s: %llu of %llu (%.1f %%), %s of %s (%.1f %%)",
                    format_duration(c.hist_range->first).c_str(), format_duration(c.hist_range->second).c_str(),
                    static_cast<unsigned long long>(c.in_range.count), static_cast<unsigned long long>(row->count),
                    100.0 * static_cast<double>(c.in_range.count) / n,
                    format_duration(static_cast<double>(c.in_range.total)).c_str(),
                    format_duration(static_cast<double>(row->total)).c_str(),
                    100.0 * static_cast<double>(c.in_range.total) / t);
        if (const auto* b_durations = c.selected_durations_b(); b_durations && !b_durations->empty()) {
            ImGui::SameLine();
            ImGui::TextColored(ImColor(col_run_b).Value, "· run B: %llu of %zu, %s",
                               static_cast<unsigned long long>(c.in_range_b.count), b_durations->size(),
                               format_duration(static_cast<double>(c.in_range_b.total)).c_str());
        }
    }
}

}   // namespace

std::unique_ptr<view> make_stats_view() { return std::make_unique<stats_view>(); }

}   // namespace pipescope::viewer
