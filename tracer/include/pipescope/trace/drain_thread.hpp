// The consumer side of a recorder, on a thread of its own while a run goes on: it hands full
// chunks to a sink (the streaming Perfetto writer) and gives them back to the pool, so memory
// stays bounded whatever the run's length.
//
// It drains lazily: it sleeps until half the pool is full (a writer that fills the chunk reaching
// that count wakes it, once), then empties the pool in one burst. A run whose events fit in half
// the budget therefore never has the writer on its cores: on a machine whose cores all run workers,
// a writer that woke every millisecond took a core from a worker each time, and a fine-grained
// pipeline felt it (pipe-fib-256 at P = 2 on 2 cores ran 1.23x slower traced; lazily, 1.00x).
// The work is not gone: what is left is converted when the run ends (recorder::flush), which the
// run's measured time does not include. docs/tracing.md, "When the writer works".
//
// It also wakes once per `staleness` (default 1 s) and passes everything recorded so far — the
// partly filled chunks too (recorder::drain_recorded) — so that the file on disk never lags the
// run by more than that: a process killed with SIGKILL loses at most its last second. A staleness
// of 0 turns this off: the packets' boundaries then depend only on the records (full chunks), not
// on when the thread woke, which a virtual-time run needs (its file is the same every time).
#pragma once

#include <pipescope/trace/recorder.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

namespace pipescope::trace {

class drain_thread {
public:
    // Starts draining `rec` into `sink`. The sink runs on this thread only, one chunk at a time.
    drain_thread(recorder& rec, recorder::sink_fn sink,
                 std::chrono::milliseconds staleness = std::chrono::milliseconds(1000));
    ~drain_thread();   // stops it if stop() was not called (an error of the sink is then dropped)
    drain_thread(const drain_thread&) = delete;
    drain_thread& operator=(const drain_thread&) = delete;

    // Stops and joins the thread; the caller then flushes the recorder into the same sink (after
    // the recording threads have stopped). Rethrows what the sink threw (e.g. the disk is full):
    // the run went on, but the file cannot be finished.
    void stop();
    // Bursts the pool was drained in so far (each wake-up at half full).
    std::uint64_t bursts() const noexcept { return bursts_.load(std::memory_order_relaxed); }
    // Times it passed everything recorded because `staleness` had passed since the last time.
    std::uint64_t catch_ups() const noexcept { return catch_ups_.load(std::memory_order_relaxed); }

private:
    void join();   // asks the thread to stop, wakes it and waits for it

    recorder& rec_;
    recorder::sink_fn sink_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> bursts_{0};
    std::atomic<std::uint64_t> catch_ups_{0};
    std::exception_ptr error_;
    std::thread thread_;
};

}   // namespace pipescope::trace
