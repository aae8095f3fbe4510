// The timeline's overlays and what they need of its layout (timeline_view.cpp lays the tracks
// out each frame): flow arrows, the area selection drawn over its tracks and found from a drag,
// and the tooltip of the lost-event markers.
#pragma once

#include "time_ruler.hpp"
#include "view.hpp"

#include <optional>
#include <vector>

namespace pipescope::viewer {

// Where a track is drawn this frame (all its rows and its lane): what an area selection covers.
struct track_region {
    float y0, y1;
    track_ref track;
};

// A flow arrow: a curve leaving `a` to the right and entering `b` from the left, a dot at its tail
// and a head scaled to its thickness; `outline` draws a dark edge under it (highlighted flows).
void flow_arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c, float thick, bool outline);

// The area between two points of a drag: the time between them over the tracks between them.
std::optional<area_selection> area_between(const std::vector<track_region>& regions, double t_a, double t_b, float y_a,
                                           float y_b);

// The area over its tracks (a tint), two lines across all tracks, and on the ruler a bracket with its length.
void draw_area(const viewport& vp, ImDrawList* dl, const std::vector<track_region>& regions, const area_selection& a,
               float x0, float width, float clip_y0, float clip_y1, ruler_area ruler);

// The tooltip of the red "events lost" markers under the mouse; false if there is none.
bool lost_events_tooltip(const view_context& ctx, const std::vector<track_region>& regions, ImVec2 mp, float x0);

}   // namespace pipescope::viewer
