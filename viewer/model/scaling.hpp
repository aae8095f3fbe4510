// A scaling sweep opened in the viewer: `pipescope-viewer DIR` or `DIR/scale.json`, where DIR was
// written by `pipescope scale` (docs/virtual.md, "Scaling sweeps"). Its traces load as any files do;
// the scaling view (views/scaling_view.cpp) plots speedup against P from the manifest, on the axes
// the CLI's plot uses (analysis::scale_axes). Pure C++ (no ImGui): unit-tested in tests/viewer.
#pragma once

#include "document.hpp"

#include <pipescope/analysis/scaling.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace pipescope::viewer {

struct sweep {
    std::filesystem::path dir;   // where the manifest and the traces are
    analysis::scale_sweep data;
    analysis::scale_axes axes;
    // The rows' traces, in row order.
    std::vector<std::filesystem::path> traces() const;
};

// A directory holding a scale.json, or a file named scale.json.
bool looks_like_sweep(const std::filesystem::path& p);
// Reads the manifest of a sweep directory (or the manifest itself). Throws std::runtime_error
// naming the file and, for a malformed manifest, the field ("out/scale.json: rows[2].workers: missing").
sweep load_sweep(const std::filesystem::path& p);

// The plot's area in pixels (y grows downwards).
struct plot_rect {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
struct plot_point {
    std::size_t row = 0;   // index into sweep::data.rows
    float x = 0, y = 0;
};
// Where each row with a speedup goes: P along x, speedup along y, both log2 (sweep::axes).
std::vector<plot_point> plot_points(const sweep& s, plot_rect r);
// A value's place along the plot's axes.
float plot_x(const sweep& s, plot_rect r, double workers);
float plot_y(const sweep& s, plot_rect r, double speedup);
// The row whose point is nearest (x, y) within `radius` pixels, or npos.
inline constexpr std::size_t no_row = static_cast<std::size_t>(-1);
std::size_t row_at(const std::vector<plot_point>& points, float x, float y, float radius);

// The document run recorded in row `row`'s trace (the file loaded from dir / trace), or no_index.
std::uint32_t run_of_row(const document& d, const sweep& s, std::size_t row);

}   // namespace pipescope::viewer
