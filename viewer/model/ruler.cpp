#include "ruler.hpp"

#include "viewport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pipescope::viewer {

namespace {

// More digits than this in a label (before and after the point) and the ruler anchors its labels.
constexpr int max_label_digits = 6;
constexpr double label_pad = 4;   // between a tick and its label

// Decimals that show multiples of `step` (in its unit: 1, 2 or 5 x 10^e) exactly.
int decimals_for(double step_in_unit) { return std::max(0, static_cast<int>(std::ceil(-std::log10(step_in_unit) - 1e-9))); }

int digits_before_point(double v) { return v < 1 ? 1 : static_cast<int>(std::floor(std::log10(v) + 1e-12)) + 1; }

// The 1-2-5 step after `step`.
double next_step(double step) {
    const double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    return step * (m < 1.5 ? 2.0 : m < 3 ? 2.5 : 2.0);
}

// Labels of one step, or nothing if two of them overlap (the step is then too small).
bool try_layout(double t0, double t1, double width, double base, double step, const text_width_fn& text_width, double gap,
                ruler_layout& out) {
    out = {};
    out.step = step;
    out.minor = step / 5;
    out.base = out.origin = base;
    const double npp = (t1 - t0) / width;
    // Ticks are base + k * minor, majors where k is a multiple of 5.
    const double k_lo = std::ceil((t0 - base) / out.minor - 1e-9), k_hi = std::floor((t1 - base) / out.minor + 1e-9);
    if (!(k_hi - k_lo < 4 * width + 8)) return false;   // also false for NaN: nothing sensible to draw
    const auto k0 = static_cast<long long>(k_lo), k1 = static_cast<long long>(k_hi);
    auto is_major = [](long long k) { return k % 5 == 0; };

    long long first_major = k1 + 1, last_major = k0 - 1;
    for (long long k = k0; k <= k1; ++k)
        if (is_major(k)) first_major = std::min(first_major, k), last_major = std::max(last_major, k);

    // One unit for every label: from the largest offset in view; decimals from the step.
    auto plan = [&](double largest) {
        const time_unit u = unit_for(largest);
        return std::pair{largest, decimals_for(step / u.scale)};
    };
    const double largest_from_base = std::max(std::fabs(static_cast<double>(first_major) * out.minor),
                                              std::fabs(static_cast<double>(last_major) * out.minor));
    auto [magnitude, decimals] = plan(largest_from_base);
    const bool anchored = first_major <= last_major &&
                          digits_before_point(magnitude / unit_for(magnitude).scale) + decimals > max_label_digits;
    if (anchored) {
        out.origin = base + static_cast<double>(first_major) * out.minor;
        std::tie(magnitude, decimals) = plan(static_cast<double>(last_major - first_major) * out.minor);
    }

    double prev_end = -std::numeric_limits<double>::infinity();
    bool prev_anchor = false;
    for (long long k = k0; k <= k1; ++k) {
        ruler_tick tick;
        tick.t = base + static_cast<double>(k) * out.minor;
        tick.x = (tick.t - t0) / npp;
        tick.major = is_major(k);
        if (tick.major) {
            if (anchored && k == first_major) {
                const double off = tick.t - base;
                tick.anchor = true;
                tick.label = format_offset(off, std::fabs(off), decimals_for(step / unit_for(off).scale));
            } else {
                tick.label =
                    format_offset(static_cast<double>(anchored ? k - first_major : k) * out.minor, magnitude, decimals);
            }
            tick.label_w = text_width(tick.label);
            tick.label_x = tick.x + label_pad;
            bool keep = true;
            if (tick.label_x + tick.label_w > width) {   // past the right edge: left of the tick, if there is room
                tick.label_x = tick.x - label_pad - tick.label_w;
                keep = tick.label_x >= 0 && tick.label_x >= prev_end + gap;
            } else if (tick.label_x < prev_end + gap) {
                if (!prev_anchor) return false;   // labels of this step overlap: try a larger step
                keep = false;                     // the long anchor label keeps its room
            }
            if (keep) {
                prev_end = tick.label_x + tick.label_w;
                prev_anchor = tick.anchor;
            } else {
                tick.label.clear();
                tick.label_w = 0;
            }
        }
        out.ticks.push_back(std::move(tick));
    }
    return true;
}

}   // namespace

double approx_text_width(std::string_view text) {
    double n = 0;
    for (unsigned char c : text) n += (c & 0xC0) != 0x80;   // count code points, not bytes
    return 7 * n;
}

ruler_layout ruler_ticks(double t0, double t1, double width, double base, const text_width_fn& text_width, double gap) {
    ruler_layout out;
    out.base = out.origin = base;
    if (!(t1 > t0) || !(width >= 1) || !std::isfinite(t0) || !std::isfinite(t1) || !std::isfinite(base)) return out;
    double step = nice_step((t1 - t0) / width, 50);
    for (int attempt = 0; attempt < 40; ++attempt, step = next_step(step))
        if (try_layout(t0, t1, width, base, step, text_width, gap, out)) return out;
    out = {};   // unreachable for sane inputs: labels a whole view apart always fit
    out.base = out.origin = base;
    return out;
}

std::string format_offset(double offset, double magnitude, int decimals) {
    const time_unit u = unit_for(magnitude);
    const double v = std::fabs(offset) / u.scale;
    decimals = std::clamp(decimals, 0, 12);
    if (v < 0.5 * std::pow(10.0, -decimals)) return "0";
    return fmt::format("{}{:.{}f} {}", offset > 0 ? "+" : "\xE2\x88\x92", v, decimals, u.name);   // U+2212 minus
}

std::string cursor_readout(double t, double base, double npp) {
    const double d = t - base;
    const double magnitude = std::max(std::fabs(d), npp);
    const double pixel_in_unit = npp / unit_for(magnitude).scale;
    return format_offset(d, magnitude, std::min(9, decimals_for(std::max(pixel_in_unit, 1e-9))));
}

}   // namespace pipescope::viewer
