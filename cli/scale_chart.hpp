// The speedup-vs-P chart of a scaling sweep (`pipescope scale`): drawn once as a list of shapes
// (chart_of), then written as SVG text (write_svg) and rendered to PNG with cairo (write_png), so
// both files show the same picture. One polyline per policy, the ideal line, log2 axes
// (analysis::scale_axes), a legend.
#pragma once

#include <pipescope/analysis/scaling.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pipescope::cli {

struct rgb {
    double r = 0, g = 0, b = 0;   // 0..1
};

struct chart_point {
    double x = 0, y = 0;   // pixels from the top left
};

// One shape. `group` names what it is in the SVG (class="ideal", class="policy" with data-policy,
// "axis", "grid", "label", "marker"), so tests and scripts can find a policy's line.
struct chart_shape {
    enum class kind { line, polyline, circle, text } what = kind::line;
    std::string group, policy;
    std::vector<chart_point> points;   // line: 2; polyline: the vertices; circle, text: 1
    rgb colour;
    double width = 1;   // stroke width; circle: radius; text: font size
    bool dashed = false;
    enum class anchor { start, middle, end } align = anchor::start;   // text, horizontally
    std::string text;
};

struct chart {
    int width = 0, height = 0;
    std::string title;
    std::vector<chart_shape> shapes;   // in drawing order, over a white background
};

chart chart_of(const analysis::scale_sweep& s, int width = 800, int height = 500);

// Both write to `path` directly (the caller writes into a directory it renames when complete);
// both throw std::runtime_error naming the file when it cannot be written.
void write_svg(const chart& c, const std::filesystem::path& path);
void write_png(const chart& c, const std::filesystem::path& path);

}   // namespace pipescope::cli
