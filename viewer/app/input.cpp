#include "input.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>

namespace pipescope::viewer {

// The GLFW callbacks: each turns what GLFW reports into queued events, nothing else.
struct input_callbacks {
    static input_router& of(GLFWwindow* w) { return *static_cast<input_router*>(glfwGetWindowUserPointer(w)); }
    static bool live(GLFWwindow* w) { return of(w).devices_; }

    static void key(GLFWwindow* w, int k, int, int action, int mods) {
        static_assert(input_event::mod_ctrl == GLFW_MOD_CONTROL && input_event::mod_shift == GLFW_MOD_SHIFT &&
                      input_event::mod_alt == GLFW_MOD_ALT && input_event::mod_super == GLFW_MOD_SUPER);
        constexpr int chord_mods = GLFW_MOD_SHIFT | GLFW_MOD_CONTROL | GLFW_MOD_ALT | GLFW_MOD_SUPER;   // not the locks
        if (live(w) && action != GLFW_REPEAT && k >= 0)
            of(w).push(input_event::key(k, action == GLFW_PRESS, mods & chord_mods));
    }
    static void character(GLFWwindow* w, unsigned c) {
        if (live(w)) of(w).push(input_event::text(c));
    }
    static void pointer(GLFWwindow* w, double x, double y) {
        if (live(w)) of(w).push(input_event::move(static_cast<float>(x), static_cast<float>(y)));
    }
    static void enter(GLFWwindow* w, int entered) {
        if (live(w) && !entered) of(w).push(input_event::leave());
    }
    static void button(GLFWwindow* w, int b, int action, int) {
        if (live(w) && b >= 0) of(w).push(input_event::button(b, action == GLFW_PRESS));
    }
    static void scroll(GLFWwindow* w, double dx, double dy) {
        if (live(w)) of(w).push(input_event::wheel(static_cast<float>(dx), static_cast<float>(dy)));
    }
    static void focus(GLFWwindow* w, int focused) {
        if (live(w) && !focused) of(w).focus_lost();
    }
    static void drop(GLFWwindow* w, int n, const char** paths) {
        if (!live(w)) return;
        std::vector<std::string> v(paths, paths + n);
        of(w).drop(std::move(v));
    }
};

void input_router::install(GLFWwindow* win) {
    glfwSetWindowUserPointer(win, this);
    glfwSetKeyCallback(win, &input_callbacks::key);
    glfwSetCharCallback(win, &input_callbacks::character);
    glfwSetCursorPosCallback(win, &input_callbacks::pointer);
    glfwSetCursorEnterCallback(win, &input_callbacks::enter);
    glfwSetMouseButtonCallback(win, &input_callbacks::button);
    glfwSetScrollCallback(win, &input_callbacks::scroll);
    glfwSetWindowFocusCallback(win, &input_callbacks::focus);
    glfwSetDropCallback(win, &input_callbacks::drop);
}

void input_router::drop(std::vector<std::string> paths) {
    for (auto& p : paths) dropped_.push_back(std::move(p));
}

std::vector<std::string> input_router::take_dropped() {
    std::vector<std::string> v;
    v.swap(dropped_);
    return v;
}

// Another window took the keyboard: what was held is released (in order, after what is queued),
// or it would stay down in ImGui's eyes.
void input_router::focus_lost() {
    for (std::size_t k = 0; k < keys_.size(); ++k)
        if (keys_[k]) queue_.push(input_event::key(static_cast<int>(k), false));
    for (std::size_t b = 0; b < buttons_.size(); ++b)
        if (buttons_[b]) queue_.push(input_event::button(static_cast<int>(b), false));
}

bool input_router::key_held() const {
    for (std::size_t k = 0; k < keys_.size(); ++k)
        if (keys_[k] && !is_modifier_key(static_cast<int>(k))) return true;
    return false;
}

bool input_router::feed(ImGuiIO& io) {
    const std::vector<input_event> batch = queue_.take_frame();
    using k = input_event::kind;
    int press_mods = 0;   // the modifiers the window system reported with the frame's key presses
    for (const input_event& e : batch) {
        switch (e.what) {
            case k::key:
                if (e.code < static_cast<int>(keys_.size())) keys_[static_cast<std::size_t>(e.code)] = e.down;
                if (e.down && !is_modifier_key(e.code)) press_mods |= e.mods;
                break;
            case k::text: io.AddInputCharacter(static_cast<unsigned>(e.code)); break;
            case k::move:
                x_ = e.x;
                y_ = e.y;
                inside_ = true;
                break;
            case k::button:
                if (e.code < static_cast<int>(buttons_.size())) buttons_[static_cast<std::size_t>(e.code)] = e.down;
                break;
            case k::wheel:
                io.MouseWheelH += e.x;
                io.MouseWheel += e.y;
                break;
            case k::leave: inside_ = false; break;
            case k::frame: break;
        }
    }
    // The whole state, every frame: the GLFW backend's NewFrame has just overwritten the pointer and
    // the buttons with its own polling.
    static_assert(sizeof(io.KeysDown) / sizeof(io.KeysDown[0]) >= 512);
    std::copy(keys_.begin(), keys_.end(), io.KeysDown);
    // A modifier is held if its key is down (the queue keeps its changes out of a frame after a key
    // press) or if the window system reported it with a key pressed in this frame — Ctrl held since
    // before the window had the keyboard has no press of its own here.
    io.KeyCtrl = keys_[GLFW_KEY_LEFT_CONTROL] || keys_[GLFW_KEY_RIGHT_CONTROL] || (press_mods & GLFW_MOD_CONTROL);
    io.KeyShift = keys_[GLFW_KEY_LEFT_SHIFT] || keys_[GLFW_KEY_RIGHT_SHIFT] || (press_mods & GLFW_MOD_SHIFT);
    io.KeyAlt = keys_[GLFW_KEY_LEFT_ALT] || keys_[GLFW_KEY_RIGHT_ALT] || (press_mods & GLFW_MOD_ALT);
    io.KeySuper = keys_[GLFW_KEY_LEFT_SUPER] || keys_[GLFW_KEY_RIGHT_SUPER] || (press_mods & GLFW_MOD_SUPER);
    for (std::size_t b = 0; b < buttons_.size(); ++b) io.MouseDown[b] = buttons_[b];
    // A drag that leaves the window keeps its pointer (X11 grabs it while a button is down).
    const bool dragging = std::any_of(buttons_.begin(), buttons_.end(), [](bool d) { return d; });
    io.MousePos = inside_ || dragging ? ImVec2(x_, y_) : ImVec2(-FLT_MAX, -FLT_MAX);
    fed_last_ = !batch.empty();
    return fed_last_;
}

}   // namespace pipescope::viewer
