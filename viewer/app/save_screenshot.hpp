// File > Save screenshot…: the window as a PNG named pipescope-YYYYMMDD-HHMMSS.png (local time;
// -2, -3, … when that name is taken) in the current directory, written atomically and never over an
// existing file: the PNG goes to a temporary file in that directory, which is then hard-linked to the
// first free name (a link fails rather than replace a file) and removed. The picture is taken after
// the frame that follows the menu click (the menu has closed by then); "Saved PATH" shows at the
// bottom of the window for a few seconds.
#pragma once

#include <string>

struct GLFWwindow;

namespace pipescope::viewer {

struct screenshot_state {
    bool wanted = false;       // asked from the menu: taken after the next frame is drawn
    std::string last_path;     // the last one saved (absolute), the state dump's screenshot.last
    std::string error;         // why the last one could not be saved
    double notice_until = 0;   // ImGui time until which the notice shows
};

// run_frame's part: takes the screenshot asked for (from the back buffer just rendered) and updates `s`.
void take_asked_screenshot(GLFWwindow* win, screenshot_state& s);
// The "Saved PATH" (or the error) notice at the bottom of the window while it lasts.
void draw_screenshot_notice(const screenshot_state& s);

}   // namespace pipescope::viewer
