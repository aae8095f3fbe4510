// Bookmarks on the timeline (model/bookmarks.hpp): flags on the ruler with a line across the
// tracks, the keys B (add at the selection or the time cursor), [ and ] (previous / next), and the
// list in the details panel (click: jump there; each note editable).
#pragma once

#include "time_ruler.hpp"
#include "track_painters.hpp"
#include "view.hpp"

namespace pipescope::viewer {

inline constexpr ImU32 col_bookmark = IM_COL32(255, 159, 28, 255);

// The flags on the ruler, numbered in time order; hover one for its note.
void draw_bookmark_flags(view_context& ctx, ImDrawList* dl, const ruler_area& ruler);
// A thin line down the tracks at each bookmark in view.
void draw_bookmark_lines(view_context& ctx, const track_area& fr);
// B, [ and ] (the timeline calls it when no text field has the keyboard and Ctrl is up).
void bookmark_keys(view_context& ctx);
// While a new bookmark's note waits for the keyboard: the characters typed this frame go into it.
void take_note_text(view_context& ctx);
// "Bookmarks (N)" in the details panel: one row per bookmark by time; nothing without bookmarks.
void draw_bookmarks_panel(view_context& ctx);

}   // namespace pipescope::viewer
