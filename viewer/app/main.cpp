// pipescope-viewer: window and GL setup, the frame loop, and the headless modes (--screenshot,
// --bench); the command line is options.cpp. See docs/viewer.md.
//
// Exit status: 0 success; 1 usage error; 2 a trace or the lesson could not be loaded (with --screenshot
// the screenshot of a trace's error is still written and shows it); 3 no window/OpenGL; 4 the PNG could
// not be written.
#include "frame_log.hpp"
#include "options.hpp"
#include "script_runner.hpp"
#include "shell.hpp"
#include "window.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace pipescope::viewer;

namespace {

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

// --- before the window: the files read at once, so that a bad one is reported without a window ---

// The lesson of --lesson: 0, 2 if it does not load, 1 if it has no step --lesson-step.
int read_lesson(const viewer_options& o, std::optional<lesson>& lsn) {
    if (o.lesson.empty()) return 0;
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
    return 0;
}

// `pipescope-viewer DIR` (or DIR/scale.json) of `pipescope scale`: its traces, in the scaling view
// unless --view says otherwise. 0, or 2 if the sweep does not load.
int read_sweep(viewer_options& o, std::optional<sweep>& swp) {
    if (!o.lesson.empty() || o.traces.size() != 1 || !looks_like_sweep(o.traces[0])) return 0;
    try {
        swp = load_sweep(o.traces[0]);
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope-viewer: {}\n", e.what());
        return 2;
    }
    o.traces.clear();
    for (const fs::path& t : swp->traces()) o.traces.push_back(t.string());
    if (!o.view_given) o.view = "scaling";
    return 0;
}

// The steps of --script: 0, or 1 if it does not parse.
int read_script(const viewer_options& o, std::vector<script_step>& script) {
    if (!o.scripted()) return 0;
    try {
        script = load_script(o.script);
    } catch (const script_error& e) {
        fmt::print(stderr, "pipescope-viewer: {}\n", e.what());
        return 1;
    }
    return 0;
}

// --- the window and the UI on it ---------------------------------------------------------------

// An OpenGL 3.3 core window: 0, or 3 if there is no display or no such context. A headless or
// scripted window has the size asked for (a screenshot's size; a script's clicks land where they
// were written for), a user's the size asked for or 1440x900.
int open_window(gl_app& g, const viewer_options& o) {
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
    if (o.headless()) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
    const bool fixed_size = o.headless() || o.scripted() || o.size_given;
    const int W = fixed_size ? o.w : 1440, H = fixed_size ? o.h : 900;
    g.win = glfwCreateWindow(W, H, "pipescope-viewer", nullptr, nullptr);
    if (!g.win) {
        fmt::print(stderr, "pipescope-viewer: cannot create an OpenGL 3.3 window\n");
        glfwTerminate();
        return 3;
    }
    glfwMakeContextCurrent(g.win);
    glfwSwapInterval(o.headless() || o.scripted() ? 0 : 1);   // drawing for a file or a script waits for no screen
    return 0;
}

// ImGui's context. Only a user's window keeps its settings (imgui.ini): a screenshot or a script
// starts from none, so that what it shows does not depend on the last session.
void create_imgui(const viewer_options& o) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    static std::string ini;   // ImGui keeps the pointer
    if (o.headless() || o.scripted()) {
        io.IniFilename = nullptr;
    } else {
        std::error_code ec;
        fs::create_directories(config_dir(), ec);
        ini = (config_dir() / "imgui.ini").string();
        io.IniFilename = ini.c_str();
    }
}

