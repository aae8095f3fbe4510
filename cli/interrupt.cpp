// interrupt_guard: SIGINT/SIGTERM -> a byte in a pipe -> the watcher thread -> request_stop().
#include "interrupt.hpp"

#include <fmt/format.h>

#include <csignal>
#include <stdexcept>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace pipescope::cli {

namespace {

int g_pipe[2] = {-1, -1};
struct sigaction g_old_int, g_old_term;

extern "C" void on_signal(int sig) {
    // The first signal asks for a clean stop; restoring the default action makes a second one
    // end the process, in case the clean stop itself hangs.
    std::signal(sig, SIG_DFL);
    const unsigned char b = static_cast<unsigned char>(sig);
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &b, 1);
}

}   // namespace

interrupt_guard::interrupt_guard(std::string what_stops) : what_stops_(std::move(what_stops)) {
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) throw std::runtime_error("cannot create the interrupt pipe");
    watcher_ = std::thread([this] {
        unsigned char b = 0;
        ssize_t n;
        do {
            n = ::read(g_pipe[0], &b, 1);
        } while (n < 0);
        if (b == 0) return;   // the destructor's wake-up: no signal came
        signal_ = b;
        fmt::print(stderr, "pipescope: {}: {}; a second one ends the process\n",
                   b == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)", what_stops_);
        source_.request_stop();
    });
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &g_old_int);
    ::sigaction(SIGTERM, &sa, &g_old_term);
}

interrupt_guard::~interrupt_guard() {
    ::sigaction(SIGINT, &g_old_int, nullptr);
    ::sigaction(SIGTERM, &g_old_term, nullptr);
    const unsigned char zero = 0;
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &zero, 1);
    watcher_.join();
    ::close(g_pipe[0]);
    ::close(g_pipe[1]);
    g_pipe[0] = g_pipe[1] = -1;
}

}   // namespace pipescope::cli
