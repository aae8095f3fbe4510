// Keeps the calling thread's CPU busy for `d` of wall time: a node's work in tests whose analysis
// compares service times or CPU shares (a sleep would leave the CPU idle and the worker parked).
#pragma once

#include <chrono>

namespace pipescope::testing {

inline void spin_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

}   // namespace pipescope::testing
