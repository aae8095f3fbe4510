// How pipescope writes numbers (numbers.hpp).
#include <pipescope/analysis/numbers.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pipescope::analysis::numbers {

namespace {

struct time_unit {
    double ns_per_unit;
    const char* name;
    int decimals;   // in duration(ns)
};

time_unit unit_for(double ns) {
    const double magnitude = std::fabs(ns);
    if (magnitude >= 1e9) return {1e9, "s", 3};
    if (magnitude >= 1e6) return {1e6, "ms", 3};
    if (magnitude >= 1e3) return {1e3, "\xC2\xB5s", 2};   // µs
    return {1, "ns", 0};
}

// "2.500" -> "2.5", "3.000" -> "3", "-0" -> "0".
std::string without_trailing_zeros(std::string s) {
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s == "-0" ? "0" : s;
}

}   // namespace

std::string duration(double ns) {
    const time_unit u = unit_for(ns);
    return fmt::format("{:.{}f} {}", ns / u.ns_per_unit, u.decimals, u.name);
}

std::string duration(double ns, int max_decimals) {
    const time_unit u = unit_for(ns);
    const int decimals = std::max(0, u.ns_per_unit == 1 ? std::min(max_decimals, 1) : max_decimals);
    return without_trailing_zeros(fmt::format("{:.{}f}", ns / u.ns_per_unit, decimals)) + " " + u.name;
}

std::string percent(double fraction, int decimals) { return fmt::format("{:.{}f} %", fraction * 100, decimals); }

std::string short_percent(double fraction, int max_decimals) {
    return without_trailing_zeros(fmt::format("{:.{}f}", fraction * 100, std::max(0, max_decimals))) + " %";
}

std::string count(std::uint64_t n) {
    std::string out = std::to_string(n);
    for (std::size_t group_start = out.size(); group_start > 3; group_start -= 3) out.insert(group_start - 3, 1, ',');
    return out;
}

std::string ratio(double x) { return ratio(x, x >= 10 ? 0 : 1); }

std::string ratio(double x, int decimals) { return fmt::format("{:.{}f}\xC3\x97", x, decimals); }   // ×

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string rate(double per_second) {
    if (per_second >= 1e6) return fmt::format("{:.2f} M", per_second * 1e-6);
    if (per_second >= 1e3) return fmt::format("{:.2f} k", per_second * 1e-3);
    return fmt::format("{:.1f}", per_second);
}

std::string bytes(double b) {
    constexpr double KiB = 1024.0, MiB = 1024.0 * 1024.0;
    if (b >= MiB) return fmt::format("{:.2f} MiB", b / MiB);
    if (b >= KiB) return fmt::format("{:.1f} KiB", b / KiB);
    return fmt::format("{:.0f} B", b);
}

std::string value(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        return fmt::format("{}{}", v < 0 ? "-" : "", count(static_cast<std::uint64_t>(std::fabs(v))));
    return fmt::format("{:.3g}", v);
}

}   // namespace pipescope::analysis::numbers
