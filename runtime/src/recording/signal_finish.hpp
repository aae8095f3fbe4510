// SIGINT and SIGTERM finish the traces of the sessions that ask for it (trace_session_options::
// finish_on_signal, and every PIPESCOPE_TRACE session), then let the program's own handling go on.
//
// The handler only does what is async-signal-safe: it puts the previous disposition back (so a
// second signal is handled as the program would have handled it, ending a finish that hangs) and
// writes the signal's number into a pipe. A watcher thread reads it and, as an ordinary thread,
// has every registered session end its open run ("interrupted by SIGINT") and finish its file;
// then it restores the previous dispositions of both signals and raises the signal again: by
// default the process dies of it, with its traces whole; a handler of the program's is called.
// A signal whose disposition was SIG_IGN is left ignored. docs/tracing.md, "Signals".
#pragma once

namespace pipescope::detail {

class signal_client {
public:
    // On the watcher thread, before the signal is raised again; must not throw.
    virtual void finish_for_signal(int signal) noexcept = 0;

protected:
    ~signal_client() = default;
};

// The handlers are installed while at least one client is registered. unwatch_signals waits for a
// finish in progress, so a client may be destroyed once it returns.
void watch_signals(signal_client& client);
void unwatch_signals(signal_client& client) noexcept;

}   // namespace pipescope::detail
