// What a checking observer found wrong, from any worker: a count and the first message (the one
// a failing test prints). Lock-free on the common, violation-free path.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace pipescope::testing {

class violation_log {
public:
    void fail(const std::string& what) {
        if (violations_.fetch_add(1) == 0) {
            std::lock_guard lock(mutex_);
            first_ = what;
        }
    }
    std::uint64_t violations() const { return violations_.load(); }
    std::string first_violation() const {
        std::lock_guard lock(mutex_);
        return first_;
    }

private:
    std::atomic<std::uint64_t> violations_{0};
    mutable std::mutex mutex_;
    std::string first_;
};

}   // namespace pipescope::testing
