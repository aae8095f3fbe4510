// Internal: a mutex for critical sections of a few dozen instructions that several workers enter
// at high rates — the stage graph's queue bookkeeping and per-stage reservations.
//
// std::mutex sleeps in the kernel as soon as it finds the lock taken. When the holder runs on
// another core and leaves within a few hundred nanoseconds, that sleep and the wake-up that follows
// cost tens of microseconds of system time and a context switch each: on two workers ray-1 made
// ~150 k futex calls per run, 26 % of the workers' time in the kernel. So this lock spins (a pause
// per round, re-reading before it tries again so the line stays shared while it is taken).
//
// Why unlock() is a plain store. A lock that parks its waiters must learn on unlock whether one is
// parked, which takes a locked read-modify-write (Drepper's "Futexes Are Tricky", mutex 3: an
// exchange) — and a graph step takes nine such locks at P = 1, where that exchange was a quarter of
// each queue operation's samples (issue 17). So no waiter parks: after the pause rounds (a few
// microseconds, longer than any critical section it guards) it gives its core away with a yield
// before each further look, which is what lets a preempted holder run again when the machine is
// oversubscribed — the same back-off as oneTBB's spin_mutex. Taking the lock is one CAS, leaving it
// one release store.
#pragma once

#include <pipescope/detail/cpu_relax.hpp>

#include <atomic>
#include <cstdint>
#include <thread>

namespace pipescope::detail {

class spin_mutex {
public:
    // Rounds of spinning before yielding: a few microseconds, longer than the critical sections it
    // guards and much shorter than a time slice.
    static constexpr int spin_rounds = 256;

    bool try_lock() noexcept {
        std::uint32_t expected = 0;
        return word_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
    }

    void lock() noexcept {
        if (try_lock()) return;
        for (int i = 0;; ++i) {
            if (i < spin_rounds) cpu_relax();
            else std::this_thread::yield();   // the holder may be preempted: let it run
            if (word_.load(std::memory_order_relaxed) == 0 && try_lock()) return;
        }
    }

    void unlock() noexcept { word_.store(0, std::memory_order_release); }

private:
    std::atomic<std::uint32_t> word_{0};
};

}   // namespace pipescope::detail
