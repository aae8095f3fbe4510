// pipescope-viewer's command line (docs/viewer.md): the options it takes, their parsing and the
// --help text. Apart from main.cpp, which only acts on the parsed options.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pipescope::viewer {

struct viewer_options {
    std::vector<std::string> traces;
    std::string screenshot;
    std::string view = "timeline";
    bool view_given = false;
    bool has_range = false;
    double range_a = 0, range_b = 0;
    int w = 1600, h = 1000;
    bool size_given = false;
    int bench = 0;
    bool has_time = false;
    double time = 0;
    bool has_select = false;
    std::uint64_t select_iteration = 0, select_stage = 0;
    std::string lesson;            // --lesson FILE.json
    std::size_t lesson_step = 1;   // --lesson-step K (1-based)
    bool has_lesson_step = false;
    std::string screenshot_steps;   // --screenshot-steps DIR
    std::string script;             // --script FILE: scripted input (docs/viewer.md)
    float ui_scale = 0;             // --ui-scale S (0: the monitor's content scale)

    // Screenshots and the benchmark draw a few frames and exit: no visible window, no input.
    bool headless() const { return !screenshot.empty() || bench > 0 || !screenshot_steps.empty(); }
    bool scripted() const { return !script.empty(); }
};

// Fills `o` from the command line. Returns 0, or 1 after printing on stderr what is wrong (a
// value missing or malformed, an unknown option or view, options that do not go together).
// --help (-h) prints the usage on stdout and exits 0. `pipescope-viewer OUT/lesson.json` is read
// as `--lesson OUT/lesson.json`.
int parse_viewer_options(int argc, char** argv, viewer_options& o);

}   // namespace pipescope::viewer
