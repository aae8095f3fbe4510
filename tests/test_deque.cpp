#include <pipescope/detail/chase_lev_deque.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

using pipescope::detail::chase_lev_deque;

TEST_CASE("deque: the owner pops in LIFO order, thieves steal in FIFO order", "[deque]") {
    chase_lev_deque<int*> d(4);   // small ring: pushing 100 forces several grows
    std::vector<int> values(100);
    for (auto& v : values) d.push(&v);
    CHECK(d.steal() == &values[0]);
    CHECK(d.steal() == &values[1]);
    CHECK(d.pop() == &values[99]);
    for (int i = 98; i >= 2; --i) REQUIRE(d.pop() == &values[i]);
    CHECK(d.pop() == nullptr);
    CHECK(d.steal() == nullptr);
    CHECK(d.looks_empty());
}

TEST_CASE("deque: under concurrent stealing every item is taken exactly once", "[deque][stress]") {
    constexpr int items = 200000;
    constexpr int thieves = 3;
    std::vector<int> values(items);
    std::vector<std::atomic<int>> taken(items);
    chase_lev_deque<int*> d(8);
    std::atomic<bool> done{false};
    auto take = [&](int* p) { taken[static_cast<std::size_t>(p - values.data())].fetch_add(1); };

    std::vector<std::thread> ts;
    for (int t = 0; t < thieves; ++t)
        ts.emplace_back([&] {
            while (!done.load()) {
                if (int* p = d.steal()) take(p);
            }
            while (int* p = d.steal()) take(p);
        });
    // The owner interleaves pushes and pops, so pops race steals for the last element.
    for (int i = 0; i < items; ++i) {
        d.push(&values[i]);
        if (i % 3 == 0)
            if (int* p = d.pop()) take(p);
    }
    while (int* p = d.pop()) take(p);
    done.store(true);
    for (auto& t : ts) t.join();

    int missing = 0, duplicated = 0;
    for (auto& t : taken) {
        missing += t.load() == 0;
        duplicated += t.load() > 1;
    }
    CHECK(missing == 0);
    CHECK(duplicated == 0);
}
