// Scaling: the speedup-vs-P plot of a sweep opened with `pipescope-viewer DIR` (`pipescope scale`,
// docs/virtual.md): one line per policy, the ideal line, log2 axes as in the CLI's plot
// (model/scaling.hpp). Hovering a point shows its row's figures; clicking it selects that run's
// first node and shows it in the timeline.
#include "palette.hpp"
#include "view.hpp"

#include "../model/scaling.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace pipescope::viewer {
namespace {

namespace numbers = pipescope::analysis::numbers;

inline constexpr unsigned policy_palette[] = {0x4E9AD8, 0xF28E2B, 0x59C17F, 0xD07AB1, 0xEDC948, 0x76B7B2};
inline constexpr ImU32 col_axis = IM_COL32(200, 200, 210, 255), col_grid = IM_COL32(60, 62, 70, 255),
                       col_ideal = IM_COL32(150, 150, 160, 255), col_text = IM_COL32(230, 230, 235, 255);

std::string tick_label(double v) { return v >= 1 ? numbers::count(static_cast<std::uint64_t>(v)) : numbers::value(v); }

class scaling_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    static void show_run(view_context& ctx, const sweep& s, std::size_t row);
};

// The row's run in the timeline: its first node selected, the run framed.
void scaling_view::show_run(view_context& ctx, const sweep& s, std::size_t row) {
    const document& doc = ctx.doc;
    const std::uint32_t run = run_of_row(doc, s, row);
    if (run == tm::no_index) return;   // its trace did not load (the banner says why)
    view_state& st = ctx.state;
    const selection first = select_node(doc, 0, 0, run);
    if (first.valid()) st.select(doc, first);
    const run_ref& rr = doc.runs[run];
    const double off = display_offset(doc, rr, st.align_runs);
    st.frame_request = std::pair{static_cast<double>(rr.start) - off, static_cast<double>(rr.end) - off};
    st.scroll_to_selection = first.valid();
    st.view_request = "timeline";
}

