// detail::spin_mutex (runtime/include/pipescope/detail/spin_mutex.hpp): mutual exclusion, including
// when there are more threads than cores, where a waiter must yield so that a preempted holder can
// finish (its unlock is a plain store: nobody parks, so nobody needs waking).
#include <pipescope/detail/spin_mutex.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

using pipescope::detail::spin_mutex;

TEST_CASE("spin_mutex: try_lock fails while held and succeeds after unlock", "[spin_mutex]") {
    spin_mutex m;
    REQUIRE(m.try_lock());
    CHECK_FALSE(m.try_lock());
    m.unlock();
    CHECK(m.try_lock());
    m.unlock();
}

TEST_CASE("spin_mutex: oversubscribed, every increment under the lock is kept and no two holders overlap",
          "[spin_mutex][stress]") {
    // Four times as many threads as this machine's cores (at least 8): holders get preempted inside
    // the critical section, so waiters go past their pause rounds into the yielding path.
    const unsigned threads = std::max(8u, 4 * std::thread::hardware_concurrency());
    constexpr int rounds = 20000;
    spin_mutex m;
    std::uint64_t plain_counter = 0;   // not atomic: only the lock protects it (TSan checks that)
    int inside = 0;                    // holders at once, as seen by the holders themselves
    int max_inside = 0;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&] {
            for (int i = 0; i < rounds; ++i) {
                std::lock_guard lock(m);
                max_inside = std::max(max_inside, ++inside);
                ++plain_counter;
                if (i % 64 == 0) std::this_thread::yield();   // a holder that leaves its core
                --inside;
            }
        });
    for (std::thread& t : pool) t.join();
    CHECK(plain_counter == std::uint64_t{threads} * rounds);
    CHECK(max_inside == 1);
}