// The UI scale (--ui-scale, else the monitor's), ImGui's GL backends and the input queue.
void set_up_ui(gl_app& g, shell& sh, const viewer_options& o) {
    float monitor_scale = 1, unused = 1;
    glfwGetWindowContentScale(g.win, &monitor_scale, &unused);
    sh.monitor_scale = monitor_scale;
    if (o.ui_scale > 0) sh.scale_override = o.ui_scale;
    scale_ui(sh, sh.wanted_ui_scale(), false);
    // Not ImGui's own GLFW callbacks: input goes through the queue (app/input.hpp) so that no tap is lost.
    ImGui_ImplGlfw_InitForOpenGL(g.win, false);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    g.input.install(g.win);
    g.input.devices(!o.headless() && !o.scripted());   // screenshots show no hover; scripts are the only input
    if (o.scripted()) g.fixed_frame_s = 1.0f / 64;     // a frame is 1/64 s of script time: exact in binary
}

// The monitor's content scale (a window moved to a HiDPI screen) or View > UI scale changed.
void follow_ui_scale(gl_app& g, shell& sh) {
    float sx = 1, sy = 1;
    glfwGetWindowContentScale(g.win, &sx, &sy);
    sh.monitor_scale = sx;
    if (std::abs(sh.wanted_ui_scale() - sh.ui_scale) > 0.01f) scale_ui(sh, sh.wanted_ui_scale(), true);
}

// --select: selects node (I, J) and, without --range, frames it with context on both sides.
bool apply_select(shell& sh, const viewer_options& o) {
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

// --range, --time and --select, on the loaded files (after a lesson step's move: they override
// it). False if no run has the node of --select (printed).
bool apply_view_options(shell& sh, const viewer_options& o) {
    if (o.has_range) sh.state.frame_request = std::pair{o.range_a, o.range_b};
    if (o.has_time) sh.state.cursor = o.time;
    return !o.has_select || apply_select(sh, o);
}

// --- headless: --screenshot, --screenshot-steps, --bench ---------------------------------------

// A few frames for the UI to settle (a window sizes itself on its second frame), then the next one
// into `png`: 0, or 4 if it could not be written.
int screenshot(gl_app& g, shell& sh, const std::string& png) {
    for (int i = 0; i < 3; ++i) run_frame(g, sh);
    bool ok = true;
    run_frame(g, sh, [&] { ok = write_png(g.win, png); });
    if (!ok) {
        fmt::print(stderr, "pipescope-viewer: cannot write {}\n", png);
        return 4;
    }
    fmt::print("pipescope-viewer: wrote {}\n", png);
    return 0;
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
        if (const int rc = screenshot(g, sh, (fs::path(dir) / ("step-" + std::to_string(k + 1) + ".png")).string()))
            return rc;
    }
    return 0;
}

// The lesson's traces, then those given, loaded before the first frame so that the frames drawn
// show the loaded document (or the error). 0, or 2 if one did not load (the others still show).
int load_all_now(shell& sh, const viewer_options& o, const std::optional<lesson>& lsn) {
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
    return rc;
}

// --bench N: frame times over a scripted pan/zoom, half zoomed out, half at 1/1000 of the trace,
// with the load time and the memory held; 0, or 2 with no trace to pan over.
int run_bench(gl_app& g, shell& sh, const viewer_options& o, double load_s) {
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
    const double out50 = percentile(out_ms, 0.5), out99 = percentile(out_ms, 0.99);
    const double mid50 = percentile(mid_ms, 0.5), mid99 = percentile(mid_ms, 0.99);
    const double per_event = events > 0 ? rss * 1048576.0 / events : 0.0;
    fmt::print(
        "bench: load {:.2f} s, {:.0f} events, frames {}: zoomed-out p50 {:.2f} ms p99 {:.2f} ms, mid-zoom p50 {:.2f} ms p99 {:.2f} ms, "
        "RSS {:.0f} MB ({:.1f} B/event)\n",
        load_s, events, o.bench, out50, out99, mid50, mid99, rss, per_event);
    fmt::print("load_seconds {:.3f}\nevents {:.0f}\nframes {}\nzoomed_out_p50_ms {:.3f}\nzoomed_out_p99_ms {:.3f}\n"
               "mid_zoom_p50_ms {:.3f}\nmid_zoom_p99_ms {:.3f}\nrss_mb {:.1f}\nrss_bytes_per_event {:.1f}\n",
               load_s, events, o.bench, out50, out99, mid50, mid99, rss, per_event);
    return 0;
}

