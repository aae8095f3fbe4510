// Internal: a mutex for critical sections of a few dozen instructions that several workers enter
// at high rates — the stage graph's queue bookkeeping and per-stage reservations.
//
// std::mutex sleeps in the kernel as soon as it finds the lock taken. When the holder runs on
// another core and leaves within a few hundred nanoseconds, that sleep and the wake-up that follows
// cost tens of microseconds of system time and a context switch each: on two workers ray-1 made
// ~150 k futex calls per run, 26 % of the workers' time in the kernel. So this lock spins first
// (a pause per round, re-reading before it tries again so the line stays shared while it is
// taken), and only parks when the holder is evidently not about to leave: it was preempted, or the
// machine is oversubscribed. Parking uses the futex behind std::atomic::wait.
//
// The lock word: 0 free, 1 taken, 2 taken and somebody may be parked (Drepper, "Futexes Are
// Tricky", mutex 3): unlock() only makes the wake-up call when a waiter announced itself.
#pragma once

#include <pipescope/detail/cpu_relax.hpp>

#include <atomic>
#include <cstdint>

namespace pipescope::detail {

class spin_mutex {
public:
    // Rounds of spinning before parking: a few microseconds, longer than the critical sections it
    // guards and much shorter than a sleep and wake-up.
    static constexpr int spin_rounds = 256;

    bool try_lock() noexcept {
        std::uint32_t expected = 0;
        return word_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
    }

    void lock() noexcept {
        if (try_lock()) return;
        for (int i = 0; i < spin_rounds; ++i) {
            cpu_relax();
            if (word_.load(std::memory_order_relaxed) == 0 && try_lock()) return;
        }
        // Park: mark the lock contended (2) and sleep while it stays taken. Whoever takes it from
        // here takes it as 2, so the unlock that follows wakes the next sleeper, if any.
        while (word_.exchange(2, std::memory_order_acquire) != 0) word_.wait(2, std::memory_order_relaxed);
    }

    void unlock() noexcept {
        if (word_.exchange(0, std::memory_order_release) == 2) word_.notify_one();
    }

private:
    std::atomic<std::uint32_t> word_{0};
};

}   // namespace pipescope::detail
