// The timeline's time ruler, drawn from model/ruler.hpp's layout: tick marks, labels as offsets
// from the base (the run's start, or the marked area's start), what the base is, the view's span.
#pragma once

#include "../model/ruler.hpp"
#include "../model/viewport.hpp"

#include <imgui.h>

#include <optional>
#include <string_view>

namespace pipescope::viewer {

struct ruler_area {
    ImVec2 origin;       // top left of the ruler (the label column's left edge)
    float label_w = 0;   // the label column's width: the time area starts at origin.x + label_w
    float width = 0;     // the time area's width
    float height = 0;
};

// A label's width in the current ImGui font (ruler_ticks' text_width).
double imgui_text_width(std::string_view text);

// `base_name` says what the labels count from ("from the mark"); `cursor`: the shared time
// cursor, marked on the ruler.
void draw_time_ruler(ImDrawList* dl, const ruler_area& a, const ruler_layout& r, const char* base_name, const viewport& vp,
                     std::optional<double> cursor);

// The hover readout: a line down from the ruler at the mouse with the time under it as an offset
// from the base, to the pixel.
void draw_time_readout(ImDrawList* dl, const ruler_area& a, float mouse_x, float bottom, const viewport& vp, double base);

}   // namespace pipescope::viewer
