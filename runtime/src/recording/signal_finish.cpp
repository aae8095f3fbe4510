// signal_finish.hpp: SIGINT/SIGTERM -> a byte in a pipe -> the watcher thread -> finished traces ->
// the previous disposition, and the signal again.
#include "signal_finish.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

namespace pipescope::detail {

namespace {

constexpr int handled_signals[] = {SIGINT, SIGTERM};

// Read by the handler: set before the handlers are installed, unchanged while they are.
int g_pipe[2] = {-1, -1};
struct sigaction g_previous[2];
bool g_installed[2] = {false, false};

int slot(int sig) { return sig == SIGINT ? 0 : 1; }

extern "C" void on_finish_signal(int sig) {
    const int saved = errno;
    ::sigaction(sig, &g_previous[slot(sig)], nullptr);   // a second signal: the program's own handling
    const unsigned char b = static_cast<unsigned char>(sig);
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &b, 1);
    errno = saved;
}

// Never destroyed: a watcher thread may outlive static destruction (a session never destroyed).
struct watcher_state {
    std::mutex mutex;
    std::vector<signal_client*> clients;
    std::thread thread;
    bool handlers_installed = false;
};
watcher_state& state() {
    static watcher_state* s = new watcher_state;
    return *s;
}

void restore_handlers() {   // under the state's mutex
    for (int sig : handled_signals)
        if (g_installed[slot(sig)]) {
            ::sigaction(sig, &g_previous[slot(sig)], nullptr);
            g_installed[slot(sig)] = false;
        }
    state().handlers_installed = false;
}

void watch(int read_fd) {
    // Raise on this thread: it must not block the signals (a thread inherits its creator's mask).
    sigset_t set;
    sigemptyset(&set);
    for (int sig : handled_signals) sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    unsigned char b = 0;
    ssize_t n;
    do {
        n = ::read(read_fd, &b, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1 || b == 0) return;   // the last client left: no signal came
    const int sig = b;
    {
        watcher_state& s = state();
        std::lock_guard lock(s.mutex);
        for (signal_client* c : s.clients) c->finish_for_signal(sig);
        restore_handlers();
    }
    ::raise(sig);   // the program's own handling: by default the process ends here
}

// Wakes the watcher if it still waits, joins it and closes its pipe. Not under the mutex: a watcher
// that just read a signal needs it to finish the sessions.
void stop_watcher(std::thread thread, int read_fd, int write_fd) {
    const unsigned char zero = 0;
    [[maybe_unused]] const ssize_t n = ::write(write_fd, &zero, 1);
    thread.join();
    ::close(read_fd);
    ::close(write_fd);
}

}   // namespace

void watch_signals(signal_client& client) {
    watcher_state& s = state();
    std::lock_guard lock(s.mutex);
    s.clients.push_back(&client);
    if (s.handlers_installed) return;
    // A watcher that handled a signal (the program's handler let it live on) no longer needs the
    // mutex: it only raises the signal and returns.
    if (s.thread.joinable()) stop_watcher(std::move(s.thread), g_pipe[0], g_pipe[1]);
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
        s.clients.pop_back();
        throw std::system_error(errno, std::generic_category(), "trace_session: cannot create the signal pipe");
    }
    s.thread = std::thread(watch, g_pipe[0]);
    for (int sig : handled_signals) {
        struct sigaction previous {};
        ::sigaction(sig, nullptr, &previous);
        // A signal the program (or its parent: nohup) ignores stays ignored.
        if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) continue;
        g_previous[slot(sig)] = previous;
        struct sigaction sa {};
        sa.sa_handler = on_finish_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        g_installed[slot(sig)] = true;
        ::sigaction(sig, &sa, nullptr);
    }
    s.handlers_installed = true;
}

void unwatch_signals(signal_client& client) noexcept {
    watcher_state& s = state();
    std::thread thread;
    int read_fd = -1, write_fd = -1;
    {
        std::lock_guard lock(s.mutex);
        s.clients.erase(std::remove(s.clients.begin(), s.clients.end(), &client), s.clients.end());
        if (!s.clients.empty()) return;
        if (s.handlers_installed) restore_handlers();
        if (!s.thread.joinable()) return;
        thread = std::move(s.thread);
        read_fd = g_pipe[0];
        write_fd = g_pipe[1];
        g_pipe[0] = g_pipe[1] = -1;
    }
    stop_watcher(std::move(thread), read_fd, write_fd);
}

}   // namespace pipescope::detail
