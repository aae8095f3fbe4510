// pipescope lesson --list
// pipescope lesson <name> [--workers N] [--size tiny|small|large] [--out DIR] [--no-viewer]
//
// Records the lesson's runs, prints its story with the measured numbers, and opens the viewer on
// lesson.json; without a display (or with --no-viewer) it writes one screenshot per step instead,
// under Xvfb when xvfb-run is installed. See docs/lessons/.
#include "arg_parser.hpp"
#include "commands.hpp"
#include "interrupt.hpp"
#include <pipescope/lessons/runner.hpp>
#include <pipescope/recording/recording.hpp>

#include <pipescope/workloads/workload.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace ls = pipescope::lessons;
using pipescope::recording::usage_error;

namespace {

struct lesson_args {
    std::string name;
    ls::options opts;
    fs::path out;   // default: pipescope-lessons/NAME
    bool list = false, viewer = true, screenshots = true;
};

lesson_args parse(const std::vector<std::string>& args) {
    lesson_args a;
    pipescope::cli::arg_parser p({.prefix = "lesson: "});
    p.flag({"--list"}, [&] { a.list = true; });
    p.number({"--workers"}, {1, 1024, "a number of workers between 1 and 1024"},
             [&](std::uint64_t n) { a.opts.workers = static_cast<unsigned>(n); });
    p.option({"--size"}, [&](const std::string& v) {
        a.opts.size = v;
        try {
            pipescope::workloads::parse_size(a.opts.size);
        } catch (const std::invalid_argument& e) {
            p.fail(e.what());
        }
    });
    p.option({"--out"}, [&](const std::string& v) { a.out = v; });
    p.flag({"--no-viewer"}, [&] { a.viewer = false; });
    p.flag({"--no-screenshots"}, [&] { a.screenshots = false; });
    p.positional([&](const std::string& v) {
        if (!a.name.empty()) p.fail("one lesson at a time (got " + a.name + " and " + v + ")");
        a.name = v;
    });
    p.parse(args);
    if (!a.list && a.name.empty()) throw usage_error("lesson: which lesson? (see `pipescope lesson --list`)");
    if (a.out.empty()) a.out = fs::path("pipescope-lessons") / a.name;
    return a;
}

int list_lessons() {
    for (const auto& l : ls::all_lessons()) fmt::print("  {:<18} {}  ({})\n", l->name(), l->title(), l->seeds());
    fmt::print("run one with: pipescope lesson <name> [--workers N] [--size tiny|small|large]\n");
    return 0;
}

// The viewer next to this executable (build tree: ../viewer/, install: same directory), else on PATH.
std::string find_viewer() {
    if (const char* env = std::getenv("PIPESCOPE_VIEWER"); env && *env) return env;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        for (const fs::path& p :
             {self.parent_path() / "pipescope-viewer", self.parent_path().parent_path() / "viewer" / "pipescope-viewer"})
            if (fs::exists(p, ec)) return p.string();
    return std::system("command -v pipescope-viewer >/dev/null 2>&1") == 0 ? "pipescope-viewer" : "";
}

std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Interactive when there is a display; otherwise screenshots of every step under Xvfb.
int show(const lesson_args& a, const ls::lesson_result& r) {
    const std::string viewer = find_viewer();
    if (viewer.empty()) {
        fmt::print("No pipescope-viewer found (build it, or set PIPESCOPE_VIEWER): open {} in it later.\n",
                   r.json_path.string());
        return 0;
    }
    const char* display = std::getenv("DISPLAY");
    const bool interactive = a.viewer && ((display && *display) || std::getenv("WAYLAND_DISPLAY"));
    if (interactive) {
        fmt::print("Opening the viewer on the lesson (Next / Prev or Page Down / Page Up in its lesson panel)...\n");
        std::fflush(stdout);
        return std::system((quoted(viewer) + " --lesson " + quoted(r.json_path.string())).c_str()) == 0 ? 0 : 1;
    }
    if (!a.screenshots) return 0;
    const fs::path shots = r.dir / "screenshots";
    std::error_code ec;
    fs::remove_all(shots, ec);   // a previous run's story may have had more steps
    std::string cmd =
        quoted(viewer) + " --lesson " + quoted(r.json_path.string()) + " --screenshot-steps " + quoted(shots.string());
    if (!(display && *display)) {
        if (std::system("command -v xvfb-run >/dev/null 2>&1") != 0) {
            fmt::print("No display and no xvfb-run: screenshots skipped (apt-get install xvfb).\n");
            return 0;
        }
        cmd = "xvfb-run -a -s '-screen 0 1600x1000x24' " + cmd;
    }
    fmt::print("Writing one screenshot per step to {} ...\n", shots.string());
    std::fflush(stdout);
    const int status = std::system((cmd + " >/dev/null").c_str());
    // The pictures are the result, not the status alone: xvfb-run exits 5 when it cannot remove its
    // temporary directory after the viewer has ended, whatever the viewer did (seen in CI).
    std::vector<fs::path> pictures;
    for (std::size_t i = 1; i <= r.told.steps.size(); ++i)
        pictures.push_back(shots / ("step-" + std::to_string(i) + ".png"));
    const auto missing = std::find_if(pictures.begin(), pictures.end(), [](const fs::path& p) { return !fs::exists(p); });
    if (missing != pictures.end()) {
        fmt::print(stderr, "pipescope: lesson: the viewer could not write the screenshots (exit status {}, no {}): {}\n",
                   status, missing->string(), cmd);
        return 1;
    }
    for (const fs::path& p : pictures) fmt::print("  {}\n", p.string());
    return 0;
}

}   // namespace

int lesson_command(const std::vector<std::string>& args) {
    const lesson_args a = parse(args);
    if (a.list) return list_lessons();
    const ls::lesson* l = ls::find_lesson(a.name);
    if (!l) {
        std::string known;
        for (const auto& x : ls::all_lessons()) known += std::string(known.empty() ? "" : ", ") + x->name();
        throw usage_error("lesson: no lesson named '" + a.name + "' (known: " + known + ")");
    }
    fmt::print("Lesson: {}\nRecording {} run(s) into {}\n", l->name(), l->runs(a.opts).size(), a.out.string());
    pipescope::cli::interrupt_guard interrupt;
    const ls::lesson_result r = ls::run_lesson(*l, a.opts, a.out, &std::cout, interrupt.token());
    fmt::print("\n{}\n", ls::story_text(*l, r));
    return show(a, r);
}
