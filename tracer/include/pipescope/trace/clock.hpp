// Timestamps for the hot path: the CPU's time-stamp counter where there is one (a few ns, no
// system call), calibrated against std::chrono::steady_clock when the trace is written.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace pipescope::trace {

// A thread whose events carry virtual time (a virtual worker, docs/virtual.md) points this at its
// clock, in ns; its run is written with ticks = ns.
inline thread_local const std::uint64_t* tls_virtual_ticks = nullptr;

inline std::uint64_t now_ticks() noexcept {
    if (const std::uint64_t* v = tls_virtual_ticks) [[unlikely]]
        return *v;
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

inline std::uint64_t steady_ns() noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Two (ticks, ns) samples taken far apart give a linear map from ticks to steady_clock ns.
struct clock_sample {
    std::uint64_t ticks;
    std::uint64_t ns;
    static clock_sample take() noexcept {
        // Bracket the steady_clock read by two tick reads and use their midpoint.
        const std::uint64_t t0 = now_ticks();
        const std::uint64_t ns = steady_ns();
        const std::uint64_t t1 = now_ticks();
        return {t0 + (t1 - t0) / 2, ns};
    }
};

class tick_converter {
public:
    static tick_converter identity() noexcept { return {{0, 0}, {1, 1}}; }   // ticks that are ns
    tick_converter(clock_sample first, clock_sample last) noexcept : origin_(first) {
        const double dt = static_cast<double>(last.ticks - first.ticks);
        ns_per_tick_ = dt > 0 ? static_cast<double>(last.ns - first.ns) / dt : 1.0;
    }
    std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
        const double d = static_cast<double>(static_cast<std::int64_t>(ticks - origin_.ticks)) * ns_per_tick_;
        const double ns = static_cast<double>(origin_.ns) + d;
        return ns <= 0 ? 0 : static_cast<std::uint64_t>(ns);
    }
    double ns_per_tick() const noexcept { return ns_per_tick_; }

private:
    clock_sample origin_;
    double ns_per_tick_ = 1.0;
};

// The tick -> ns map of one run as a streaming writer needs it: fixed before the run ends. Either
// given (tests, replays), or calibrated from the run's origin sample the first time a timestamp is
// converted, once at least `min_span` has passed (it waits for the rest if need be). An invariant
// TSC runs at a constant rate, so a 20 ms baseline puts the rate within a few parts per million.
class run_clock {
public:
    static run_clock calibrating(clock_sample origin, std::chrono::milliseconds min_span = std::chrono::milliseconds(20)) {
        run_clock c;
        c.origin_ = origin;
        c.min_span_ = min_span;
        return c;
    }
    static run_clock fixed(const tick_converter& conversion, std::uint64_t start_ticks) {
        run_clock c;
        c.origin_ = {start_ticks, conversion.to_ns(start_ticks)};
        c.conversion_ = conversion;
        return c;
    }

    std::uint64_t start_ns() const noexcept { return origin_.ns; }
    std::uint64_t to_ns(std::uint64_t ticks) {
        if (!conversion_) calibrate();
        return conversion_->to_ns(ticks);
    }

private:
    void calibrate() {
        clock_sample now = clock_sample::take();
        const auto span = std::chrono::nanoseconds(now.ns - origin_.ns);
        if (span < min_span_) {
            std::this_thread::sleep_for(min_span_ - span);
            now = clock_sample::take();
        }
        conversion_.emplace(origin_, now);
    }

    clock_sample origin_{};
    std::chrono::milliseconds min_span_{0};
    std::optional<tick_converter> conversion_;
};

}   // namespace pipescope::trace
