// Counter samples of one writer's sequence, coalesced in time (docs/tracing.md, "Counters"): the
// changes of one counter closer together than a quantum collapse into the last value of that
// window, preceded by the window's peak when the peak came earlier and was higher — so a peak is
// never lost, and a counter that changes every few nanoseconds costs at most two samples per
// quantum. Internal to the tracer (the writer's building block).
//
// The windows are per sequence (one recording thread's records arrive in time order; different
// threads' records do not), so a counter several threads change keeps each thread's peaks.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace pipescope::trace::detail {

class counter_coalescer {
public:
    explicit counter_coalescer(std::uint64_t quantum_ns) : quantum_(quantum_ns) {}

    // A sample of `track`; `emit(track, ts, value)` is called for what is due now (a quantum of 0
    // emits every sample at once).
    template <class Emit>
    void add(std::uint64_t track, std::uint64_t ts, std::int64_t value, Emit&& emit) {
        if (quantum_ == 0) {
            emit(track, ts, value);
            return;
        }
        window& w = windows_[track];
        if (w.open && ts < w.start + quantum_) {
            w.last_ts = ts;
            w.last = value;
            if (value > w.peak) w.peak = value, w.peak_ts = ts;
            return;
        }
        if (w.open) close(track, w, emit);
        w = {ts, ts, ts, value, value, true};
    }

    // Emits every open window (the run ends, or events were lost and the sequence restarts).
    template <class Emit>
    void flush(Emit&& emit) {
        for (auto& [track, w] : windows_)
            if (w.open) close(track, w, emit);
    }

private:
    struct window {
        std::uint64_t start = 0, last_ts = 0, peak_ts = 0;
        std::int64_t last = 0, peak = 0;
        bool open = false;
    };

    template <class Emit>
    static void close(std::uint64_t track, window& w, Emit& emit) {
        if (w.peak > w.last && w.peak_ts < w.last_ts) emit(track, w.peak_ts, w.peak);
        emit(track, w.last_ts, w.last);
        w.open = false;
    }

    std::uint64_t quantum_;
    std::unordered_map<std::uint64_t, window> windows_;
};

}   // namespace pipescope::trace::detail
