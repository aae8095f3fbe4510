// What the timeline and the compare view share to draw their tracks: the track area, a run header's
// title and extent bar, and the track painters — a row of slices merged to the pixel
// (model/lod.hpp) and a counter drawn as a step graph. Each view keeps one track_painter, which
// holds the level-of-detail buffers reused from track to track and frame to frame.
#pragma once

#include "palette.hpp"

#include "../model/document.hpp"
#include "../model/layout_audit.hpp"
#include "../model/lod.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace pipescope::viewer {

// A view's track area this frame, in its child window: the window's draw list, the visible band
// [clip_y0, clip_y1), the label column from x_labels, and the time area [x0, x0 + width).
struct track_area {
    ImDrawList* dl;
    float clip_y0, clip_y1, x_labels, x0, width;

    // The current window's, with a label column label_w px wide.
    static track_area of_window(float label_w, float width) {
        const ImVec2 wpos = ImGui::GetWindowPos();
        return {ImGui::GetWindowDrawList(), wpos.y, wpos.y + ImGui::GetWindowHeight(), wpos.x, wpos.x + label_w, width};
    }
    bool visible(float a, float b) const { return b >= clip_y0 && a <= clip_y1; }
    // The mouse is over the time area (also while another item is active: a drag that began there).
    bool hovered() const {
        const ImVec2 mp = ImGui::GetIO().MousePos;
        return ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) && mp.x >= x0 && mp.x < x0 + width &&
               mp.y >= clip_y0 && mp.y < clip_y1;
    }
};

// A run header's title at (tx, y), in its row from y, h px high, across the area: elided with "…"
// to `room` (audited as `where`), and whole in a tooltip while the mouse is over the row.
void run_header_title(const track_area& a, layout_audit& layout, const char* where, const std::string& title, float tx,
                      float room, float y, float h);

// Whether a track has anything to draw: a slice, an instant, or a counter sample other than 0. A
// stage-graph run records a `control` line and a `live iterations` counter it never uses; drawn,
// they were an empty row and a flat "max 0" (issue 37).
inline bool track_has_content(const tm::track& t) {
    return !t.slices.empty() || !t.instants.empty() ||
           std::any_of(t.counters.begin(), t.counters.end(), [](const auto& c) { return c.value != 0; });
}

// A slice's name inside its block [cx0, cx1) x [y0, y1), in `font` at `size`: elided with "…" when
// it does not fit ("stag…", not a bare "stag"), nothing when not even "…" does.
void slice_label(ImDrawList* dl, ImFont* font, float size, const std::string& text, float cx0, float cx1, float y0, float y1,
                 ImU32 colour);

// The bar along the bottom of a run's header row (y, h px high): where the run lies on the axis,
// from rx0 to rx1, cut to the time area.
inline void run_extent_bar(const track_area& a, float y, float h, float rx0, float rx1) {
    a.dl->AddRectFilled(ImVec2(std::max(rx0, a.x0), y + h - 3), ImVec2(std::min(rx1, a.x0 + a.width), y + h),
                        IM_COL32(120, 150, 220, 255));
}

// How a counter is painted. The timeline's tall counter tracks draw each pixel column's range of
// values as a line and carry the step before a column through that column; the compare view's short
// bands draw only the fill, the step stopping where the column starts.
struct counter_style {
    ImU32 fill, line;
    bool column_ranges;
};

class track_painter {
public:
    // Fills one row of slices between y0 and y1: the row merged to the pixel, each block in its
    // colour key's colour, at least a pixel wide, cut 2 px outside the time area [x0, x0 + p.width].
    // `each(block, bx0, bx1, colour)` runs right after a block's fill, so that what it adds (the
    // timeline's separators and labels) lies over its own block and under the next one.
    template <class Each>
    void slice_row(ImDrawList* dl, const loaded_file& f, const row_view& row, const lod_params& p, float x0, float y0,
                   float y1, Each&& each) {
        lod_merge(row, f.key_of_string.data(), p, blocks_);
        for (const lod_block& b : blocks_) {
            const float bx0 = x0 + static_cast<float>(std::max(b.x0, -2.0));
            const float bx1 = x0 + static_cast<float>(std::min(std::max(b.x1, b.x0 + 1.0), p.width + 2.0));
            const ImU32 c = key_colour(b.key);
            dl->AddRectFilled(ImVec2(bx0, y0), ImVec2(bx1, y1), c);
            each(b, bx0, bx1, c);
        }
    }
    void slice_row(ImDrawList* dl, const loaded_file& f, const row_view& row, const lod_params& p, float x0, float y0,
                   float y1) {
        slice_row(dl, f, row, p, x0, y0, y1, [](const lod_block&, float, float, ImU32) {});
    }

    // Paints counter track ti of f as steps between bot (0) and top (the track's maximum, at least
    // 1), over the time area from x0 (p.width px wide).
    void counter(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, const lod_params& p, float x0, float top, float bot,
                 const counter_style& style);

private:
    std::vector<lod_block> blocks_;
    std::vector<counter_column> columns_;
};

}   // namespace pipescope::viewer
