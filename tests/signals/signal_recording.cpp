// A program that records until it is signalled: what tests/signals/signal_recording.sh sends SIGINT
// or SIGTERM to (docs/tracing.md, "Signals").
//
//     signal_recording session TRACE       trace_session with finish_on_signal; the default disposition
//     signal_recording own-handler TRACE   the same, but the program has its own SIGINT/SIGTERM handler,
//                                          which stops the loop; the program then exits 3
//     signal_recording plain [SPIN_US]     no session of its own (run it under PIPESCOPE_TRACE=TRACE);
//                                          SPIN_US: each iteration's work (default 50 µs)
//
// It prints "recording" once its loop runs (the handlers are installed by then), and loops until
// its own handler stops it; without one, the signal ends the process.
#include <pipescope/pipescope.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace {

// Lock-free atomic, not a volatile sig_atomic_t: the handler may run on another thread (the session's
// watcher raises the signal again on itself) while the loop's condition reads the flag.
std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free, "async-signal-safe only if lock-free");
extern "C" void on_signal(int) { g_stop.store(1); }

void spin_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

}   // namespace

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    const std::string mode = argv[1];
    if (mode != "plain" && argc < 3) return 2;
    if (mode == "own-handler") {
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, nullptr);
        sigaction(SIGTERM, &sa, nullptr);
    }
    const long spin_us = mode == "plain" && argc > 2 ? std::atol(argv[2]) : 50;
    pipescope::scheduler sched({2});
    std::optional<pipescope::trace_session> rec;
    if (mode != "plain")
        rec.emplace(sched, argv[2], pipescope::trace_session_options{.name = "signalled", .finish_on_signal = true});
    std::atomic<bool> announced{false};
    pipescope::pipe_while(
        sched, [&] { return g_stop.load() == 0; },
        [&](pipescope::iteration& it) -> pipescope::pipe_task {
            if (!announced.exchange(true)) {
                std::printf("recording\n");
                std::fflush(stdout);
            }
            co_await it.stage(1);
            spin_for(std::chrono::microseconds(spin_us));
            co_await it.stage_wait(2);
        },
        {.name = "until signalled"});
    if (rec) rec->close();
    std::printf("own handler ran; the loop stopped\n");
    return 3;
}
