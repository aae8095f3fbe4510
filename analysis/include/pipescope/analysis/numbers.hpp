// How pipescope writes a number for people: one formatter for the analysis, the CLI and the viewer,
// so that a duration, a percentage or a count reads the same wherever it appears.
//
//   numbers::duration(1.5e6)      "1.500 ms"   (numbers::duration(1.5e6, 2): "1.5 ms", trailing zeros dropped)
//   numbers::percent(0.42)        "42 %"       (a space before the sign, as in the docs)
//   numbers::short_percent(0.125, 2)  "12.5 %"  (trailing zeros dropped, for axis ticks)
//   numbers::count(18519)         "18,519"
//   numbers::ratio(3.42)          "3.4×"       (whole numbers from 10×)
//   numbers::fixed(3.4, 2)        "3.40"
//   numbers::rate(2.5e4)          "25.00 k"    (per second)
//   numbers::bytes(1536)          "1.5 KiB"
//   numbers::value(2.5)           "2.5"        (a counter's value: value(1234) "1,234")
#pragma once

#include <cstdint>
#include <string>

namespace pipescope::analysis::numbers {

// ns with the largest unit it reaches (s, ms, µs, ns): s and ms with 3 decimals, µs with 2, ns with
// none, so that columns of durations line up by unit.
std::string duration(double ns);
// The same units with at most max_decimals decimals and trailing zeros dropped ("1.5 µs", "2 ms"),
// for labels that must stay short (axis ticks, tooltips). ns get at most one decimal.
std::string duration(double ns, int max_decimals);
// A fraction as a percentage: percent(0.421) "42 %", percent(0.421, 1) "42.1 %".
std::string percent(double fraction, int decimals = 0);
// The same with at most max_decimals decimals and trailing zeros dropped ("12.5 %", "50 %"), for
// labels that must stay short (axis ticks).
std::string short_percent(double fraction, int max_decimals);
// A count with thousands separators: "1,234,567".
std::string count(std::uint64_t n);
// A ratio or speedup: one decimal below 10 ("3.4×"), none from 10 on ("12×"); or exactly `decimals`.
std::string ratio(double x);
std::string ratio(double x, int decimals);
// v with exactly `decimals` decimals: fixed(3.4, 2) "3.40".
std::string fixed(double v, int decimals);
// Items per second, with k or M: "512.0", "25.00 k", "1.25 M".
std::string rate(double per_second);
// A size in bytes: "512 B", "1.5 KiB", "2.25 MiB".
std::string bytes(double b);
// A value of no particular unit (a counter's): whole numbers as counts ("1,234", "-3"), others with
// three significant digits ("0.125", "2.5", "1.23e+20").
std::string value(double v);

}   // namespace pipescope::analysis::numbers
