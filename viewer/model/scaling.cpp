// A scaling sweep in the viewer (scaling.hpp).
#include "scaling.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>

namespace pipescope::viewer {

namespace fs = std::filesystem;

std::vector<fs::path> sweep::traces() const {
    std::vector<fs::path> out;
    for (const analysis::scale_row& r : data.rows) out.push_back(dir / r.trace);
    return out;
}

bool looks_like_sweep(const fs::path& p) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) return fs::is_regular_file(p / analysis::scale_manifest_name, ec);
    return p.filename() == analysis::scale_manifest_name;
}

sweep load_sweep(const fs::path& p) {
    std::error_code ec;
    const fs::path manifest = fs::is_directory(p, ec) ? p / analysis::scale_manifest_name : p;
    std::ifstream in(manifest, std::ios::binary);
    if (!in) throw std::runtime_error(manifest.string() + ": cannot be read");
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error(manifest.string() + ": not JSON");
    sweep s;
    s.dir = manifest.parent_path();
    try {
        s.data = analysis::sweep_from_json(j);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(manifest.string() + ": " + e.what());
    }
    s.axes = analysis::axes_of(s.data);
    return s;
}

float plot_x(const sweep& s, plot_rect r, double workers) {
    return r.x0 + static_cast<float>(s.axes.at_x(workers)) * (r.x1 - r.x0);
}
float plot_y(const sweep& s, plot_rect r, double speedup) {
    return r.y1 - static_cast<float>(s.axes.at_y(speedup)) * (r.y1 - r.y0);
}

std::vector<plot_point> plot_points(const sweep& s, plot_rect r) {
    std::vector<plot_point> out;
    for (std::size_t i = 0; i < s.data.rows.size(); ++i) {
        const analysis::scale_row& row = s.data.rows[i];
        if (row.speedup <= 0) continue;
        out.push_back({i, plot_x(s, r, static_cast<double>(row.workers)), plot_y(s, r, row.speedup)});
    }
    return out;
}

std::size_t row_at(const std::vector<plot_point>& points, float x, float y, float radius) {
    std::size_t best = no_row;
    float best_d2 = radius * radius;
    for (const plot_point& p : points) {
        const float d2 = (p.x - x) * (p.x - x) + (p.y - y) * (p.y - y);
        if (d2 <= best_d2) {
            best_d2 = d2;
            best = p.row;
        }
    }
    return best;
}

std::uint32_t run_of_row(const document& d, const sweep& s, std::size_t row) {
    if (row >= s.data.rows.size()) return tm::no_index;
    std::error_code ec;
    const fs::path want = fs::weakly_canonical(s.dir / s.data.rows[row].trace, ec);
    for (std::uint32_t i = 0; i < d.runs.size(); ++i) {
        const run_ref& r = d.runs[i];
        if (r.run == tm::no_index) continue;
        if (fs::weakly_canonical(d.files[r.file]->path, ec) == want) return i;
    }
    return tm::no_index;
}

}   // namespace pipescope::viewer
