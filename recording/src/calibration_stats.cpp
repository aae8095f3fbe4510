#include <pipescope/recording/calibration_stats.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipescope::recording {

namespace {
// The q-quantile of sorted values, interpolated between the two nearest ranks.
double quantile(const std::vector<double>& sorted, double q) {
    const double at = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(at));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - static_cast<double>(lo));
}

std::string ns_text(double ns) {
    if (ns >= 1e6) return fmt::format("{:.1f} ms", ns / 1e6);
    if (ns >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
    return fmt::format("{:.0f} ns", ns);
}
}   // namespace

sample_spread spread_of(std::vector<double> samples) {
    if (samples.empty()) throw std::invalid_argument("spread_of: no samples");
    std::sort(samples.begin(), samples.end());
    return {.median = quantile(samples, 0.5),
            .p10 = quantile(samples, 0.1),
            .p90 = quantile(samples, 0.9),
            .min = samples.front(),
            .max = samples.back(),
            .samples = samples.size()};
}

std::optional<std::string> noise_warning(const std::string& name, const sample_spread& s) {
    if (s.p90 - s.p10 < noisy_floor_ns) return std::nullopt;
    const double ratio = s.p90 / std::max(s.p10, 1.0);
    if (ratio <= noisy_factor) return std::nullopt;
    return fmt::format("{} varied {:.0f}x between repetitions ({} to {}, p10-p90 of {}; min {}, max {}): the machine "
                       "is noisy and the median {} may be far off; rerun `pipescope calibrate` on a quiet machine, "
                       "or pass --param {}_ns=V",
                       name, ratio, ns_text(s.p10), ns_text(s.p90), s.samples, ns_text(s.min), ns_text(s.max),
                       ns_text(s.median), name);
}

}   // namespace pipescope::recording
