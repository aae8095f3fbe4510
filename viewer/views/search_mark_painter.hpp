// The search's matches drawn in the timeline's tracks (model/search_marks.hpp), as Perfetto and
// Tracy do: while a search has matches, every slice row and instant lane is dimmed and the matches
// are drawn over it bright, outlined in the mark colour; where slices merge into one block per pixel
// column (zoomed out, model/lod.hpp) the columns holding a match are filled with the mark colour.
// The timeline calls row() after painting a row and lane() after an instant lane; what a frame
// marks is counted in search_state::marked (the state dump's search.marked).
#pragma once

#include "palette.hpp"

#include "../model/search_marks.hpp"
#include "../model/view_state.hpp"

#include <imgui.h>

#include <algorithm>
#include <vector>

namespace pipescope::viewer {

inline constexpr ImU32 col_search_mark = rgb(0xFFE000);   // in no palette: screenshots can count it
inline constexpr ImU32 col_search_dim = IM_COL32(14, 15, 19, 170);

// The index of `f` in the document's files (the timeline paints by file).
std::uint32_t file_index(const document& d, const loaded_file& f);

class search_mark_painter {
public:
    // Marking is on: the search has matches (kept: not more than max_search_matches).
    static bool active(const view_state& st) { return !st.search.matches.empty(); }

    // Row `depth` of track ti of file `fi`, painted between y0 and y1 with the time area from x0:
    // dims it and draws its matches. `label(slice, bx0, bx1, colour)` writes a slice's name again
    // over a mark wide enough (the dimming covered it).
    template <class Label>
    void row(ImDrawList* dl, view_state& st, std::uint32_t fi, const loaded_file& f, std::uint32_t ti, std::uint16_t depth,
             const lod_params& p, float x0, float y0, float y1, Label&& label) {
        if (!active(st)) return;
        dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + static_cast<float>(p.width), y1), col_search_dim);
        const std::vector<std::uint32_t>* marks = st.search.marks.row(fi, ti, depth);
        if (!marks) return;
        const row_view r = f.row(ti, depth);
        row_marks(r, *marks, p, spans_);
        for (const mark_span& m : spans_) {
            const float mx0 = x0 + static_cast<float>(std::max(m.x0, -2.0));
            const float mx1 = x0 + static_cast<float>(std::min(std::max(m.x1, m.x0 + 1), p.width + 2));
            ++st.search.marked;
            if (m.column) {
                dl->AddRectFilled(ImVec2(mx0, y0), ImVec2(std::max(mx1, mx0 + 2), y1), col_search_mark);
                continue;
            }
            const tm::slice& s = r[m.pos];
            const ImU32 c = key_colour(f.key(s));
            dl->AddRectFilled(ImVec2(mx0, y0), ImVec2(mx1, y1), c);
            label(s, mx0, mx1, c);
            dl->AddRect(ImVec2(mx0, y0), ImVec2(mx1, y1), col_search_mark, 0, 0, 2.0f);
        }
    }
    // The instant lane of track ti (y0 to y1): dims it and marks its matched instants.
    void lane(ImDrawList* dl, view_state& st, std::uint32_t fi, const loaded_file& f, std::uint32_t ti, const lod_params& p,
              float x0, float y0, float y1);

private:
    std::vector<mark_span> spans_;
};

}   // namespace pipescope::viewer
