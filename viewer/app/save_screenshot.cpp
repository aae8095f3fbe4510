#include "save_screenshot.hpp"

#include "window.hpp"

#include "../model/new_file.hpp"

#include <imgui.h>

#include <ctime>
#include <filesystem>

namespace pipescope::viewer {

namespace fs = std::filesystem;

void take_asked_screenshot(GLFWwindow* win, screenshot_state& s) {
    if (!s.wanted) return;
    s.wanted = false;
    try {
        const fs::path dir = fs::current_path();
        s.last_path =
            save_new_file(dir, std::time(nullptr), [&](const std::string& p) { return write_png(win, p); }).string();
        s.error.clear();
    } catch (const std::exception& e) {
        s.error = std::string("Could not save the screenshot: ") + e.what();
    }
    s.notice_until = ImGui::GetTime() + 6;
}

void draw_screenshot_notice(const screenshot_state& s) {
    if (s.wanted || ImGui::GetTime() > s.notice_until) return;   // not in the picture being taken
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float pad = ImGui::GetFontSize();
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x - pad, vp->WorkPos.y + vp->WorkSize.y - pad),
                            ImGuiCond_Always, ImVec2(1, 1));
    ImGui::SetNextWindowBgAlpha(0.9f);
    ImGui::Begin("##screenshot notice", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoInputs);
    if (s.error.empty()) ImGui::TextColored(ImVec4(0.6f, 1, 0.6f, 1), "Saved %s", s.last_path.c_str());
    else ImGui::TextColored(ImVec4(1, 0.6f, 0.6f, 1), "%s", s.error.c_str());
    ImGui::End();
}

}   // namespace pipescope::viewer
