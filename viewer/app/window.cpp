#include "window.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <stb_image_write.h>

#include <chrono>
#include <cstring>
#include <vector>

namespace pipescope::viewer {

gl_app::~gl_app() {
    if (!win) return;
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(win);
    glfwTerminate();
}

double run_frame(gl_app& g, shell& sh, const std::function<void()>& before_swap) {
    glfwPollEvents();
    for (const auto& p : g.input.take_dropped()) sh.open(p, open_origin::user);
    const auto t0 = std::chrono::steady_clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (g.fixed_frame_s > 0) ImGui::GetIO().DeltaTime = g.fixed_frame_s;
    g.input.feed(ImGui::GetIO());
    ImGui::NewFrame();
    const bool screenshot_asked = sh.screenshot.wanted;   // in the last frame: its menu has closed since
    sh.frame();
    ImGui::Render();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    int w, h;
    glfwGetFramebufferSize(g.win, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(0.11f, 0.115f, 0.13f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (before_swap) before_swap();
    if (screenshot_asked) take_asked_screenshot(g.win, sh.screenshot);
    glfwSwapBuffers(g.win);
    return ms;
}

bool write_png(GLFWwindow* win, const std::string& path) {
    int w, h;
    glfwGetFramebufferSize(win, &w, &h);
    std::vector<unsigned char> px(static_cast<std::size_t>(w) * h * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    std::vector<unsigned char> flipped(px.size());
    for (int y = 0; y < h; ++y)
        std::memcpy(&flipped[static_cast<std::size_t>(y) * w * 4], &px[static_cast<std::size_t>(h - 1 - y) * w * 4],
                    static_cast<std::size_t>(w) * 4);
    for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
    return stbi_write_png(path.c_str(), w, h, 4, flipped.data(), w * 4) != 0;
}

}   // namespace pipescope::viewer
