// The timeline's controls for arranging its tracks (model/track_arrangement.hpp): the filter field
// and the "N hidden" menu in the toolbar, the right-click menu on a track's name (Pin / Unpin, Hide)
// or on a run header (Collapse / Expand, Show hidden tracks), and a click on a run header's name
// column collapsing or expanding the run. What they change is the file's arrangement
// (view_state::arranged), which model/file_state.hpp keeps with the file.
#pragma once

#include "timeline_overlays.hpp"
#include "toolbar_flow.hpp"
#include "track_painters.hpp"
#include "view.hpp"

#include "../model/track_arrangement.hpp"

#include <span>

namespace pipescope::viewer {

// Where a run header was drawn this frame (a sticky header too).
struct header_row {
    float y0, y1;
    std::uint32_t run;
};

// The arrangement of file `file`, created if the state has none yet.
file_arrangement& arrangement_for(view_state& st, std::uint32_t file);

// The disclosure triangle of a group or run header (open: pointing down), at (cx, cy); u is a pixel
// at UI scale 1.
void disclosure_triangle(ImDrawList* dl, float cx, float cy, float u, bool open);

// In the pinned band, left of a pinned track's name (rows y0 to y1): the number of its run (1-based,
// document order) when there are several; hover for the run's title.
void pinned_run_badge(view_context& ctx, const track_area& band, std::uint32_t run, float y0, float y1);

class track_controls {
public:
    // The filter field and, when tracks are hidden, the "N hidden" button with its menu.
    void toolbar(view_context& ctx, toolbar_flow& flow, const track_arrangement& arr);
    // After the tracks are laid out: a right-click on a track's name or a run header opens the
    // menu, a left click on a run header's name column collapses / expands the run. `top`: the top
    // of the scrolled tracks (under the pinned band), where headers start to count.
    void mouse(view_context& ctx, const track_area& fr, float top, std::span<const track_region> tracks,
               std::span<const header_row> headers);

private:
    char filter_[128] = {};
    bool editing_ = false;   // the filter field has the keyboard
    track_ref menu_track_{};
    std::uint32_t menu_run_ = tm::no_index;
    void track_menu(view_context& ctx);
    void run_menu(view_context& ctx);
};

// Cuts the hit or area regions from index `first` on to [top, bottom): the scrolled tracks lie under
// the pinned band, the pinned ones may overflow it.
template <class Region>
void clip_regions(std::vector<Region>& v, std::size_t first, float top, float bottom) {
    std::size_t out = first;
    for (std::size_t i = first; i < v.size(); ++i) {
        if (v[i].y1 <= top || v[i].y0 >= bottom) continue;
        v[out] = v[i];
        v[out].y0 = std::max(v[out].y0, top);
        v[out].y1 = std::min(v[out].y1, bottom);
        ++out;
    }
    v.resize(out);
}

}   // namespace pipescope::viewer
