// What `pipescope calibrate` makes of a cost's repeated measurements (issue 34; docs/virtual.md,
// "Calibration"): the median is the cost; the 10th-90th percentile range and the extremes are its
// spread; a spread wider than a set factor means the machine was too noisy to trust the median, and
// the warning names the way out.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pipescope::recording {

struct sample_spread {
    double median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
    std::size_t samples = 0;
};

// Throws std::invalid_argument on no samples.
sample_spread spread_of(std::vector<double> samples);

// A cost is noisy when its 90th percentile is more than `noisy_factor` times its 10th, and they are
// at least `noisy_floor_ns` apart (a 5 ns cost read as 0 or 20 ns is the timer, not the machine).
constexpr double noisy_factor = 4.0;
constexpr double noisy_floor_ns = 100.0;

// The warning for cost `name` (its --param is NAME_ns), or nothing when it is steady.
std::optional<std::string> noise_warning(const std::string& name, const sample_spread& s);

}   // namespace pipescope::recording
