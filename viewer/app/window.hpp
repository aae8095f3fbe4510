// The window, its GL context and ImGui, and one frame of the viewer (app/main.cpp's loop, the
// headless modes and the scripted-input mode all draw through run_frame).
#pragma once

#include "input.hpp"
#include "shell.hpp"

#include <functional>
#include <string>

struct GLFWwindow;

namespace pipescope::viewer {

struct gl_app {
    GLFWwindow* win = nullptr;
    input_router input;
    // > 0: every frame advances ImGui's clock by this many seconds, whatever the wall clock did
    // (--script: a key held for N frames is held for N * this, so held-key zoom is reproducible).
    float fixed_frame_s = 0;
    gl_app() = default;
    gl_app(const gl_app&) = delete;
    gl_app& operator=(const gl_app&) = delete;
    ~gl_app();
};

// One frame: window events into the input queue, the queue's next batch into ImGui, dropped files
// opened, the UI built and rendered; `before_swap` runs after rendering (a screenshot reads the
// back buffer there). Returns the CPU time spent building the UI (ms).
double run_frame(gl_app& g, shell& sh, const std::function<void()>& before_swap = {});

// The back buffer as a PNG; false if it could not be written.
bool write_png(GLFWwindow* win, const std::string& path);

}   // namespace pipescope::viewer
