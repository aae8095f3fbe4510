// Timestamps for the hot path: the CPU's time-stamp counter where there is one (a few ns, no
// system call), calibrated against std::chrono::steady_clock when the trace is written.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace pipescope::trace {

inline std::uint64_t now_ticks() noexcept {
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

}  // namespace pipescope::trace
