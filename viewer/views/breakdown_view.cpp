// Time breakdown: for each run, one stacked horizontal bar per worker and one for the total —
// work, queue, scheduler, stealing, idle, stall, parked (analysis/breakdown.hpp defines them) — with
// percentages in the bars and a table of absolute times below (as DANBI's Fig. 4, the
// Cheetah-Piper report's Figs. 8-10, GRAMPS' Fig. 5).
#include "palette.hpp"
#include "view.hpp"

#include <imgui_internal.h>   // ImGuiTable: the width its columns need, for the layout audit

#include "../model/breakdown.hpp"
#include "../model/compare.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

namespace pipescope::viewer {
namespace {

constexpr float label_w = 96, bar_h = 22, total_h = 26, header_h = 24;

// Category colours: idle and parked as in the timeline, stealing as the steal instants, stall
// black as in DANBI's figures, untraced a hatched slate.
constexpr unsigned category_rgb[time_category_count] = {0x4C9F70, 0xE0A040, 0x9C7FD0, 0x5FD3F3,
                                                        0xC8C8C8, 0x000000, 0x5E5E5E, 0x363B47};
constexpr int untraced_cat = static_cast<int>(time_category::untraced);

// Diagonal hatching inside [a, b] (the untraced category): a few lines per segment, clipped.
void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
    dl->PushClipRect(a, b, true);
    const float h = b.y - a.y;
    for (float x = a.x - h; x < b.x; x += 7) dl->AddLine(ImVec2(x, b.y), ImVec2(x + h, a.y), IM_COL32(95, 102, 118, 255));
    dl->PopClipRect();
}
inline ImU32 category_colour(int c) { return rgb(category_rgb[c]); }

std::string percent(double f) { return analysis::numbers::percent(f, f >= 0.0995 ? 0 : 1); }

class breakdown_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    document_key key_;
    std::vector<run_breakdown> runs_;
    bool proportional_ = false;   // bar length proportional to time (across runs)
    std::uint64_t max_span_ = 1, max_total_ = 1;

    void legend();
    // One stacked bar; returns the category under the mouse, or -1.
    int bar(ImDrawList* dl, ImVec2 p, float full_w, float h, const time_split& t, double length);
    void table(view_context& ctx, std::size_t ri, const run_breakdown& b);
};

void breakdown_view::legend() {
    for (int c = 0; c < time_category_count; ++c) {
        if (c) ImGui::SameLine(0, 14);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float h = ImGui::GetTextLineHeight();
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + h + 4, p.y + h), category_colour(c), 2);
        if (c == untraced_cat) hatch(dl, ImVec2(p.x, p.y + 2), ImVec2(p.x + h + 4, p.y + h));
        dl->AddRect(ImVec2(p.x, p.y + 2), ImVec2(p.x + h + 4, p.y + h), IM_COL32(150, 150, 160, 255), 2);
        ImGui::Dummy(ImVec2(h + 4, h));
        ImGui::SameLine(0, 5);
        ImGui::TextUnformatted(to_string(static_cast<time_category>(c)));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", describe(static_cast<time_category>(c)));
    }
}

