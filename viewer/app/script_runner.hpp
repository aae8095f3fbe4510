// Runs a script of the scripted-input mode (`--script FILE`, model/input_script.hpp) in the window:
// its input events go into the same queue as the real keyboard and mouse, its checks read the
// state dump (state_dump.hpp).
#pragma once

#include "../model/input_script.hpp"
#include "window.hpp"

#include <functional>
#include <vector>

namespace pipescope::viewer {

// `frame` draws one frame of the viewer as its main loop does (`before_swap` as in run_frame).
using frame_fn = std::function<void(const std::function<void()>& before_swap)>;

// Exit status: 0 every step ran and every expectation held; 4 a PNG or dump could not be written;
// 5 an expectation failed or wait-loaded gave up (each failure is printed on stderr with its line).
int run_script(const std::vector<script_step>& steps, gl_app& g, shell& sh, const frame_fn& frame);

}   // namespace pipescope::viewer
