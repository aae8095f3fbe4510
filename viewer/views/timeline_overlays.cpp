#include "timeline_overlays.hpp"

#include "palette.hpp"

#include "../model/lod.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace pipescope::viewer {

void flow_arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c, float thick, bool outline) {
    const float dx = b.x - a.x, dy = b.y - a.y;
    if (std::sqrt(dx * dx + dy * dy) < 1) return;
    const ImVec2 cp1(a.x + std::max(12.f, std::fabs(dx) * 0.3f), a.y), cp2(b.x - std::max(12.f, std::fabs(dx) * 0.3f), b.y);
    const float ux = b.x - cp2.x, uy = b.y - cp2.y, ul = std::max(1e-3f, std::sqrt(ux * ux + uy * uy));
    const float nx = ux / ul, ny = uy / ul;
    const float head_len = 6 + 2.5f * thick, head_half = 3 + 1.2f * thick;
    const ImVec2 back(b.x - nx * head_len * 0.8f, b.y - ny * head_len * 0.8f);   // the curve ends inside the head
    const ImVec2 h1(b.x - nx * head_len - ny * head_half, b.y - ny * head_len + nx * head_half);
    const ImVec2 h2(b.x - nx * head_len + ny * head_half, b.y - ny * head_len - nx * head_half);
    if (outline) {
        const ImU32 dark = IM_COL32(0, 0, 0, 200);
        dl->AddBezierCubic(a, cp1, cp2, back, dark, thick + 2.5f, 20);
        dl->AddTriangle(b, h1, h2, dark, 2.5f);
    }
    dl->AddBezierCubic(a, cp1, cp2, back, c, thick, 20);
    dl->AddTriangleFilled(b, h1, h2, c);
    dl->AddCircleFilled(a, 1.5f + thick, c);
}

std::optional<area_selection> area_between(const std::vector<track_region>& regions, double t_a, double t_b, float y_a,
                                           float y_b) {
    area_selection a;
    a.t0 = std::min(t_a, t_b);
    a.t1 = std::max(t_a, t_b);
    const float lo = std::min(y_a, y_b), hi = std::max(y_a, y_b);
    for (const track_region& r : regions)
        if (r.y1 > lo && r.y0 <= hi) a.tracks.push_back(r.track);
    std::sort(a.tracks.begin(), a.tracks.end());
    a.tracks.erase(std::unique(a.tracks.begin(), a.tracks.end()), a.tracks.end());
    if (a.tracks.empty()) return std::nullopt;
    return a;
}

void draw_area(const viewport& vp, ImDrawList* dl, const std::vector<track_region>& regions, const area_selection& a,
               float x0, float width, float clip_y0, float clip_y1, ruler_area ruler) {
    const float ax0 = x0 + static_cast<float>(std::max(-2.0, vp.to_px(a.t0)));
    const float ax1 = x0 + static_cast<float>(std::min(width + 2.0, vp.to_px(a.t1)));
    if (ax1 < x0 || ax0 > x0 + width) return;
    const ImU32 fill = IM_COL32(110, 170, 255, 60), edge = IM_COL32(140, 190, 255, 220);
    dl->PushClipRect(ImVec2(x0, clip_y0), ImVec2(x0 + width, clip_y1), true);
    for (const track_region& r : regions)
        if (std::binary_search(a.tracks.begin(), a.tracks.end(), r.track))
            dl->AddRectFilled(ImVec2(ax0, r.y0), ImVec2(std::max(ax1, ax0 + 1), r.y1), fill);
    dl->AddLine(ImVec2(ax0, clip_y0), ImVec2(ax0, clip_y1), edge, 1.5f);
    dl->AddLine(ImVec2(ax1, clip_y0), ImVec2(ax1, clip_y1), edge, 1.5f);
    dl->PopClipRect();
    // On the ruler: a bracket with the range's length (measuring), inside the time area.
    ImDrawList* fg = ImGui::GetForegroundDrawList();
    const float by = ruler.origin.y + ruler.height - 6;
    fg->AddLine(ImVec2(std::max(ax0, x0), by), ImVec2(std::min(ax1, x0 + width), by), edge, 2.0f);
    const std::string len = format_duration(a.length(), 3);
    const float w = ImGui::CalcTextSize(len.c_str()).x + 8;
    const float lx = std::clamp((ax0 + ax1 - w) * 0.5f, x0, x0 + width - w);
    fg->AddRectFilled(ImVec2(lx, by - 16), ImVec2(lx + w, by - 1), IM_COL32(40, 70, 120, 255), 3);
    fg->AddText(ImVec2(lx + 4, by - 16), IM_COL32(255, 255, 255, 255), len.c_str());
}

// Within 3 px of the mouse, on the track under it: how many events were lost there, where and when.
bool lost_events_tooltip(const view_context& ctx, const std::vector<track_region>& regions, ImVec2 mp, float x0) {
    const viewport& vp = ctx.state.vp;
    for (const track_region& r : regions) {
        if (mp.y < r.y0 || mp.y >= r.y1) continue;
        const loaded_file& f = *ctx.doc.files[r.track.file];
        const double off = display_offset_of(ctx.doc, r.track.file, r.track.track, ctx.state.align_runs);
        const lost_events lost = lost_events_near(f, r.track.track, vp.to_ns(mp.x - x0) + off, 3 * vp.npp);
        if (!lost.markers) return false;
        ImGui::BeginTooltip();
        ImGui::TextColored(ImColor(col_events_lost), "%llu events lost", static_cast<unsigned long long>(lost.dropped));
        ImGui::Text("on %s at %s", f.model.tracks[r.track.track].name.c_str(),
                    format_duration(static_cast<double>(lost.first_ts) - off, 3).c_str());
        if (lost.markers > 1)
            ImGui::TextDisabled("%llu markers within 3 px: zoom in to tell them apart",
                                static_cast<unsigned long long>(lost.markers));
        ImGui::TextDisabled("the recorder's buffer ran dry: the timeline misses what this worker did then,\n"
                            "so counts near here (nodes, steals, iterations) are incomplete");
        ImGui::EndTooltip();
        return true;
    }
    return false;
}

}   // namespace pipescope::viewer