int breakdown_view::bar(ImDrawList* dl, ImVec2 p, float full_w, float h, const time_split& t, double length) {
    const float w = std::max(2.f, static_cast<float>(full_w * length));
    dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), IM_COL32(70, 72, 80, 255));
    const ImVec2 mp = ImGui::GetIO().MousePos;
    int hit = -1;
    if (t.span == 0) return hit;
    double acc = 0;
    ImFont* font = ImGui::GetFont();
    const float fs = ImGui::GetFontSize();
    for (int c = 0; c < time_category_count; ++c) {
        const double f = static_cast<double>(t.ns[c]) / static_cast<double>(t.span);
        if (f <= 0) continue;
        const float x0 = p.x + static_cast<float>(acc * w), x1 = p.x + static_cast<float>((acc + f) * w);
        acc += f;
        const ImU32 col = category_colour(c);
        dl->AddRectFilled(ImVec2(x0, p.y), ImVec2(std::max(x1, x0 + 1), p.y + h), col);
        if (c == untraced_cat) hatch(dl, ImVec2(x0, p.y), ImVec2(std::max(x1, x0 + 1), p.y + h));
        if (x1 - x0 > 3) dl->AddLine(ImVec2(x0, p.y), ImVec2(x0, p.y + h), IM_COL32(20, 20, 24, 160));
        const std::string s = percent(f);
        const float tw = ImGui::CalcTextSize(s.c_str()).x;
        if (x1 - x0 > tw + 8) {
            const ImVec2 tp((x0 + x1 - tw) * 0.5f, p.y + (h - fs) * 0.5f);
            if (c == untraced_cat) dl->AddRectFilled(ImVec2(tp.x - 3, tp.y), ImVec2(tp.x + tw + 3, tp.y + fs), col);
            dl->AddText(font, fs, tp,
                        c == static_cast<int>(time_category::stall) || c == untraced_cat ? IM_COL32(230, 230, 235, 255)
                                                                                         : text_colour_on(col),
                        s.c_str());
        }
        if (mp.y >= p.y && mp.y < p.y + h && mp.x >= x0 && mp.x < std::max(x1, x0 + 1)) hit = c;
    }
    dl->AddRect(ImVec2(p.x - 0.5f, p.y - 0.5f), ImVec2(p.x + w + 0.5f, p.y + h + 0.5f), IM_COL32(150, 150, 160, 200));
    return hit;
}

void breakdown_view::table(view_context& ctx, std::size_t ri, const run_breakdown& b) {
    // Columns keep the width of their contents (never squashed to a character): a table wider than the
    // view scrolls sideways, in a box as tall as its rows.
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter |
                                  ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
    const float rows = static_cast<float>(b.workers.size() + 2);   // header, workers, total
    const float height =
        rows * (ImGui::GetTextLineHeight() + ImGui::GetStyle().CellPadding.y * 2) + ImGui::GetStyle().ScrollbarSize + 4;
    ImGui::PushID(static_cast<int>(ri));
    if (!ImGui::BeginTable("##breakdown", 1 + time_category_count + 3, flags, ImVec2(0, height))) {
        ImGui::PopID();
        return;
    }
    ImGui::TableSetupColumn("worker");
    for (int c = 0; c < time_category_count; ++c) ImGui::TableSetupColumn(to_string(static_cast<time_category>(c)));
    ImGui::TableSetupColumn("nodes");
    ImGui::TableSetupColumn("steals");
    ImGui::TableSetupColumn("failed steals");
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (int c = 0; c < 1 + time_category_count + 3; ++c) {
        ImGui::TableSetColumnIndex(c);
        ImGui::TableHeader(ImGui::TableGetColumnName(c));
        if (ImGui::IsItemHovered()) {
            if (c >= 1 && c <= time_category_count) ImGui::SetTooltip("%s", describe(static_cast<time_category>(c - 1)));
            else if (c == time_category_count + 3)
                ImGui::SetTooltip("failed steal attempts (the idle slices' failed_steals)");
        }
    }
    if (ctx.mono) ImGui::PushFont(ctx.mono);
    auto right = [&](const char* s) {
        ImGui::TableNextColumn();
        const float w = ImGui::CalcTextSize(s).x, avail = ImGui::GetContentRegionAvail().x;
        if (avail > w) ImGui::SetCursorPosX(ImGui::GetCursorPosX() + avail - w);
        ImGui::TextUnformatted(s);
    };
    // A category's cell: its time and its share, each padded to the widest of its column in this
    // table (monospaced), so that they line up without blank room (a fixed 9 + 8 characters made the
    // table scroll sideways with room to spare: issue 37).
    auto time_of = [](const worker_breakdown& w, int c) { return format_duration(static_cast<double>(w.time.ns[c]), 2); };
    auto share_of = [](const worker_breakdown& w, int c) {
        return pipescope::analysis::numbers::percent(w.time.fraction(static_cast<time_category>(c)), 1);
    };
    auto chars = [](const std::string& s) {   // code points: "µ" is one character in the mono font
        return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
    };
    std::array<std::size_t, time_category_count> time_w{}, share_w{};
    auto widen = [&](const worker_breakdown& w) {
        for (int c = 0; c < time_category_count; ++c) {
            time_w[c] = std::max(time_w[c], chars(time_of(w, c)));
            share_w[c] = std::max(share_w[c], chars(share_of(w, c)));
        }
    };
    for (const auto& w : b.workers) widen(w);
    widen(b.total);
    auto row = [&](const worker_breakdown& w) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(w.name.c_str());
        for (int c = 0; c < time_category_count; ++c) {
            const std::string t = time_of(w, c), sh = share_of(w, c);
            right(
                (std::string(time_w[c] - chars(t), ' ') + t + "  " + std::string(share_w[c] - chars(sh), ' ') + sh).c_str());
        }
        for (std::uint64_t v : {w.nodes, w.steals, w.failed_steals}) {
            right(pipescope::analysis::numbers::count(v).c_str());
        }
    };
    for (const auto& w : b.workers) row(w);
    row(b.total);
    if (ctx.mono) ImGui::PopFont();
    // Audited: a table wider than its view scrolls sideways (fine where the view is narrow, not at
    // 1600 px beside the details panel: viewer.script.breakdown-fit).
    const ImGuiTable* t = ImGui::GetCurrentTable();
    ctx.state.layout.check("breakdown table", b.title, t->ColumnsAutoFitWidth, t->OuterRect.GetWidth());
    ImGui::EndTable();
    ImGui::PopID();
}

