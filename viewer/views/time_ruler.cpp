#include "time_ruler.hpp"

#include "palette.hpp"

#include <string>

namespace pipescope::viewer {

double imgui_text_width(std::string_view text) {
    return static_cast<double>(ImGui::CalcTextSize(text.data(), text.data() + text.size()).x);
}

void draw_time_ruler(ImDrawList* dl, const ruler_area& a, const ruler_layout& r, const char* base_name, const viewport& vp,
                     std::optional<double> cursor) {
    const ImVec2 o = a.origin;
    const float x0 = o.x + a.label_w, bottom = o.y + a.height;
    dl->AddRectFilled(o, ImVec2(x0 + a.width, bottom), IM_COL32(24, 25, 29, 255));
    for (const ruler_tick& t : r.ticks) {
        const float x = x0 + static_cast<float>(t.x);
        dl->AddLine(ImVec2(x, bottom - (t.major ? 12 : 5)), ImVec2(x, bottom), IM_COL32(170, 170, 180, 255));
        if (t.label.empty()) continue;
        // The anchor (zoomed far in) says its full offset from the base: brighter, the others count from it.
        const ImU32 c = t.anchor ? IM_COL32(255, 236, 170, 255) : IM_COL32(220, 220, 225, 255);
        dl->AddText(ImVec2(x0 + static_cast<float>(t.label_x), o.y + 3), c, t.label.c_str());
    }
    // What the labels count from, and the view's span, in the label column.
    dl->AddText(ImVec2(o.x + 6, o.y + 3), IM_COL32(150, 150, 160, 255), base_name);
    const std::string span = "view " + format_duration(vp.width * vp.npp);
    dl->AddText(ImVec2(o.x + 6, o.y + 3 + ImGui::GetFontSize()), IM_COL32(120, 120, 130, 255), span.c_str());
    dl->AddLine(ImVec2(o.x, bottom - 0.5f), ImVec2(x0 + a.width, bottom - 0.5f), IM_COL32(80, 80, 90, 255));
    // The shared time cursor (the DAG's replay time): a marker on the ruler, as in Perfetto.
    if (cursor) {
        const double px = vp.to_px(*cursor);
        if (px >= 0 && px <= a.width) {
            const float x = x0 + static_cast<float>(px);
            dl->AddTriangleFilled(ImVec2(x - 6, bottom - 12), ImVec2(x + 6, bottom - 12), ImVec2(x, bottom),
                                  col_time_cursor);
        }
    }
}

void draw_time_readout(ImDrawList* dl, const ruler_area& a, float mouse_x, float bottom, const viewport& vp, double base) {
    const float x0 = a.origin.x + a.label_w, ruler_bottom = a.origin.y + a.height;
    dl->AddLine(ImVec2(mouse_x, a.origin.y), ImVec2(mouse_x, bottom), IM_COL32(255, 255, 255, 60));
    const std::string text = cursor_readout(vp.to_ns(mouse_x - x0), base, vp.npp);
    const float w = ImGui::CalcTextSize(text.c_str()).x + 8;
    // Right of the line, or left of it near the right edge: never cut off.
    const float left = mouse_x + 2 + w > x0 + a.width ? mouse_x - 2 - w : mouse_x + 2;
    const float h = ImGui::GetFontSize();
    dl->AddRectFilled(ImVec2(left, ruler_bottom - h), ImVec2(left + w, ruler_bottom), IM_COL32(60, 60, 70, 255));
    dl->AddText(ImVec2(left + 4, ruler_bottom - h), IM_COL32(255, 255, 255, 255), text.c_str());
}

}   // namespace pipescope::viewer
