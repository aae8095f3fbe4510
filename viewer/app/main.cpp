// pipescope-viewer: window and GL setup, the frame loop, command line, and the headless modes
// (--screenshot, --bench). See docs/viewer.md.
//
// Exit status: 0 success; 1 usage error; 2 a trace or the lesson could not be loaded (with --screenshot
// the screenshot of a trace's error is still written and shows it); 3 no window/OpenGL; 4 the PNG could
// not be written.
#include "script_runner.hpp"
#include "shell.hpp"
#include "window.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cfloat>
#include <fstream>
#include <functional>
#include <optional>
#include <iostream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace pipescope::viewer;

namespace {

struct options {
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
};

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

int parse_args(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto need = [&](const char* what) -> const char* {
            if (i + 1 >= argc) {
                fmt::print(stderr, "pipescope-viewer: {} needs a value\n", what);
                return nullptr;
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        } else if (a == "--screenshot") {
            const char* v = need("--screenshot");
            if (!v) return 1;
            o.screenshot = v;
        } else if (a == "--view") {
            const char* v = need("--view");
            if (!v) return 1;
            o.view = v;
            o.view_given = true;
            if (!find_view(o.view)) {
                fmt::print(stderr, "pipescope-viewer: unknown view '{}'\n", v);
                usage(stderr);
                return 1;
            }
        } else if (a == "--range") {
            const char* v = need("--range");
            if (!v) return 1;
            std::string_view s = v;
            const auto colon = s.find(':');
            if (colon == std::string_view::npos || !parse_double(s.substr(0, colon), o.range_a) ||
                !parse_double(s.substr(colon + 1), o.range_b) || o.range_b <= o.range_a) {
                fmt::print(stderr, "pipescope-viewer: --range {}: expected A:B in ns with A < B\n", v);
                return 1;
            }
            o.has_range = true;
        } else if (a == "--size") {
            const char* v = need("--size");
            if (!v || std::sscanf(v, "%dx%d", &o.w, &o.h) != 2 || o.w < 200 || o.h < 150 || o.w > 8192 || o.h > 8192) {
                fmt::print(stderr, "pipescope-viewer: --size: expected WxH (200x150 to 8192x8192)\n");
                return 1;
            }
            o.size_given = true;
        } else if (a == "--time") {
            const char* v = need("--time");
            if (!v || !parse_double(v, o.time) || o.time < 0) {
                fmt::print(stderr, "pipescope-viewer: --time: expected a time >= 0 in ns\n");
                return 1;
            }
            o.has_time = true;
        } else if (a == "--select") {
            const char* v = need("--select");
            if (!v) return 1;
            const std::string_view sv(v);
            const auto colon = sv.find(':');
            const auto parse_u64 = [](std::string_view t, std::uint64_t& out) {
                auto r = std::from_chars(t.data(), t.data() + t.size(), out);
                return !t.empty() && r.ec == std::errc{} && r.ptr == t.data() + t.size();
            };
            if (colon == std::string_view::npos || !parse_u64(sv.substr(0, colon), o.select_iteration) ||
                !parse_u64(sv.substr(colon + 1), o.select_stage)) {
                fmt::print(stderr, "pipescope-viewer: --select {}: expected ITERATION:STAGE, e.g. 12:3\n", v);
                return 1;
            }
            o.has_select = true;
        } else if (a == "--lesson") {
            const char* v = need("--lesson");
            if (!v) return 1;
            o.lesson = v;
        } else if (a == "--lesson-step") {
            const char* v = need("--lesson-step");
            if (!v) return 1;
            const std::string_view sv(v);
            auto r = std::from_chars(sv.data(), sv.data() + sv.size(), o.lesson_step);
            if (sv.empty() || r.ec != std::errc{} || r.ptr != sv.data() + sv.size() || o.lesson_step < 1) {
                fmt::print(stderr, "pipescope-viewer: --lesson-step {}: expected a step number >= 1\n", v);
                return 1;
            }
            o.has_lesson_step = true;
        } else if (a == "--screenshot-steps") {
            const char* v = need("--screenshot-steps");
            if (!v) return 1;
            o.screenshot_steps = v;
        } else if (a == "--ui-scale") {
            const char* v = need("--ui-scale");
            double d = 0;
            if (!v || !parse_double(v, d) || d < 0.5 || d > 4) {
                fmt::print(stderr, "pipescope-viewer: --ui-scale: expected a scale from 0.5 to 4 (e.g. 1.5)\n");
                return 1;
            }
            o.ui_scale = static_cast<float>(d);
        } else if (a == "--script") {
            const char* v = need("--script");
            if (!v) return 1;
            o.script = v;
        } else if (a == "--bench") {
            const char* v = need("--bench");
            if (!v || std::sscanf(v, "%d", &o.bench) != 1 || o.bench < 2) {
                fmt::print(stderr, "pipescope-viewer: --bench: expected a number of frames >= 2\n");
                return 1;
            }
        } else if (a.starts_with("--")) {
            fmt::print(stderr, "pipescope-viewer: unknown option {}\n", a);
            usage(stderr);
            return 1;
        } else {
            o.traces.push_back(a);
        }
    }
    // `pipescope-viewer OUT/lesson.json` is `--lesson OUT/lesson.json`.
    if (o.lesson.empty() && o.traces.size() == 1 && looks_like_lesson(o.traces[0])) {
        o.lesson = o.traces[0];
        o.traces.clear();
    }
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

double rss_mb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with("VmRSS:")) return std::atof(line.c_str() + 6) / 1024.0;
    return 0;
}

