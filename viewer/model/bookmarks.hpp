// Bookmarks (flags with notes) on the timeline's axis: where they lie in display time, adding one at
// the selection or the time cursor, stepping to the next / previous one. They are kept in each
// file's arrangement (view_state::arranged, model/file_state.hpp), so they go and come with the
// file. Pure C++.
#pragma once

#include "view_state.hpp"

#include <optional>
#include <vector>

namespace pipescope::viewer {

struct placed_bookmark {
    bookmark_ref ref;
    double t = 0;   // display ns (the view's axis)
    const bookmark* b = nullptr;
};

// Display time of a file's bookmark: its timestamp on its run's axis (the document start if the
// run is gone).
double bookmark_time(const document& d, std::uint32_t file, const bookmark& b, bool aligned);

// Every bookmark of the document by display time (then file, then index).
std::vector<placed_bookmark> placed_bookmarks(const document& d, const view_state& st);

// Adds a bookmark at the selected slice's or instant's start, else at the time cursor, else at the
// middle of the view, on the selection's run (else the first run); empty note. Asks for its note to
// be edited (bookmark_edit) and makes it the current one. Nothing without a run.
std::optional<bookmark_ref> add_bookmark(const document& d, view_state& st);

// The next (dir > 0) or previous bookmark from the current one (when the cursor is still on it)
// or from the cursor (else the middle of the view), wrapping around; moves the cursor there and
// brings it into view at the same zoom. Nothing without bookmarks.
std::optional<bookmark_ref> step_bookmark(const document& d, view_state& st, int dir);

// Moves the cursor to a bookmark and brings it into view (centred if it was outside).
void jump_to_bookmark(const document& d, view_state& st, const placed_bookmark& p);

// Removes a bookmark (the current and edited ones are forgotten).
void remove_bookmark(view_state& st, bookmark_ref r);

}   // namespace pipescope::viewer
