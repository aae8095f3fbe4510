// The track painters the timeline and the compare view share: a row of slices merged to the pixel
// (model/lod.hpp) and a counter drawn as a step graph. Each view keeps one track_painter, which
// holds the level-of-detail buffers reused from track to track and frame to frame.
#pragma once

#include "palette.hpp"

#include "../model/document.hpp"
#include "../model/lod.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pipescope::viewer {

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
