// A test hook for piper-earliest (seed 003 §4.2): when installed, every resumption the policy makes
// at one of its three points (an iteration retires, an iteration suspends, a steal found nothing)
// is checked to be of the earliest suspended iteration whose cross edge is satisfied.
//
// The check is lock-free and sound under concurrency. Before the policy scans its suspended list,
// the check snapshots every suspended iteration y: its status word (serial number included) and
// whether its edge is satisfied already. After the scan claimed iteration x (or found nothing), y is
// a violation if it was satisfied before the scan, is earlier than x (or nothing was found), and its
// status word is still the same. Same word means y stayed suspended through the whole scan (a claim
// changes the word for good), and an edge once satisfied stays so; the scan therefore saw y
// suspended and satisfied and should have resumed it instead of x.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace pipescope::detail {

struct earliest_check {
    // Indexed by the point: 0 an iteration retired, 1 an iteration suspended, 2 a steal found nothing.
    std::atomic<std::uint64_t> scans[3]{};       // times the policy looked for the earliest at that point
    std::atomic<std::uint64_t> resumed[3]{};     // ... and resumed an iteration
    std::atomic<std::uint64_t> passed_over{0};   // suspended iterations scanned past (edge not satisfied)
    std::atomic<std::uint64_t> violations{0};

    void fail(const std::string& what) {
        violations.fetch_add(1);
        std::lock_guard lock(mutex_);
        if (first_.empty()) first_ = what;
    }
    std::string first_violation() {
        std::lock_guard lock(mutex_);
        return first_;
    }

private:
    std::mutex mutex_;
    std::string first_;
};

// Process-wide; loops started while it is installed use it. nullptr removes it.
void set_earliest_check(earliest_check* c) noexcept;

}   // namespace pipescope::detail
