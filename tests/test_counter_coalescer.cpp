// The writer's counter coalescing (tracer/src/counter_coalescer.hpp, docs/tracing.md "Counters"):
// samples closer than the quantum collapse into the window's last value, with its peak before it
// when the peak came earlier; windows are per track; flush() emits what is still open.
#include "../tracer/src/counter_coalescer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace {

using sample = std::tuple<std::uint64_t, std::uint64_t, std::int64_t>;   // track, ts, value

struct collected {
    std::vector<sample> out;
    void operator()(std::uint64_t track, std::uint64_t ts, std::int64_t v) { out.emplace_back(track, ts, v); }
};

}   // namespace

TEST_CASE("counter coalescing: a quantum of 0 writes every sample as it comes", "[trace][counters]") {
    pipescope::trace::detail::counter_coalescer c(0);
    collected got;
    for (std::uint64_t t = 0; t < 5; ++t) c.add(7, t, static_cast<std::int64_t>(t % 2), got);
    CHECK(got.out.size() == 5);
    c.flush(got);
    CHECK(got.out.size() == 5);
}

TEST_CASE("counter coalescing: changes within a quantum keep the last value and an earlier peak", "[trace][counters]") {
    pipescope::trace::detail::counter_coalescer c(1000);
    collected got;
    // Window [100, 1100): 3, 9 (peak), 4 (last). Window [2000, 3000): 5, 6 (peak = last).
    c.add(1, 100, 3, got);
    c.add(1, 300, 9, got);
    c.add(1, 900, 4, got);
    CHECK(got.out.empty());   // still open
    c.add(1, 2000, 5, got);   // closes the first window
    CHECK(got.out == std::vector<sample>{{1, 300, 9}, {1, 900, 4}});
    c.add(1, 2500, 6, got);
    c.flush(got);
    CHECK(got.out == std::vector<sample>{{1, 300, 9}, {1, 900, 4}, {1, 2500, 6}});
    // The peak over everything written equals the peak over everything recorded.
    std::int64_t peak = 0;
    for (const auto& s : got.out) peak = std::max(peak, std::get<2>(s));
    CHECK(peak == 9);
}

TEST_CASE("counter coalescing: tracks have their own windows", "[trace][counters]") {
    pipescope::trace::detail::counter_coalescer c(1000);
    collected got;
    c.add(1, 0, 1, got);
    c.add(2, 10, 8, got);
    c.add(1, 20, 2, got);
    c.add(2, 1500, 0, got);   // closes track 2's window only
    CHECK(got.out == std::vector<sample>{{2, 10, 8}});
    c.flush(got);
    std::sort(got.out.begin(), got.out.end());
    CHECK(got.out == std::vector<sample>{{1, 20, 2}, {2, 10, 8}, {2, 1500, 0}});
}

TEST_CASE("counter coalescing: a burst of a million changes costs two samples per quantum at most", "[trace][counters]") {
    pipescope::trace::detail::counter_coalescer c(1000);
    collected got;
    std::int64_t peak = 0;
    for (std::uint64_t t = 0; t < 1'000'000; ++t) {   // one change per ns for 1 ms
        const auto v = static_cast<std::int64_t>((t * 2654435761u) % 1000);
        peak = std::max(peak, v);
        c.add(3, t, v, got);
    }
    c.flush(got);
    CHECK(got.out.size() <= 2 * 1000);
    std::int64_t written_peak = 0;
    for (const auto& s : got.out) written_peak = std::max(written_peak, std::get<2>(s));
    CHECK(written_peak == peak);
    CHECK(std::get<2>(got.out.back()) == static_cast<std::int64_t>((999'999ull * 2654435761u) % 1000));
}
