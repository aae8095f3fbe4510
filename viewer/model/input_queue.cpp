#include "input_queue.hpp"

#include <algorithm>

namespace pipescope::viewer {

std::vector<input_event> input_queue::take_frame() {
    using k = input_event::kind;
    struct changed {
        k what;
        int code;
    };
    std::vector<changed> seen;   // keys and buttons that changed in this frame (a handful)
    bool pressed_or_scrolled = false;
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
            seen.push_back({e.what, e.code});
        }
        if ((e.what == k::move || e.what == k::leave) && pressed_or_scrolled) break;
        if (e.what == k::button || e.what == k::wheel) pressed_or_scrolled = true;
        frame.push_back(e);
        events_.pop_front();
    }
    return frame;
}

}   // namespace pipescope::viewer