// The style at scale 1; scale_ui() sizes it and the fonts for the UI scale.
void base_style() {
    ImGui::GetStyle() = ImGuiStyle();
    ImGui::StyleColorsDark();
    ImGuiStyle& s = ImGui::GetStyle();
    s.WindowRounding = 4;
    s.FrameRounding = 3;
    s.GrabRounding = 3;
    s.ScrollbarRounding = 3;
    s.FramePadding = ImVec2(6, 3);
    s.ItemSpacing = ImVec2(8, 5);
    s.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.115f, 0.13f, 1);
    s.Colors[ImGuiCol_ChildBg] = ImVec4(0.13f, 0.135f, 0.15f, 1);
    s.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.16f, 0.17f, 0.2f, 1);
}

// Fonts rasterized at the UI scale (a scaled bitmap font would blur) and the style's sizes scaled;
// between frames only (the GL font texture is rebuilt).
void scale_ui(shell& sh, float scale, bool gl_ready) {
    base_style();
    ImGui::GetStyle().ScaleAllSizes(scale);
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    // Latin-1, Greek (λ, μ), dashes and quotes, sub/superscripts, arrows, mathematical operators
    // (≥, ≈, ∞): what the lessons' and the analysis' texts use. DejaVu has them all.
    static const ImWchar ranges[] = {0x0020, 0x00FF, 0x0391, 0x03C9, 0x2013, 0x2026, 0x2070,
                                     0x209F, 0x2190, 0x2193, 0x2200, 0x22FF, 0};
    const char* sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
    const char* monof = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
    std::error_code ec;
    if (fs::exists(sans, ec)) io.Fonts->AddFontFromFileTTF(sans, std::round(15.0f * scale), nullptr, ranges);
    else io.Fonts->AddFontDefault();
    sh.mono =
        fs::exists(monof, ec) ? io.Fonts->AddFontFromFileTTF(monof, std::round(14.0f * scale), nullptr, ranges) : nullptr;
    if (gl_ready) {
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
    }
    sh.set_ui_scale(scale);
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t k =
        std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - (p > 0 ? 1 : 0));
    return v[k];
}

