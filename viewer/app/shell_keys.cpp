// The shortcuts that work in every view (the help overlay lists them, views/help_view.cpp). Keys
// arrive through the input queue (app/input.hpp), so a tap shorter than a frame is still a press.
#include "shell.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>   // ClosePopupsOverWindow: Esc closes menus (ImGui does so only with keyboard navigation on)

namespace pipescope::viewer {

namespace {

bool pressed(int key) { return ImGui::IsKeyPressed(key, false); }

// '?' by the character it types, so that it works whatever the keyboard layout puts it on.
bool typed(ImWchar c) {
    const ImGuiIO& io = ImGui::GetIO();
    for (ImWchar q : io.InputQueueCharacters)
        if (q == c) return true;
    return false;
}

}   // namespace

void shell::global_keys() {
    const ImGuiIO& io = ImGui::GetIO();
    const bool typing = io.WantTextInput;   // a text field has the keyboard: plain keys are text
    const bool command = io.KeyCtrl && !io.KeyAlt;
    if (command && pressed(GLFW_KEY_O)) browser_open_ = true;
    if (command && pressed(GLFW_KEY_Q)) quit = true;
    if (command && pressed(GLFW_KEY_R)) runs.show = !runs.show;
    if (!typing && !command && (typed('?') || pressed(GLFW_KEY_H) || pressed(GLFW_KEY_F1)))
        state.show_help = !state.show_help;
    if (!typing && !command && lesson_loaded && pressed(GLFW_KEY_L)) state.show_lesson = !state.show_lesson;
    // 1..6 (or Ctrl+1..6, also while typing) switch views in the View menu's order.
    const auto views = view_registry();
    for (std::size_t i = 0; i < views.size() && i < 9; ++i)
        if (pressed(GLFW_KEY_1 + static_cast<int>(i)) &&
            (command || (!typing && !io.KeyCtrl && !io.KeyAlt && !io.KeyShift)) && state.active_view != views[i].name)
            set_view(views[i].name);
    // Esc: the innermost thing first (a text field takes it itself).
    if (!typing && pressed(GLFW_KEY_ESCAPE)) {
        if (ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel))
            ImGui::ClosePopupsOverWindow(nullptr, false);
        else if (state.show_help) state.show_help = false;
        else if (browser_open_) browser_open_ = false;
        else if (runs.show) runs.show = false;
        else if (state.sel.valid() || state.area) state.select(doc, {}), state.area.reset();
    }
}

}   // namespace pipescope::viewer
