// The timeline's time ruler: where its ticks go and what their labels say. Pure C++.
//
// Labels are offsets from a base time (the run's start, or the start of the marked area), as
// Perfetto and Tracy label them: "+1.250 ms", "−500 ns", "0". All labels of a ruler share one unit,
// chosen from the largest offset in view, with just the decimals the tick step needs. Zoomed far
// into a long run those labels would need too many digits ("+1.2000005 s"): the first labelled
// tick then says its offset from the base in full (the anchor) and the others say their offset
// from the anchor ("+500 ns"), as Tracy does.
//
// Ticks lie on the grid base + k * step, so offsets are round numbers. The step is the smallest
// 1-2-5 step whose labels do not overlap; a label that would cross the right edge is put left of
// its tick, or left out if it does not fit there either — no label is ever clipped.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::viewer {

struct ruler_tick {
    double t = 0;          // display ns
    double x = 0;          // px from the left edge of the time area
    bool major = false;    // a major tick (the minor ones split a step in five)
    bool anchor = false;   // its label is the anchor's full offset from the base (see above)
    std::string label;     // empty: no label (minor ticks, labels that did not fit)
    double label_x = 0;    // where the label's text starts (px), and its width
    double label_w = 0;
};

struct ruler_layout {
    double step = 0;                 // between major ticks (ns)
    double minor = 0;                // between minor ticks
    double base = 0;                 // labels are offsets from this display time...
    double origin = 0;               // ...or, with an anchor, from the anchor's time
    std::vector<ruler_tick> ticks;   // left to right, majors and minors
};

// Width of a label in pixels; the view passes ImGui's CalcTextSize.
using text_width_fn = std::function<double(std::string_view)>;
// 7 px per character (UTF-8 code point): the default font's digits are about that wide.
double approx_text_width(std::string_view text);

// The ticks of a view showing display times [t0, t1) over `width` pixels, labelled as offsets from
// `base`. Labels are at least `gap` px apart.
ruler_layout ruler_ticks(double t0, double t1, double width, double base,
                         const text_width_fn& text_width = approx_text_width, double gap = 10);

// "+1.25 ms", "−500 ns", "0": an offset with `decimals` decimals in the unit chosen for `magnitude`.
std::string format_offset(double offset, double magnitude, int decimals);

// The hover readout: time t as an offset from `base`, to the pixel (ns per pixel `npp`):
// "+41.50012 ms".
std::string cursor_readout(double t, double base, double npp);

}   // namespace pipescope::viewer