// --screenshot-steps DIR: for every step of the lesson, its move, a few frames, DIR/step-K.png.
int screenshot_steps(gl_app& g, shell& sh, const std::string& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        fmt::print(stderr, "pipescope-viewer: --screenshot-steps: cannot create {}: {}\n", dir, ec.message());
        return 4;
    }
    const std::size_t n = sh.lesson_loaded ? sh.lesson_loaded->steps.size() : 0;
    for (std::size_t k = 0; k < n; ++k) {
        sh.go_to_step(k);
        for (int i = 0; i < 3; ++i) run_frame(g, sh);
        const std::string png = (fs::path(dir) / ("step-" + std::to_string(k + 1) + ".png")).string();
        bool ok = true;
        run_frame(g, sh, [&] { ok = write_png(g.win, png); });
        if (!ok) {
            fmt::print(stderr, "pipescope-viewer: cannot write {}\n", png);
            return 4;
        }
        fmt::print("pipescope-viewer: wrote {}\n", png);
    }
    return 0;
}

}   // namespace

// --select: selects node (I, J) and, without --range, frames it with context on both sides.
bool apply_select(shell& sh, const options& o) {
    const selection node = select_node(sh.doc, o.select_iteration, o.select_stage);
    if (!node.valid()) {
        fmt::print(stderr, "pipescope-viewer: --select {}:{}: no run has pipeline node (iteration {}, stage {})\n",
                   o.select_iteration, o.select_stage, (unsigned long long)o.select_iteration,
                   (unsigned long long)o.select_stage);
        return false;
    }
    sh.state.select(sh.doc, node);
    sh.state.scroll_to_selection = true;
    if (!o.has_range)
        if (auto r = selection_range(sh.doc, node, sh.state.align_runs)) {
            const double w = std::max(r->second - r->first, 1.0) * 20;
            const double mid = (r->first + r->second) / 2;
            sh.state.frame_request = std::pair{mid - w / 2, mid + w / 2};
        }
    return true;
}

