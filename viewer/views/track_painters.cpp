// What the timeline and the compare view share to draw their tracks (track_painters.hpp).
#include "track_painters.hpp"

#include "time_ruler.hpp"   // imgui_text_width

#include "../model/text_fit.hpp"

#include <cfloat>

namespace pipescope::viewer {

void run_header_title(const track_area& a, layout_audit& layout, const char* where, const std::string& title, float tx,
                      float room, float y, float h) {
    const std::string shown = elide_to_width(title, room, imgui_text_width);
    layout.check(where, shown, imgui_text_width(shown), room);
    a.dl->AddText(ImVec2(tx, y + (h - ImGui::GetFontSize()) * 0.5f), IM_COL32(240, 240, 245, 255), shown.c_str());
    const ImVec2 mp = ImGui::GetIO().MousePos;
    if (shown != title && ImGui::IsWindowHovered() && mp.x >= a.x_labels && mp.x < a.x0 + a.width && mp.y >= y &&
        mp.y < y + h)
        ImGui::SetTooltip("%s", title.c_str());
}

void slice_label(ImDrawList* dl, ImFont* font, float size, const std::string& text, float cx0, float cx1, float y0, float y1,
                 ImU32 colour) {
    auto width = [&](std::string_view s) {
        return static_cast<double>(font->CalcTextSizeA(size, FLT_MAX, 0, s.data(), s.data() + s.size()).x);
    };
    const double room = cx1 - cx0;
    const std::string shown = width(text) <= room ? text : elide_to_width(text, room, width);
    if (shown.empty()) return;
    const ImVec4 clip(cx0, y0, cx1, y1);
    dl->AddText(font, size, ImVec2(cx0, y0 + (y1 - y0 - size) * 0.5f), colour, shown.c_str(), nullptr, 0, &clip);
}

void track_painter::counter(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, const lod_params& p, float x0, float top,
                            float bot, const counter_style& style) {
    const auto& v = f.model.tracks[ti].counters;
    if (v.empty()) return;
    const double hi = std::max(1.0, f.counter_max[ti]);
    auto vy = [&](double val) { return bot - static_cast<float>(val / hi) * (bot - top); };
    double before = 0;
    counter_lod(v, p, columns_, &before);
    // The value in effect from prev_x on, once a sample at or before it is known (`have`): drawn as
    // a step up to the next column, then from the last column to the last sample.
    auto step = [&](double from_x, double to_x, double value) {
        dl->AddRectFilled(ImVec2(x0 + static_cast<float>(from_x), vy(value)), ImVec2(x0 + static_cast<float>(to_x), bot),
                          style.fill);
        dl->AddLine(ImVec2(x0 + static_cast<float>(from_x), vy(value)), ImVec2(x0 + static_cast<float>(to_x), vy(value)),
                    style.line);
    };
    double prev_x = 0, prev_v = before;
    bool have = static_cast<double>(v.front().ts) < p.t_left;
    for (const counter_column& c : columns_) {
        const double cx = std::max(c.x, 0.0);
        if (have && style.column_ranges) step(prev_x, cx + 1, prev_v);
        else if (have && cx > prev_x) step(prev_x, cx, prev_v);
        dl->AddRectFilled(ImVec2(x0 + static_cast<float>(cx), vy(c.hi)), ImVec2(x0 + static_cast<float>(cx) + 1, bot),
                          style.fill);
        if (style.column_ranges)
            dl->AddLine(ImVec2(x0 + static_cast<float>(cx) + 0.5f, vy(c.hi)),
                        ImVec2(x0 + static_cast<float>(cx) + 0.5f, vy(c.lo) + 1), style.line);
        prev_x = cx + 1;
        prev_v = c.last;
        have = true;
    }
    if (!have) return;
    const double end_px = std::min<double>(p.width, (static_cast<double>(v.back().ts) - p.t_left) / p.npp);
    if (end_px > prev_x) step(prev_x, end_px, prev_v);
}

}   // namespace pipescope::viewer
