// The search's matches arranged for drawing them in the tracks (views/search_marks.cpp): per file,
// per track, the row positions of the matched slices of each row (depth) and the indices of the
// matched instants, ascending. Built once when the search changes (O(matches * log row)), so that a
// frame only walks what is visible: one mark per matched slice at least `min_px` wide, one per pixel
// column for narrower ones (where the level of detail merges slices, model/lod.hpp), found by binary
// searches — O(visible columns * log n) per row, whatever the number of matches. Pure C++.
#pragma once

#include "document.hpp"
#include "lod.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipescope::viewer {

struct search_match;

class search_marks {
public:
    void build(const document& d, const std::vector<search_match>& matches);
    void clear() { *this = {}; }
    std::size_t count() const { return count_; }
    // The matched positions of a row / the matched instants of a track, or nullptr if none.
    const std::vector<std::uint32_t>* row(std::uint32_t file, std::uint32_t track, std::uint16_t depth) const;
    const std::vector<std::uint32_t>* instants(std::uint32_t file, std::uint32_t track) const;

private:
    struct track_marks {
        std::vector<std::vector<std::uint32_t>> rows;   // per depth: row positions, ascending
        std::vector<std::uint32_t> instants;            // instant indices, ascending
    };
    std::vector<std::vector<track_marks>> files_;   // per file, per track
    std::size_t count_ = 0;
};

// The position of slice `slice_index` in `row` (which holds it: its depth's row), by binary search
// on the row's begins.
std::size_t row_position(const row_view& row, std::uint32_t slice_index);

// A mark to draw, in pixels from the time area's left edge: a matched slice drawn as itself
// (`column` false, `pos` its row position), or pixel columns [x0, x1) holding matches narrower than
// min_px (adjacent columns coalesce).
struct mark_span {
    double x0 = 0, x1 = 0;
    std::uint32_t pos = 0;
    bool column = false;
};
// The marks of `row`'s matched positions `marks` in [p.t_left, p.t_left + p.width * p.npp) (out
// cleared first).
void row_marks(const row_view& row, const std::vector<std::uint32_t>& marks, const lod_params& p,
               std::vector<mark_span>& out);
// The same for matched instants (`pos`: the instant's index; a column holds several at one pixel).
void instant_marks(const std::vector<tm::instant>& instants, const std::vector<std::uint32_t>& marks, const lod_params& p,
                   std::vector<mark_span>& out);

}   // namespace pipescope::viewer
