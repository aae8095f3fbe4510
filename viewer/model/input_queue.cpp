#include "input_queue.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>   // only the key codes

#include <algorithm>

namespace pipescope::viewer {

bool is_modifier_key(int code) { return code >= GLFW_KEY_LEFT_SHIFT && code <= GLFW_KEY_RIGHT_SUPER; }

std::vector<input_event> input_queue::take_frame() {
    using k = input_event::kind;
    struct changed {
        k what;
        int code;
    };
    std::vector<changed> seen;   // keys and buttons that changed in this frame (a handful)
    bool pressed_or_scrolled = false;
    bool key_pressed = false;   // a key other than a modifier went down in this frame
    std::vector<input_event> frame;
    while (!events_.empty()) {
        const input_event& e = events_.front();
        if (e.what == k::frame) {
            events_.pop_front();
            if (frame.empty()) continue;
            break;
        }
        if (e.what == k::key || e.what == k::button) {
            const bool again = std::any_of(seen.begin(), seen.end(),
                                           [&](const changed& c) { return c.what == e.what && c.code == e.code; });
            if (again) break;
            const bool modifier = e.what == k::key && is_modifier_key(e.code);
            if (modifier && key_pressed) break;
            seen.push_back({e.what, e.code});
            if (e.what == k::key && e.down && !modifier) key_pressed = true;
        }
        if ((e.what == k::move || e.what == k::leave) && pressed_or_scrolled) break;
        if (e.what == k::button || e.what == k::wheel) pressed_or_scrolled = true;
        frame.push_back(e);
        events_.pop_front();
    }
    return frame;
}

}   // namespace pipescope::viewer
