// The scripted-input language of `pipescope-viewer FILES --script input.txt` (docs/viewer.md,
// "Scripted input"): one command per line, input events that go through the same queue as the real
// keyboard and mouse (input_queue.hpp), frames to run, and checks of the viewer's state.
// This file parses a script; app/script_runner.cpp runs it. Pure C++: unit-tested.
#pragma once

#include "input_queue.hpp"

#include <filesystem>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipescope::viewer {

// "input.txt:3: unknown key 'ctlr'": the file, the line, what is wrong.
struct script_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct script_step {
    enum class op {
        input,         // events: pushed into the input queue, then frames run until it has drained
        frames,        // count: run that many frames
        wait_loaded,   // run frames until every file given or opened has loaded (or failed)
        screenshot,    // path: write the next frame to a PNG
        dump,          // path: write the view state as JSON (app/state_dump.hpp)
        expect,        // pointer, compare, value: check a field of the view state
        resize,        // width, height: resize the window
        drop,          // paths: drop files on the window (an interactive open)
        devices,       // count 1 / 0: the real keyboard and mouse are let in / ignored again
        shell,         // path: a shell command (xdotool...), run while frames are drawn; then the queue drains
    };
    op what = op::frames;
    int line = 0;       // 1-based, for messages
    std::string text;   // the line as written (trimmed), for messages
    std::vector<input_event> events;
    int count = 0, width = 0, height = 0;
    std::string path;                 // screenshot, dump; shell: the command
    std::vector<std::string> paths;   // drop
    std::string pointer;              // expect: a JSON pointer into the state (e.g. /selection/stage)
    std::string compare = "==";       // expect: == != < <= > >=
    std::string value;                // expect: JSON (a bare word is a string)
};

// Throws script_error naming `name` and the line.
std::vector<script_step> parse_script(std::istream& in, const std::string& name);
std::vector<script_step> load_script(const std::filesystem::path& file);

// The events of one key chord as GLFW reports it: modifiers pressed, the key pressed, the character
// it types (none with Ctrl, Alt or Super), the key released, the modifiers released. `spec` is e.g.
// "f", "ctrl+o", "shift+enter", "?" (Shift+/ typing '?'), "esc", "f1", "ctrl+1". Throws
// std::invalid_argument naming what is not a key.
enum class key_phase { tap, press, release };
std::vector<input_event> key_events(std::string_view spec, key_phase phase = key_phase::tap);

}   // namespace pipescope::viewer
