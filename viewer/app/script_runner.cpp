#include "script_runner.hpp"

#include "state_dump.hpp"

#include <GLFW/glfw3.h>
#include <fmt/core.h>

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace pipescope::viewer {

namespace {

using json = nlohmann::json;

// A frame or two after an input so that what it asked for (a frame request, a view switch made at
// the end of a frame) has been drawn before the next check.
constexpr int settle_frames = 2;
constexpr double load_timeout_s = 300;

class runner {
public:
    runner(gl_app& g, shell& sh, const frame_fn& frame) : g_(g), sh_(sh), frame_(frame) {}

    int run(const std::vector<script_step>& steps) {
        for (const auto& s : steps) step(s);
        return status_;
    }

private:
    gl_app& g_;
    shell& sh_;
    const frame_fn& frame_;
    int status_ = 0;

    void frames(int n) {
        for (int i = 0; i < n; ++i) frame_({});
    }

    void fail(const script_step& s, const std::string& why, int code = 5) {
        fmt::print(stderr, "pipescope-viewer: script line {}: {}: {}\n", s.line, s.text, why);
        if (status_ == 0 || code == 4) status_ = code;
    }

    window_size size() const {
        window_size w;
        glfwGetWindowSize(g_.win, &w.width, &w.height);
        return w;
    }

    void step(const script_step& s) {
        using op = script_step::op;
        switch (s.what) {
            case op::input:
                for (const auto& e : s.events) g_.input.push(e);
                while (g_.input.pending()) frames(1);
                frames(settle_frames);
                break;
            case op::frames: frames(s.count); break;
            case op::wait_loaded: wait_loaded(s); break;
            case op::screenshot: {
                bool ok = true;
                frame_([&] { ok = write_png(g_.win, s.path); });
                if (!ok) fail(s, "cannot write " + s.path, 4);
                else fmt::print("pipescope-viewer: wrote {}\n", s.path);
                break;
            }
            case op::dump: {
                std::ofstream out(s.path, std::ios::trunc);
                out << dump_state(sh_, size()).dump(2) << '\n';
                if (!out) fail(s, "cannot write " + s.path, 4);
                else fmt::print("pipescope-viewer: wrote {}\n", s.path);
                break;
            }
            case op::expect: expect(s); break;
            case op::resize:
                glfwSetWindowSize(g_.win, s.width, s.height);
                for (int i = 0; i < 100 && (size().width != s.width || size().height != s.height); ++i) frames(1);
                frames(settle_frames);
                if (size().width != s.width || size().height != s.height) fail(s, "the window did not take the size");
                break;
            case op::drop:
                g_.input.drop(s.paths);
                frames(settle_frames);
                break;
            case op::devices: g_.input.devices(s.count != 0); break;
            case op::shell: shell_command(s); break;
        }
    }

    // The command runs beside the frame loop, as a user's hands beside a window: what it sends the
    // X server (xdotool) arrives through the GLFW callbacks.
    void shell_command(const script_step& s) {
        std::atomic<bool> done = false;
        int rc = 0;
        std::thread t([&] {
            rc = std::system(s.path.c_str());
            done = true;
        });
        while (!done) {
            // As the window a user drives: asleep until input comes (draw_until_closed, main.cpp),
            // so the first event of a chord wakes it alone, and the rest arrive while it draws.
            if (!g_.input.pending()) glfwWaitEventsTimeout(0.05);
            frames(1);
        }
        t.join();
        frames(settle_frames);   // the last events the command caused reach the queue
        while (g_.input.pending()) frames(1);
        frames(settle_frames);
        if (rc != 0) fail(s, "exit status " + std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : rc));
    }

    void wait_loaded(const script_step& s) {
        const auto t0 = std::chrono::steady_clock::now();
        while (sh_.loads.busy() || sh_.lesson_waiting() || sh_.runs.busy()) {
            frames(1);
            if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > load_timeout_s) {
                fail(s, "still loading after " + std::to_string(static_cast<int>(load_timeout_s)) + " s");
                return;
            }
        }
        frames(settle_frames);
    }

    void expect(const script_step& s) {
        const json state = dump_state(sh_, size());
        json got;
        try {
            got = state.at(json::json_pointer(s.pointer));
        } catch (const json::exception&) {
            fail(s, "the state has no " + s.pointer);
            return;
        }
        json want = json::parse(s.value, nullptr, false);
        if (want.is_discarded()) want = s.value;   // a bare word: a string
        bool holds = false;
        if (s.compare == "==" || s.compare == "!=") {
            const bool equal = got.is_number() && want.is_number() ? got.get<double>() == want.get<double>() : got == want;
            holds = equal == (s.compare == "==");
        } else if (got.is_number() && want.is_number()) {
            const double a = got.get<double>(), b = want.get<double>();
            holds = s.compare == "<" ? a < b : s.compare == "<=" ? a <= b : s.compare == ">" ? a > b : a >= b;
        } else {
            fail(s, "got " + got.dump() + ": " + s.compare + " compares numbers");
            return;
        }
        if (!holds) fail(s, "got " + got.dump());
    }
};

}   // namespace

int run_script(const std::vector<script_step>& steps, gl_app& g, shell& sh, const frame_fn& frame) {
    return runner(g, sh, frame).run(steps);
}

}   // namespace pipescope::viewer
