// What a measured interval of a virtual actor costs (docs/virtual.md, "Pricing nodes cheaper than a
// clock read"). A pure function of the clock readings, so that the tests can feed it fixed ones.
//
// An interval between two yield points is read with two clocks, nested: the thread CPU clock
// outside (read first at the mark, last at the end) and the wall clock inside it (read last at the
// mark, first at the end). The thread CPU clock is a system call (~180-530 ns on the machines the
// docs name), the wall clock a vDSO read (~20-25 ns): a node of 150 ns is smaller than the first
// clock's read and its variation, but several times the second's. So:
//   - While the thread kept its CPU all along, the wall interval is the node's own time plus one
//     wall read; it is priced `wall - wall_clock_read`. The check is exact: the wall readings lie
//     inside the CPU readings, so a wall interval no longer than the CPU interval cannot contain a
//     stretch when another thread ran (that would add at least a context switch, microseconds).
//   - Otherwise (preempted, or time the hypervisor stole, which the thread CPU clock leaves out)
//     the wall interval holds other threads' time: only the thread CPU clock counts the thread's
//     own, priced as before, `cpu - clock_read`.
// A node's measure may start after its interval's and end before it (skipped_wall_ns): only the
// wall clock's reads move, and the check is made on the whole wall interval, which still lies
// inside the CPU reads.
#pragma once

#include <cstdint>

namespace pipescope::detail {

struct interval_reading {
    std::uint64_t cpu_ns = 0;    // thread CPU clock, end - mark
    std::uint64_t wall_ns = 0;   // wall clock (CLOCK_MONOTONIC), end - mark, read inside the CPU reads
    // Wall time at the interval's start and end that is not to be priced (a pipeline node's way
    // from its boundary's yield point into the body, virtual_actor::node_begins, and from the
    // body's end down to the next yield point, node_ends), read with the same clock as wall_ns. It
    // still counts in the check: wall_ns + skipped_wall_ns is the wall interval nested in the CPU
    // reads.
    std::uint64_t skipped_wall_ns = 0;
};

struct interval_price {
    std::uint64_t ns = 0;
    bool by_cpu_clock = false;   // the thread lost its CPU meanwhile: priced by the CPU clock
};

inline interval_price price_interval(interval_reading r, std::uint64_t clock_read_ns,
                                     std::uint64_t wall_clock_read_ns) noexcept {
    auto less = [](std::uint64_t v, std::uint64_t off) { return v > off ? v - off : 0; };
    if (r.wall_ns + r.skipped_wall_ns <= r.cpu_ns) return {less(r.wall_ns, wall_clock_read_ns), false};
    return {less(r.cpu_ns, clock_read_ns), true};   // the skipped part included: rare, and small
}

}   // namespace pipescope::detail
