// Time axis math: display nanoseconds <-> pixels, zoom at the cursor, pan, framing; the time
// ruler's nice tick steps and unit formatting. Pure C++.
#pragma once

#include <cstdint>
#include <string>

namespace pipescope::viewer {

struct viewport {
    double t0 = 0;           // display ns at the left edge of the time area
    double npp = 1000;       // ns per pixel
    double width = 1000;     // pixels of the time area
    double min_npp = 1e-3;   // zoom-in limit (1 ps per pixel)
    double max_npp = 1e12;

    double to_px(double t) const { return (t - t0) / npp; }
    double to_ns(double px) const { return t0 + px * npp; }
    double t1() const { return t0 + width * npp; }
    // factor < 1 zooms in; the time under `px` stays under `px`.
    void zoom_at(double px, double factor);
    void pan_px(double dpx) { t0 -= dpx * npp; }
    // The time area is now `w` px wide: the same range [t0, t1] spread over the new width, so that a
    // resized window shows what it showed (a run fitted to the width stays fitted).
    void resize(double w);
    // Shows [a, b] with `margin` (fraction of the width) on either side; a zero-length range is
    // shown at a default scale centred on it. Any length fits, whatever the last clamp allowed.
    void frame(double a, double b, double margin = 0.05);
    // Keeps [t0, t1] overlapping [lo, hi] (the whole document) and the scale within the limits.
    void clamp(double lo, double hi);
};

// The timeline frames a requested range with this margin on either side (a fraction of its width).
inline constexpr double timeline_frame_margin = 0.02;

// The unit a time of this size is written in: s, ms, µs or ns.
struct time_unit {
    double scale;       // ns per unit
    const char* name;   // "ms", "\xC2\xB5s" (µs), ...
};
time_unit unit_for(double ns);

// A "nice" tick step (1, 2 or 5 x 10^k ns) such that steps are at least min_px pixels apart.
double nice_step(double npp, double min_px);
// "1.5 ms", "250 µs", "3 ns", "2.25 s": a time with a unit chosen for its size.
std::string format_duration(double ns, int max_decimals = 3);
// A tick label: the unit is chosen from the step so that all labels of a ruler agree.
std::string format_tick(double t, double step);

}   // namespace pipescope::viewer
