// pipescope-viewer's command line: the usage text, one parser per option that takes a value, and
// the checks of options that need or exclude one another.
#include "options.hpp"

#include "../model/lesson.hpp"
#include "../views/view.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace pipescope::viewer {

namespace {

void usage(std::FILE* out) {
    fmt::print(
        out,
        "usage: pipescope-viewer [trace.pftrace ...] [--screenshot out.png] [--view NAME] [--range A:B]\n"
        "                        [--size WxH] [--bench N] [--time T] [--select I:J]\n"
        "                        [--lesson lesson.json [--lesson-step K] [--screenshot-steps DIR]] [--script FILE] [--ui-scale S]\n"
        "  --screenshot PNG  render a few frames headless-capable and write them to PNG, then exit\n"
        "  --view NAME       the view to show (");
    for (const auto& v : view_registry()) fmt::print(out, " {}", v.name);
    fmt::print(out,
               " )\n"
               "  --range A:B       time range in ns relative to the trace start (e.g. 0:2000000)\n"
               "  --size WxH        window size (default 1600x1000)\n"
               "  --time T          time cursor in ns relative to the trace start (the DAG and stage graph replay)\n"
               "  --select I:J      select pipeline node (iteration I, stage J) of the first run that has it;\n"
               "                    without --range the timeline frames it\n"
               "  --bench N         replay a scripted pan/zoom over N frames; print load time, frame times, RSS\n"
               "  --lesson FILE     open a lesson written by `pipescope lesson NAME` (its lesson.json): load its\n"
               "                    traces and show the lesson panel at its first step\n"
               "  --lesson-step K   start at step K (1-based) of the lesson\n"
               "  --screenshot-steps DIR  write DIR/step-1.png ... step-N.png, one per step of the lesson, then exit\n"
               "  --script FILE     run FILE's input events and checks in the window (docs/viewer.md), then exit\n"
               "  --ui-scale S      size of text and controls (default: the monitor's content scale; View > UI scale)\n"
               "exit status: 0 ok, 1 usage (or a script that does not parse), 2 a trace or the lesson could not be\n"
               "             loaded (the message names the file and the field), 3 no window/OpenGL, 4 PNG not written,\n"
               "             5 a script's expectation failed\n");
}

bool parse_double(std::string_view s, double& v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// A whole number filling all of `s`: no sign, no spaces, nothing after it.
template <class T>
bool parse_whole(std::string_view s, T& v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// The parsers of the options that take a value. Each gets the value, or nullptr when the command
// line ended first: "--X needs a value" is printed already, and --size, --time, --ui-scale and
// --bench then say what they expect as well (as they always have; scripts may match both lines).
// A parser prints what is wrong and returns false.
using value_parser = bool (*)(const char* v, viewer_options& o);

template <std::string viewer_options::*field>
bool parse_text(const char* v, viewer_options& o) {
    if (!v) return false;
    o.*field = v;
    return true;
}

bool parse_view(const char* v, viewer_options& o) {
    if (!v) return false;
    o.view = v;
    o.view_given = true;
    if (!find_view(o.view)) {
        fmt::print(stderr, "pipescope-viewer: unknown view '{}'\n", v);
        usage(stderr);
        return false;
    }
    return true;
}

bool parse_range(const char* v, viewer_options& o) {
    if (!v) return false;
    std::string_view s = v;
    const auto colon = s.find(':');
    if (colon == std::string_view::npos || !parse_double(s.substr(0, colon), o.range_a) ||
        !parse_double(s.substr(colon + 1), o.range_b) || o.range_b <= o.range_a) {
        fmt::print(stderr, "pipescope-viewer: --range {}: expected A:B in ns with A < B\n", v);
        return false;
    }
    o.has_range = true;
    return true;
}

bool parse_size(const char* v, viewer_options& o) {
    if (!v || std::sscanf(v, "%dx%d", &o.w, &o.h) != 2 || o.w < 200 || o.h < 150 || o.w > 8192 || o.h > 8192) {
        fmt::print(stderr, "pipescope-viewer: --size: expected WxH (200x150 to 8192x8192)\n");
        return false;
    }
    o.size_given = true;
    return true;
}

bool parse_time(const char* v, viewer_options& o) {
    if (!v || !parse_double(v, o.time) || o.time < 0) {
        fmt::print(stderr, "pipescope-viewer: --time: expected a time >= 0 in ns\n");
        return false;
    }
    o.has_time = true;
    return true;
}

bool parse_select(const char* v, viewer_options& o) {
    if (!v) return false;
    const std::string_view sv(v);
    const auto colon = sv.find(':');
    if (colon == std::string_view::npos || !parse_whole(sv.substr(0, colon), o.select_iteration) ||
        !parse_whole(sv.substr(colon + 1), o.select_stage)) {
        fmt::print(stderr, "pipescope-viewer: --select {}: expected ITERATION:STAGE, e.g. 12:3\n", v);
        return false;
    }
    o.has_select = true;
    return true;
}

bool parse_lesson_step(const char* v, viewer_options& o) {
    if (!v) return false;
    if (!parse_whole(std::string_view(v), o.lesson_step) || o.lesson_step < 1) {
        fmt::print(stderr, "pipescope-viewer: --lesson-step {}: expected a step number >= 1\n", v);
        return false;
    }
    o.has_lesson_step = true;
    return true;
}

bool parse_ui_scale(const char* v, viewer_options& o) {
    double d = 0;
    if (!v || !parse_double(v, d) || d < 0.5 || d > 4) {
        fmt::print(stderr, "pipescope-viewer: --ui-scale: expected a scale from 0.5 to 4 (e.g. 1.5)\n");
        return false;
    }
    o.ui_scale = static_cast<float>(d);
    return true;
}

bool parse_bench(const char* v, viewer_options& o) {
    if (!v || std::sscanf(v, "%d", &o.bench) != 1 || o.bench < 2) {
        fmt::print(stderr, "pipescope-viewer: --bench: expected a number of frames >= 2\n");
        return false;
    }
    return true;
}

struct value_option {
    std::string_view name;
    value_parser parse;
};
constexpr value_option value_options[] = {
    {"--screenshot", parse_text<&viewer_options::screenshot>},
    {"--view", parse_view},
    {"--range", parse_range},
    {"--size", parse_size},
    {"--time", parse_time},
    {"--select", parse_select},
    {"--lesson", parse_text<&viewer_options::lesson>},
    {"--lesson-step", parse_lesson_step},
    {"--screenshot-steps", parse_text<&viewer_options::screenshot_steps>},
    {"--ui-scale", parse_ui_scale},
    {"--script", parse_text<&viewer_options::script>},
    {"--bench", parse_bench},
};

const value_option* find_value_option(std::string_view name) {
    for (const value_option& opt : value_options)
        if (opt.name == name) return &opt;
    return nullptr;
}

// `pipescope-viewer OUT/lesson.json` is `--lesson OUT/lesson.json`.
void take_lone_lesson(viewer_options& o) {
    if (o.lesson.empty() && o.traces.size() == 1 && looks_like_lesson(o.traces[0])) {
        o.lesson = o.traces[0];
        o.traces.clear();
    }
}

// Options that need another one, or that cannot go together: 0, or 1 with the reason printed.
int check_combinations(const viewer_options& o) {
    if (o.lesson.empty() && (o.has_lesson_step || !o.screenshot_steps.empty())) {
        fmt::print(stderr, "pipescope-viewer: {} needs --lesson FILE.json\n",
                   o.has_lesson_step ? "--lesson-step" : "--screenshot-steps");
        return 1;
    }
    if (!o.screenshot_steps.empty() && (!o.screenshot.empty() || o.bench > 0)) {
        fmt::print(stderr,
                   "pipescope-viewer: --screenshot-steps writes its own screenshots: not with --screenshot or --bench\n");
        return 1;
    }
    if (!o.script.empty() && (!o.screenshot.empty() || o.bench > 0 || !o.screenshot_steps.empty())) {
        fmt::print(stderr,
                   "pipescope-viewer: --script runs in the window: not with --screenshot, --screenshot-steps or --bench "
                   "(use the script's screenshot command)\n");
        return 1;
    }
    return 0;
}

}   // namespace

int parse_viewer_options(int argc, char** argv, viewer_options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        }
        if (const value_option* opt = find_value_option(a)) {
            const char* v = i + 1 < argc ? argv[++i] : nullptr;
            if (!v) fmt::print(stderr, "pipescope-viewer: {} needs a value\n", a);
            if (!opt->parse(v, o)) return 1;
        } else if (a.starts_with("--")) {
            fmt::print(stderr, "pipescope-viewer: unknown option {}\n", a);
            usage(stderr);
            return 1;
        } else {
            o.traces.push_back(a);
        }
    }
    take_lone_lesson(o);
    return check_combinations(o);
}

}   // namespace pipescope::viewer
