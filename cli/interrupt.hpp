// Ctrl-C (SIGINT) and SIGTERM during `pipescope run` cancel the measured loop instead of killing the
// process: the loop stops through pipeline_options::cancel (docs/runtime.md, "Cancellation"), the
// trace is finished with its "cancelled" marker, and the command exits 130. A second signal while
// the first is being handled ends the process at once (the default action), as users expect.
//
// A signal handler may only do async-signal-safe things, so it writes one byte into a pipe; a
// watcher thread reads it and requests the stop. While an interrupt_guard lives, the signals are
// handled this way; its destructor restores the previous handlers.
#pragma once

#include <stop_token>
#include <string>
#include <thread>

namespace pipescope::cli {

class interrupt_guard {
public:
    // what_stops: what the first signal does, for the line it prints.
    explicit interrupt_guard(std::string what_stops = "stopping the loop (cancellation)");
    ~interrupt_guard();
    interrupt_guard(const interrupt_guard&) = delete;
    interrupt_guard& operator=(const interrupt_guard&) = delete;

    std::stop_token token() const { return source_.get_token(); }
    bool interrupted() const { return source_.stop_requested(); }
    int signal_number() const { return signal_; }

private:
    std::stop_source source_;
    std::thread watcher_;
    std::string what_stops_;
    int signal_ = 0;
};

}   // namespace pipescope::cli
