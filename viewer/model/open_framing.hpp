// What the time axis shows when files are added to a document already on screen: files given on
// the command line arriving one by one (in order, but a load may finish before the window has drawn
// the previous one), File > Open, a drop. Pure C++ (no ImGui).
//
// The rule (docs/viewer.md, "Opening files"):
// - a view that still shows everything — the frame of every run so far (view_state::request_frame_all,
//   pending or applied), nothing selected and no area marked — is framed again over every run, the
//   new ones included: several files given at once open on all their runs, whatever order their
//   loads finish in (the compare view frames its own axis and the timeline's from the request);
// - otherwise what the user chose stays: the visible range, the selection, the area and the time
//   cursor keep showing the same moments of the runs already open. Display times move only by the
//   change of the first run's display offset (the document's start moved earlier, or a second file
//   switched the runs to aligned).
#pragma once

#include "view_state.hpp"

namespace pipescope::viewer {

// Whether the timeline's axis shows everything (frame_all_range, asked or applied) and the user has
// neither selected nor marked anything: then framing everything again loses nothing.
bool shows_everything(const document& d, const view_state& st);

struct axis_before_add {
    bool reframe = true;   // shows_everything (or nothing was open)
    bool had_runs = false;
    double first_run_offset = 0;   // display_offset of the first run before the add
};
axis_before_add note_axis_before_add(const document& d, const view_state& st);
// After document::add (and any change of align_runs): frames everything, or keeps what was shown.
void carry_axis_after_add(const document& d, view_state& st, const axis_before_add& before);

}   // namespace pipescope::viewer
