// Input events between the window system and ImGui, delivered frame by frame.
//
// Dear ImGui 1.86 reads the keyboard and mouse as a state sampled once per frame (io.KeysDown,
// io.MouseDown, io.MousePos). A key pressed and released between two frames would never be seen
// down, so a quick tap was lost. Events are therefore queued as they arrive (the GLFW callbacks,
// app/input.cpp, and the scripted-input mode, app/script_runner.cpp, push into the same queue) and
// each frame takes the longest prefix of the queue that ImGui can see as one state:
//   - at most one transition per key and per mouse button (a press and its release land in two
//     consecutive frames);
//   - no pointer move after a button or wheel event of the frame (a click or a zoom happens where
//     the pointer was when it happened, not where it went next);
//   - no modifier key (Ctrl, Shift, Alt, Super) changing after a key pressed in the frame: ImGui
//     reads the modifiers once per frame, so a key is seen with the ones it was pressed with.
//     `xdotool key ctrl+o` releases Ctrl before O, microseconds after O's press: Ctrl's release
//     and O's press used to share a frame, and O arrived without Ctrl (issue 37, defect 3).
// The rest waits for the next frame, in order. Pure C++ (no GLFW, no ImGui): unit-tested.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace pipescope::viewer {

struct input_event {
    enum class kind : std::uint8_t {
        key,      // code: a GLFW key code; down: pressed or released; mods: the modifiers held with it
        text,     // code: a Unicode code point typed
        move,     // x, y: the pointer, in window coordinates
        button,   // code: mouse button (0 left, 1 right, 2 middle); down
        wheel,    // x, y: scroll offsets (y > 0: away from the user)
        leave,    // the pointer left the window
        frame,    // the events after it wait for the next frame (scripts: a drag's steps)
    };
    kind what = kind::key;
    int code = 0;
    bool down = false;
    float x = 0, y = 0;
    int mods = 0;   // key: mod_* bits, as the window system reported them with the key (GLFW's `mods`)

    static constexpr int mod_shift = 1, mod_ctrl = 2, mod_alt = 4, mod_super = 8;   // GLFW_MOD_* values

    static input_event key(int k, bool d, int m = 0) { return {kind::key, k, d, 0, 0, m}; }
    static input_event text(unsigned c) { return {kind::text, static_cast<int>(c)}; }
    static input_event move(float px, float py) { return {kind::move, 0, false, px, py}; }
    static input_event button(int b, bool d) { return {kind::button, b, d}; }
    static input_event wheel(float dx, float dy) { return {kind::wheel, 0, false, dx, dy}; }
    static input_event leave() { return {kind::leave}; }
    static input_event next_frame() { return {kind::frame}; }
    bool operator==(const input_event&) const = default;
};

// Ctrl, Shift, Alt and Super, left or right (GLFW key codes).
bool is_modifier_key(int code);

class input_queue {
public:
    void push(const input_event& e) { events_.push_back(e); }
    // The events of the next frame (see above); empty when nothing is queued.
    std::vector<input_event> take_frame();
    bool empty() const { return events_.empty(); }
    std::size_t size() const { return events_.size(); }

private:
    std::deque<input_event> events_;
};

}   // namespace pipescope::viewer