// The headless modes: load, apply the lesson step and the options, draw, write, exit. A file that
// did not load makes the exit status 2 unless writing failed worse.
int run_headless(gl_app& g, shell& sh, const viewer_options& o, std::optional<lesson>& lsn) {
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = load_all_now(sh, o, lsn);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (lsn) {   // the step's move first: --range, --time, --select given too override it
        sh.lesson_loaded = std::move(*lsn);
        sh.go_to_step(o.lesson_step - 1);
    }
    if (!o.screenshot_steps.empty()) {
        const int wrc = screenshot_steps(g, sh, o.screenshot_steps);
        return wrc ? wrc : rc;
    }
    if (!apply_view_options(sh, o)) return 1;
    const int wrc = o.bench > 0 ? run_bench(g, sh, o, load_s) : screenshot(g, sh, o.screenshot);
    return wrc ? wrc : rc;
}

// --- the window a user (or a script) drives ----------------------------------------------------

// An idle window sleeps until an event arrives: input, a resize, or a load finishing
// (glfwPostEmptyEvent in main). It draws continuously only while something moves on its own — a
// replay playing, a load's spinner, a key held down (W zooms while held) — and for a few frames
// after anything happened, which ImGui needs to settle (a window sizes itself on its second frame).
void draw_until_closed(gl_app& g, shell& sh, const frame_fn& frame) {
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
}

// Opens the lesson and the traces in the background, as a user would, and draws until the window
// closes or the script ends (its exit status).
int run_window(gl_app& g, shell& sh, const viewer_options& o, std::optional<lesson>& lsn,
               const std::vector<script_step>& script) {
    if (lsn) sh.open_lesson(std::move(*lsn), o.lesson_step - 1);
    for (const auto& t : o.traces) sh.open(t, open_origin::command_line);
    // --range, --time and --select apply once the files given have loaded.
    bool startup_pending = o.has_range || o.has_time || o.has_select;
    frame_log frame_times;   // $PIPESCOPE_FRAME_LOG (app/frame_log.hpp)
    const frame_fn frame = [&](const std::function<void()>& before_swap) {
        if (startup_pending && !sh.loads.busy() && !sh.lesson_waiting()) {
            startup_pending = false;
            apply_view_options(sh, o);   // prints why if no run has the node; the window stays open
        }
        follow_ui_scale(g, sh);
        frame_times.add(run_frame(g, sh, before_swap), sh.runs.recording());
    };
    if (o.scripted()) return run_script(script, g, sh, frame);
    draw_until_closed(g, sh, frame);
    return 0;
}

}   // namespace

int main(int argc, char** argv) {
    viewer_options o;
    if (int rc = parse_viewer_options(argc, argv, o)) return rc;
    std::optional<lesson> lsn;
    std::optional<sweep> swp;
    std::vector<script_step> script;
    if (int rc = read_lesson(o, lsn)) return rc;
    if (int rc = read_sweep(o, swp)) return rc;
    if (int rc = read_script(o, script)) return rc;

    gl_app g;   // before the shell, so that the shell is destroyed first, while ImGui and GL still exist
    if (int rc = open_window(g, o)) return rc;
    create_imgui(o);
    shell sh;
    sh.keep_state_of_all_files = !o.headless() && !o.scripted();   // a user's window: every file's arrangement
    set_up_ui(g, sh, o);
    sh.loads.on_finished([] { glfwPostEmptyEvent(); });   // wakes draw_until_closed's idle wait
    sh.runs.on_change = [] { glfwPostEmptyEvent(); };     // and a run panel's progress
    sh.set_view(o.view);
    if (swp) sh.state.scaling = std::move(swp);
    return o.headless() ? run_headless(g, sh, o, lsn) : run_window(g, sh, o, lsn, script);
}
