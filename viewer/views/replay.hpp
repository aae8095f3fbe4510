// The replay control shared by the views that show a run at the shared time cursor
// (view_state::cursor, display ns): |< < Play/Pause > >| and a speed slider, a time scrubber, the
// keys (Space plays, Left/Right step, End jumps to the end), and advancing the cursor while playing.
// A view keeps one replay_control (its speed) and says what a step is.
#pragma once

#include "toolbar_flow.hpp"
#include "view.hpp"

#include <functional>
#include <optional>

namespace pipescope::viewer {

struct replay_steps {
    // The previous / next event before / after display time t (nullopt: none).
    std::function<std::optional<double>(double)> prev, next;
    const char* prev_tip = "Previous event (Left)";
    const char* next_tip = "Next event (Right)";
};

class replay_control {
public:
    // At the start of the view's frame: puts an unset cursor halfway through [t0, t1] and advances
    // it while playing (stopping at t1).
    void advance(view_state& st, double t0, double t1);
    // The buttons and the speed slider, two items of the toolbar's flow (they wrap apart).
    void buttons(view_state& st, double t0, double t1, const replay_steps& steps, toolbar_flow& flow);
    // A full-width scrubber: the cursor's time, the range, 1-2-5 ticks; dragging moves the cursor.
    // Height 0: two lines of text (30 px at scale 1).
    void scrubber(view_state& st, double t0, double t1, float height = 0);
    // Space, Left, Right, End; call when the view's window is hovered or focused.
    void keys(view_state& st, double t0, double t1, const replay_steps& steps);

    double speed = 0;   // trace ns per second of playback; 0: the range in 20 s
};

}   // namespace pipescope::viewer