void scaling_view::draw(view_context& ctx) {
    if (!ctx.state.scaling) {
        ImGui::TextDisabled("no sweep: open the directory `pipescope scale` wrote (or its scale.json)");
        return;
    }
    const sweep& s = *ctx.state.scaling;
    const float fs = ImGui::GetFontSize();
    // Wrapped, not cut off, in a narrow window.
    ImGui::TextWrapped("%s · size %s · serial %s · speedup over serial on virtual workers", s.data.workload.c_str(),
                       s.data.size.c_str(), numbers::duration(s.data.serial_ns).c_str());
    for (const auto& r : s.data.refused) {
        ImGui::TextColored(ImVec4(0.95f, 0.7f, 0.3f, 1), "%s refused:", r.policy.c_str());
        ImGui::SameLine();
        ImGui::TextWrapped("%s", r.reason.c_str());
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("hover a point for its figures; click it to see the run in the timeline");
    ImGui::PopStyleColor();

    const std::vector<std::string> policies = s.data.policies();
    float legend_w = 0;
    for (const std::string& p : policies) legend_w = std::max(legend_w, ImGui::CalcTextSize(p.c_str()).x);
    legend_w = std::max(legend_w, ImGui::CalcTextSize("ideal (P)").x) + 3 * fs;
    const ImVec2 origin = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
    const float left = origin.x + 4 * fs, top = origin.y + 1.8f * fs;
    const plot_rect r{left, top, std::max(left + 4 * fs, origin.x + avail.x - legend_w - 2 * fs),
                      std::max(top + 4 * fs, origin.y + avail.y - 3.5f * fs)};
    ImDrawList* dl = ImGui::GetWindowDrawList();

    for (double p : s.axes.x_ticks()) {
        const float x = plot_x(s, r, p);
        dl->AddLine(ImVec2(x, r.y0), ImVec2(x, r.y1), col_grid);
        const std::string t = tick_label(p);
        dl->AddText(ImVec2(x - ImGui::CalcTextSize(t.c_str()).x * 0.5f, r.y1 + 0.3f * fs), col_text, t.c_str());
    }
    for (double v : s.axes.y_ticks()) {
        const float y = plot_y(s, r, v);
        dl->AddLine(ImVec2(r.x0, y), ImVec2(r.x1, y), col_grid);
        const std::string t = tick_label(v);
        dl->AddText(ImVec2(r.x0 - ImGui::CalcTextSize(t.c_str()).x - 0.4f * fs, y - 0.5f * fs), col_text, t.c_str());
    }
    dl->AddLine(ImVec2(r.x0, r.y1), ImVec2(r.x1, r.y1), col_axis, 1.5f);
    dl->AddLine(ImVec2(r.x0, r.y0), ImVec2(r.x0, r.y1), col_axis, 1.5f);
    const char* x_title = "virtual workers P (log2)";
    dl->AddText(ImVec2((r.x0 + r.x1 - ImGui::CalcTextSize(x_title).x) * 0.5f, r.y1 + 1.6f * fs), col_text, x_title);
    dl->AddText(ImVec2(origin.x, origin.y - 0.2f * fs), col_text, "speedup (log2)");
    // The ideal line, speedup = P: the diagonal of the log2 axes, dashed.
    const ImVec2 i0(plot_x(s, r, s.axes.x_lo), plot_y(s, r, s.axes.x_lo)),
        i1(plot_x(s, r, s.axes.x_hi), plot_y(s, r, s.axes.x_hi));
    for (int k = 0; k <= 40; k += 2) {   // 21 dashes: the first and the last at the ends
        const float a = static_cast<float>(k) / 41.f, b = static_cast<float>(k + 1) / 41.f;
        dl->AddLine(ImVec2(i0.x + (i1.x - i0.x) * a, i0.y + (i1.y - i0.y) * a),
                    ImVec2(i0.x + (i1.x - i0.x) * b, i0.y + (i1.y - i0.y) * b), col_ideal, 1.5f);
    }

    const std::vector<plot_point> points = plot_points(s, r);
    ctx.state.scaling_points = points;
    ctx.state.scaling_hover = no_row;
    auto colour_of = [&](const std::string& policy) {
        const auto k = static_cast<std::size_t>(std::find(policies.begin(), policies.end(), policy) - policies.begin());
        return rgb(policy_palette[k % std::size(policy_palette)]);
    };
    for (std::size_t k = 0; k < policies.size(); ++k) {
        std::vector<ImVec2> line;
        for (const plot_point& p : points)
            if (s.data.rows[p.row].policy == policies[k]) line.push_back(ImVec2(p.x, p.y));
        const ImU32 c = colour_of(policies[k]);
        dl->AddPolyline(line.data(), static_cast<int>(line.size()), c, 0, 2.5f);
        for (const ImVec2& p : line) dl->AddCircleFilled(p, 0.3f * fs, c);
        // The legend, right of the plot.
        const float ly = r.y0 + static_cast<float>(k) * 1.4f * fs;
        dl->AddLine(ImVec2(r.x1 + fs, ly + 0.5f * fs), ImVec2(r.x1 + 2.5f * fs, ly + 0.5f * fs), c, 2.5f);
        dl->AddText(ImVec2(r.x1 + 3 * fs, ly), col_text, policies[k].c_str());
        ctx.state.layout.check("scaling legend", policies[k], ImGui::CalcTextSize(policies[k].c_str()).x,
                               origin.x + avail.x - (r.x1 + 3 * fs));
    }
    const float ly = r.y0 + static_cast<float>(policies.size()) * 1.4f * fs;
    dl->AddLine(ImVec2(r.x1 + fs, ly + 0.5f * fs), ImVec2(r.x1 + 2.5f * fs, ly + 0.5f * fs), col_ideal, 1.5f);
    dl->AddText(ImVec2(r.x1 + 3 * fs, ly), col_text, "ideal (P)");

    // Hover: the row's figures; click: its run in the timeline.
    ImGui::InvisibleButton("##plot", ImVec2(std::max(1.f, avail.x), std::max(1.f, avail.y)));
    if (!ImGui::IsItemHovered()) return;
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const std::size_t row = row_at(points, mp.x, mp.y, 0.8f * fs);
    if (row == no_row) return;
    ctx.state.scaling_hover = row;
    const analysis::scale_row& x = s.data.rows[row];
    dl->AddCircle(ImVec2(plot_x(s, r, static_cast<double>(x.workers)), plot_y(s, r, x.speedup)), 0.6f * fs, col_text, 0, 2);
    ImGui::BeginTooltip();
    ImGui::Text("%s · P = %llu (virtual)", x.policy.c_str(), static_cast<unsigned long long>(x.workers));
    ImGui::Text("makespan   %s", numbers::duration(x.makespan_ns).c_str());
    ImGui::Text("speedup    %s   efficiency %s", numbers::ratio(x.speedup, 2).c_str(),
                numbers::percent(x.efficiency).c_str());
    ImGui::Text("idle       %s   steals %s", numbers::percent(x.idle_share).c_str(), numbers::count(x.steals).c_str());
    if (x.peak_live) ImGui::Text("peak live  %s", numbers::value(*x.peak_live).c_str());
    if (x.peak_footprint) ImGui::Text("footprint  %s", numbers::bytes(*x.peak_footprint).c_str());
    ImGui::TextDisabled("%s — click to show it in the timeline", x.trace.c_str());
    ImGui::EndTooltip();
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) show_run(ctx, s, row);
}

}   // namespace

std::unique_ptr<view> make_scaling_view() { return std::make_unique<scaling_view>(); }

}   // namespace pipescope::viewer
