// analysis/numbers.hpp: how pipescope writes durations, percentages, counts, ratios, rates and sizes.
#include <pipescope/analysis/numbers.hpp>

#include <catch2/catch.hpp>

namespace numbers = pipescope::analysis::numbers;

TEST_CASE("numbers: durations in the largest unit they reach", "[analysis][numbers]") {
    CHECK(numbers::duration(512) == "512 ns");
    CHECK(numbers::duration(3400) == "3.40 \xC2\xB5s");
    CHECK(numbers::duration(1.5e6) == "1.500 ms");
    CHECK(numbers::duration(2.25e9) == "2.250 s");
    CHECK(numbers::duration(1500, 2) == "1.5 \xC2\xB5s");   // trailing zeros dropped
    CHECK(numbers::duration(2e6, 3) == "2 ms");
    CHECK(numbers::duration(12.25, 3) == "12.2 ns");   // ns: at most one decimal
    CHECK(numbers::duration(-0.01, 0) == "0 ns");
}

TEST_CASE("numbers: percentages, counts, ratios, fixed, rates, bytes", "[analysis][numbers]") {
    CHECK(numbers::percent(0.421) == "42 %");
    CHECK(numbers::percent(0.4216, 1) == "42.2 %");
    CHECK(numbers::percent(1.5) == "150 %");
    CHECK(numbers::short_percent(0.125, 2) == "12.5 %");
    CHECK(numbers::short_percent(0.5, 4) == "50 %");
    CHECK(numbers::short_percent(1.0 / 3, 1) == "33.3 %");
    CHECK(numbers::count(0) == "0");
    CHECK(numbers::count(999) == "999");
    CHECK(numbers::count(18519) == "18,519");
    CHECK(numbers::count(1234567) == "1,234,567");
    CHECK(numbers::ratio(3.42) == "3.4\xC3\x97");
    CHECK(numbers::ratio(12.4) == "12\xC3\x97");
    CHECK(numbers::ratio(12.4, 2) == "12.40\xC3\x97");
    CHECK(numbers::fixed(3.4, 2) == "3.40");
    CHECK(numbers::rate(512) == "512.0");
    CHECK(numbers::rate(2.5e4) == "25.00 k");
    CHECK(numbers::rate(1.25e6) == "1.25 M");
    CHECK(numbers::bytes(512) == "512 B");
    CHECK(numbers::bytes(1536) == "1.5 KiB");
    CHECK(numbers::bytes(2.25 * 1024 * 1024) == "2.25 MiB");
}

TEST_CASE("numbers: a value of no unit, as a counter's", "[analysis][numbers]") {
    CHECK(numbers::value(0) == "0");
    CHECK(numbers::value(12) == "12");
    CHECK(numbers::value(1234) == "1,234");
    CHECK(numbers::value(-3) == "-3");
    CHECK(numbers::value(2.5) == "2.5");
    CHECK(numbers::value(0.125) == "0.125");
    CHECK(numbers::value(1.0 / 3) == "0.333");
    CHECK(numbers::value(1e20) == "1e+20");
}