void breakdown_view::draw(view_context& ctx) {
    const document& doc = ctx.doc;
    if (!key_.matches(doc)) {
        key_ = document_key::of(doc);
        runs_.clear();
        max_span_ = max_total_ = 1;
        for (const auto& rr : doc.runs) {
            runs_.push_back(compute_breakdown(*doc.files[rr.file], rr));
            max_span_ = std::max(max_span_, runs_.back().span);
            max_total_ = std::max(max_total_, runs_.back().total.time.span);
        }
    }
    legend();
    ImGui::SameLine(0, 30);
    ImGui::Checkbox("Bars to scale (time)", &proportional_);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Off: every bar is 100 %% of its time.\nOn: worker bars are as long as their run's makespan and total "
            "bars as long as workers x makespan, on one scale for all runs (aggregate time, as in the "
            "Cheetah-Piper report).");

    ImGui::BeginChild("##breakdown_runs", ImVec2(0, 0), false);
    const float avail = ImGui::GetContentRegionAvail().x;
    // Room right of the bars for the longest label they carry ("15.91 ms  (2 x 7.95 ms)").
    const float right_w = ImGui::CalcTextSize("000.00 ms  (00 x 000.00 ms)").x + 16;
    const float full_w = std::max(80.f, avail - label_w - right_w);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    int hit_cat = -1;
    const time_split* hit_split = nullptr;
    const char* hit_name = nullptr;
    for (std::size_t ri = 0; ri < runs_.size(); ++ri) {
        const run_breakdown& b = runs_[ri];
        // The header: the title and makespan, and the stall note right-aligned when both fit on one
        // line, else on a second line (never drawn over each other), clipped to the view.
        const ImVec2 hp = ImGui::GetCursorScreenPos();
        std::string h = b.title + "    makespan " + format_duration(static_cast<double>(b.span), 2) + "  ·  " +
                        std::to_string(b.workers.size()) + " workers";
        const char* note = b.stall_derived ? "stall: idle while an iteration waited or the loop was throttled (line tracks)"
                                           : "stall: not derivable (the run has no line tracks), left 0";
        const float hw = ImGui::CalcTextSize(h.c_str()).x, nw = ImGui::CalcTextSize(note).x;
        const bool one_line = 6 + hw + 24 + nw + 8 <= avail;
        const float line_h = header_h, total_header = one_line ? line_h : 2 * line_h;
        const float ty = (line_h - ImGui::GetFontSize()) * 0.5f;
        dl->AddRectFilled(hp, ImVec2(hp.x + avail, hp.y + total_header), IM_COL32(52, 56, 70, 255));
        dl->PushClipRect(hp, ImVec2(hp.x + avail, hp.y + total_header), true);
        dl->AddText(ImVec2(hp.x + 6, hp.y + ty), IM_COL32(240, 240, 245, 255), h.c_str());
        const ImVec2 np = one_line ? ImVec2(hp.x + avail - nw - 8, hp.y + ty) : ImVec2(hp.x + 6, hp.y + line_h + ty);
        dl->AddText(np, IM_COL32(160, 160, 175, 255), note);
        dl->PopClipRect();
        ImGui::Dummy(ImVec2(avail, total_header + 4));

        auto one = [&](const worker_breakdown& w, bool total) {
            const float bh = total ? total_h : bar_h;
            const ImVec2 p = ImGui::GetCursorScreenPos();
            const float fs = ImGui::GetFontSize();
            dl->AddText(ImVec2(p.x + 8, p.y + (bh - fs) * 0.5f),
                        total ? IM_COL32(240, 240, 245, 255) : IM_COL32(200, 200, 208, 255), w.name.c_str());
            const double len = !proportional_ ? 1.0
                               : total        ? static_cast<double>(w.time.span) / static_cast<double>(max_total_)
                                              : static_cast<double>(w.time.span) / static_cast<double>(max_span_);
            const int c = bar(dl, ImVec2(p.x + label_w, p.y), full_w, bh, w.time, len);
            if (c >= 0) {
                hit_cat = c;
                hit_split = &w.time;
                hit_name = w.name.c_str();
            }
            std::string r = format_duration(static_cast<double>(w.time.span), 2);
            if (total)
                r +=
                    "  (" + std::to_string(b.workers.size()) + " x " + format_duration(static_cast<double>(b.span), 2) + ")";
            // Wall-clock time the worker was runnable but waiting for a CPU (inside the bar's shares).
            if (w.descheduled_ns) r += "  descheduled " + pipescope::analysis::numbers::percent(w.descheduled_fraction(), 1);
            const float bar_end = p.x + label_w + std::max(2.f, static_cast<float>(full_w * len));
            dl->AddText(ImVec2(bar_end + 8, p.y + (bh - fs) * 0.5f), IM_COL32(170, 170, 180, 255), r.c_str());
            ImGui::Dummy(ImVec2(avail, bh + 3));
        };
        for (const auto& w : b.workers) one(w, false);
        {
            const ImVec2 p = ImGui::GetCursorScreenPos();
            dl->AddLine(ImVec2(p.x + label_w, p.y), ImVec2(p.x + label_w + full_w, p.y), IM_COL32(110, 110, 120, 255));
            ImGui::Dummy(ImVec2(avail, 3));
        }
        one(b.total, true);
        ImGui::Dummy(ImVec2(avail, 4));
        table(ctx, ri, b);
        ImGui::Dummy(ImVec2(avail, 16));
    }
    if (runs_.empty()) ImGui::TextDisabled("no runs: open a trace");
    if (hit_cat >= 0 && hit_split) {
        const auto c = static_cast<time_category>(hit_cat);
        ImGui::BeginTooltip();
        ImGui::TextColored(ImColor(category_rgb[hit_cat] == 0 || hit_cat == untraced_cat ? IM_COL32(230, 230, 235, 255)
                                                                                         : category_colour(hit_cat)),
                           "%s", to_string(c));
        ImGui::TextDisabled("%s", hit_name);
        ImGui::Text("%s  (%s)", format_duration(static_cast<double>((*hit_split)[c]), 3).c_str(),
                    percent(hit_split->fraction(c)).c_str());
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
        ImGui::TextUnformatted(describe(c));
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
    ImGui::EndChild();
}

}   // namespace

std::unique_ptr<view> make_breakdown_view() { return std::make_unique<breakdown_view>(); }

}   // namespace pipescope::viewer