int main(int argc, char** argv) {
    options o;
    if (int rc = parse_args(argc, argv, o)) return rc;
    // The lesson is read before any window: a malformed one is reported at once (exit 2).
    std::optional<lesson> lsn;
    if (!o.lesson.empty()) {
        try {
            lsn = load_lesson(o.lesson, [](std::string_view v) { return find_view(v) != nullptr; });
        } catch (const lesson_error& e) {
            fmt::print(stderr, "pipescope-viewer: {}\n", e.what());
            return 2;
        }
        if (o.lesson_step > lsn->steps.size()) {
            fmt::print(stderr, "pipescope-viewer: --lesson-step {}: {} has {} step{}\n", o.lesson_step, o.lesson,
                       lsn->steps.size(), lsn->steps.size() == 1 ? "" : "s");
            return 1;
        }
    }
    // `pipescope-viewer DIR` (or DIR/scale.json) of `pipescope scale`: its traces, in the scaling view.
    std::optional<sweep> swp;
    if (o.lesson.empty() && o.traces.size() == 1 && looks_like_sweep(o.traces[0])) {
        try {
            swp = load_sweep(o.traces[0]);
        } catch (const std::exception& e) {
            fmt::print(stderr, "pipescope-viewer: {}\n", e.what());
            return 2;
        }
        o.traces.clear();
        for (const fs::path& t : swp->traces()) o.traces.push_back(t.string());
        if (!o.view_given) o.view = "scaling";
    }
    const bool headless = !o.screenshot.empty() || o.bench > 0 || !o.screenshot_steps.empty();
    // The script's window: loads in the background like a user's, but its size is given, it keeps
    // no settings (imgui.ini) and only the script's input counts.
    std::vector<script_step> script;
    if (!o.script.empty()) {
        try {
            script = load_script(o.script);
        } catch (const script_error& e) {
            fmt::print(stderr, "pipescope-viewer: {}\n", e.what());
            return 1;
        }
    }
    const bool scripted = !o.script.empty();

    glfwSetErrorCallback(
        [](int code, const char* msg) { fmt::print(stderr, "pipescope-viewer: GLFW error {}: {}\n", code, msg); });
    if (!glfwInit()) {
        fmt::print(stderr, "pipescope-viewer: cannot initialize GLFW (no display? try xvfb-run -a)\n");
        return 3;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
    if (headless) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
    gl_app g;
    const bool fixed_size = headless || scripted || o.size_given;
    const int W = fixed_size ? o.w : 1440, H = fixed_size ? o.h : 900;
    g.win = glfwCreateWindow(W, H, "pipescope-viewer", nullptr, nullptr);
    if (!g.win) {
        fmt::print(stderr, "pipescope-viewer: cannot create an OpenGL 3.3 window\n");
        glfwTerminate();
        return 3;
    }
    glfwMakeContextCurrent(g.win);
    glfwSwapInterval(headless || scripted ? 0 : 1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    static std::string ini;
    if (headless || scripted) {
        io.IniFilename = nullptr;
    } else {
        std::error_code ec;
        fs::create_directories(config_dir(), ec);
        ini = (config_dir() / "imgui.ini").string();
        io.IniFilename = ini.c_str();
    }
    shell sh;
    float monitor_scale = 1, unused = 1;
    glfwGetWindowContentScale(g.win, &monitor_scale, &unused);
    sh.monitor_scale = monitor_scale;
    if (o.ui_scale > 0) sh.scale_override = o.ui_scale;
    scale_ui(sh, sh.wanted_ui_scale(), false);
    // Not ImGui's own GLFW callbacks: input goes through the queue (app/input.hpp) so that no tap is lost.
    ImGui_ImplGlfw_InitForOpenGL(g.win, false);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    g.input.install(g.win);
    g.input.devices(!headless && !scripted);              // screenshots show no hover; scripts are the only input
    if (scripted) g.fixed_frame_s = 1.0f / 64;            // a frame is 1/64 s of script time: exact in binary
    sh.loads.on_finished([] { glfwPostEmptyEvent(); });   // wakes the idle wait below
    sh.set_view(o.view);
    if (swp) sh.state.scaling = std::move(swp);

    if (headless) {
        // Load synchronously: the frames rendered are the loaded document (or the error).
        const auto t0 = std::chrono::steady_clock::now();
        int rc = 0;
        std::vector<std::filesystem::path> traces;
        if (lsn)
            for (const auto& path : lsn->trace_paths) traces.push_back(path);
        traces.insert(traces.end(), o.traces.begin(), o.traces.end());
        for (const auto& t : traces) {
            load_result r = loader::load_now(t);
            if (!r.file) {
                fmt::print(stderr, "pipescope-viewer: {}\n", r.error);
                rc = 2;
            } else {
                for (const std::string& note : {damage_note(*r.file), no_runs_note(*r.file)})   // shown, not errors: exit 0
                    if (!note.empty()) fmt::print(stderr, "pipescope-viewer: {}\n", note);
            }
            sh.add_loaded(std::move(r));
        }
        const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (lsn) {   // the step's move first: --range, --time, --select given too override it
            sh.lesson_loaded = std::move(*lsn);
            sh.go_to_step(o.lesson_step - 1);
        }
        if (!o.screenshot_steps.empty()) {
            const int wrc = screenshot_steps(g, sh, o.screenshot_steps);
            return wrc ? wrc : rc;
        }
        if (o.has_range) sh.state.frame_request = std::pair{o.range_a, o.range_b};
        if (o.has_time) sh.state.cursor = o.time;
        if (o.has_select && !apply_select(sh, o)) return 1;
        if (o.bench > 0) {
            if (sh.doc.empty()) {
                fmt::print(stderr, "pipescope-viewer: --bench needs a trace that loads\n");
                return 2;
            }
            for (int i = 0; i < 3; ++i) run_frame(g, sh);
            const double span = static_cast<double>(sh.doc.end - sh.doc.start);
            std::vector<double> out_ms, mid_ms;
            const int n_out = o.bench / 2, n_mid = o.bench - n_out;
            for (int i = 0; i < n_out; ++i) {   // full zoom-out, jittering by a few pixels
                sh.state.frame_request = std::pair{(i % 5) * span * 0.002, span + (i % 5) * span * 0.002};
                out_ms.push_back(run_frame(g, sh));
            }
            for (int i = 0; i < n_mid; ++i) {   // 1/1000 of the trace in view, panning across it
                const double w = span / 1000;
                const double a = (span - w) * (static_cast<double>(i) / std::max(1, n_mid - 1));
                sh.state.frame_request = std::pair{a, a + w};
                mid_ms.push_back(run_frame(g, sh));
            }
            const double rss = rss_mb();
            const double events = static_cast<double>(sh.doc.event_count());
            fmt::print(
                "bench: load {:.2f} s, {:.0f} events, frames {}: zoomed-out p50 {:.2f} ms p99 {:.2f} ms, mid-zoom p50 {:.2f} ms p99 {:.2f} ms, "
                "RSS {:.0f} MB ({:.1f} B/event)\n",
                load_s, events, o.bench, percentile(out_ms, 0.5), percentile(out_ms, 0.99), percentile(mid_ms, 0.5),
                percentile(mid_ms, 0.99), rss, events > 0 ? rss * 1048576.0 / events : 0.0);
            fmt::print("load_seconds {:.3f}\nevents {:.0f}\nframes {}\nzoomed_out_p50_ms {:.3f}\nzoomed_out_p99_ms {:.3f}\n"
                       "mid_zoom_p50_ms {:.3f}\nmid_zoom_p99_ms {:.3f}\nrss_mb {:.1f}\nrss_bytes_per_event {:.1f}\n",
                       load_s, events, o.bench, percentile(out_ms, 0.5), percentile(out_ms, 0.99), percentile(mid_ms, 0.5),
                       percentile(mid_ms, 0.99), rss, events > 0 ? rss * 1048576.0 / events : 0.0);
            return rc;
        }
        for (int i = 0; i < 3; ++i) run_frame(g, sh);
        bool ok = true;
        run_frame(g, sh, [&] { ok = write_png(g.win, o.screenshot); });
        if (!ok) {
            fmt::print(stderr, "pipescope-viewer: cannot write {}\n", o.screenshot);
            return 4;
        }
        fmt::print("pipescope-viewer: wrote {}\n", o.screenshot);
        return rc;
    }

    if (lsn) sh.open_lesson(std::move(*lsn), o.lesson_step - 1);
    for (const auto& t : o.traces) sh.open(t, open_origin::command_line);
    // --range, --time and --select apply once the files given have loaded.
    bool startup_pending = o.has_range || o.has_time || o.has_select;
    const frame_fn frame = [&](const std::function<void()>& before_swap) {
        if (startup_pending && !sh.loads.busy() && !sh.lesson_waiting()) {
            startup_pending = false;
            if (o.has_range) sh.state.frame_request = std::pair{o.range_a, o.range_b};
            if (o.has_time) sh.state.cursor = o.time;
            if (o.has_select) apply_select(sh, o);   // prints why if no run has the node; the window stays open
        }
        // The monitor's content scale (a window moved to a HiDPI screen) or View > UI scale changed.
        float sx = 1, sy = 1;
        glfwGetWindowContentScale(g.win, &sx, &sy);
        sh.monitor_scale = sx;
        if (std::abs(sh.wanted_ui_scale() - sh.ui_scale) > 0.01f) scale_ui(sh, sh.wanted_ui_scale(), true);
        run_frame(g, sh, before_swap);
    };
    if (scripted) return run_script(script, g, sh, frame);
    // An idle window sleeps until an event arrives: input, a resize, or a load finishing
    // (glfwPostEmptyEvent above). It draws continuously only while something moves on its own — a
    // replay playing, a load's spinner, a key held down (W zooms while held) — and for a few frames
    // after anything happened, which ImGui needs to settle (a window sizes itself on its second frame).
    constexpr int settle_frames = 3;
    int settle = settle_frames;
    while (!glfwWindowShouldClose(g.win) && !sh.quit) {
        const bool was_loading = sh.loads.busy();
        frame({});
        if (g.input.fed_last() || was_loading) settle = settle_frames;
        const bool animating = sh.loads.busy() || sh.state.playing || g.input.pending() || g.input.key_held();
        if (animating) continue;
        if (settle > 0) {
            --settle;
            continue;
        }
        glfwWaitEvents();
        settle = settle_frames;   // whatever woke us: draw it and let it settle
    }
    return 0;
}
