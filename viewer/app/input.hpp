// The viewer's one input path: GLFW callbacks (and the scripted-input mode) push events into an
// input_queue (model/input_queue.hpp); each frame, feed() hands ImGui the next batch of it as the
// key, button and pointer state ImGui 1.86 samples. ImGui's own GLFW callbacks are not installed:
// they write that state directly, which loses a press and release arriving within one frame.
#pragma once

#include "../model/input_queue.hpp"

#include <array>
#include <string>
#include <vector>

struct GLFWwindow;
struct ImGuiIO;

namespace pipescope::viewer {

class input_router {
public:
    // Installs the key, character, pointer, button, scroll, focus and drop callbacks on `win`.
    void install(GLFWwindow* win);
    // Script mode: events from the real devices (Xvfb's pointer) are ignored; only the script's count.
    void devices(bool on) { devices_ = on; }

    // What the callbacks call; the script calls them too.
    void push(const input_event& e) { queue_.push(e); }
    void drop(std::vector<std::string> paths);
    void focus_lost();

    // After ImGui_ImplGlfw_NewFrame (which sets the display size and time), before ImGui::NewFrame.
    // Returns whether any event was applied.
    bool feed(ImGuiIO& io);

    bool pending() const { return !queue_.empty(); }
    bool key_held() const;                        // a key other than a modifier is down (W held zooms every frame)
    bool fed_last() const { return fed_last_; }   // the last feed() applied events
    std::vector<std::string> take_dropped();      // files dropped since the last call

private:
    input_queue queue_;
    bool devices_ = true;
    std::array<bool, 512> keys_{};   // by GLFW key code (ImGui's io.KeysDown)
    std::array<bool, 5> buttons_{};
    float x_ = 0, y_ = 0;
    bool inside_ = false;   // the pointer is over the window
    bool fed_last_ = false;
    std::vector<std::string> dropped_;

    friend struct input_callbacks;
};

}   // namespace pipescope::viewer
