// ferret's segment stage: k-means over colour and position (PARSEC's ferret segments each image
// into regions before extracting per-region features, seed 000 §2.1).
#include <pipescope/workloads/ferret.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipescope::workloads::ferret {

namespace {

constexpr unsigned point_dims = 5;        // r, g, b, x, y
constexpr float position_weight = 0.6f;   // how much position counts against colour: compact regions
constexpr unsigned max_iterations = 10;

// 3×3 box-smoothed colours in [0, 1] and scaled positions: one point per pixel.
std::vector<float> pixel_points(const image& img) {
    const int w = static_cast<int>(img.width), h = static_cast<int>(img.height);
    std::vector<float> points(std::size_t{img.width} * img.height * point_dims);
    const float pos_scale = position_weight / static_cast<float>(std::max(w, h));
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            float sum[3] = {0, 0, 0};
            int n = 0;
            for (int dy = -1; dy <= 1; ++dy) {
                const int yy = y + dy;
                if (yy < 0 || yy >= h) continue;
                for (int dx = -1; dx <= 1; ++dx) {
                    const int xx = x + dx;
                    if (xx < 0 || xx >= w) continue;
                    const std::uint8_t* px = &img.rgb[(static_cast<std::size_t>(yy) * img.width + xx) * 3];
                    for (int c = 0; c < 3; ++c) sum[c] += px[c];
                    ++n;
                }
            }
            float* p = &points[(static_cast<std::size_t>(y) * img.width + x) * point_dims];
            for (int c = 0; c < 3; ++c) p[c] = sum[c] / (255.f * static_cast<float>(n));
            p[3] = (static_cast<float>(x) + 0.5f) * pos_scale;
            p[4] = (static_cast<float>(y) + 0.5f) * pos_scale;
        }
    }
    return points;
}

float squared_distance(const float* a, const float* b) {
    float d = 0;
    for (unsigned k = 0; k < point_dims; ++k) d += (a[k] - b[k]) * (a[k] - b[k]);
    return d;
}

}   // namespace

segmentation segment(const image& img, unsigned max_regions) {
    if (max_regions == 0 || max_regions > 32) throw std::invalid_argument("ferret: regions must be between 1 and 32");
    const std::size_t n = std::size_t{img.width} * img.height;
    if (n == 0) throw std::invalid_argument("ferret: cannot segment an empty image");
    const std::vector<float> points = pixel_points(img);
    const unsigned k = static_cast<unsigned>(std::min<std::size_t>(max_regions, n));

    // Start from a regular grid of pixels: deterministic, and spreads the centres over the image.
    const unsigned grid_x = static_cast<unsigned>(std::ceil(std::sqrt(static_cast<double>(k))));
    const unsigned grid_y = (k + grid_x - 1) / grid_x;
    std::vector<float> centres(std::size_t{k} * point_dims);
    for (unsigned j = 0; j < k; ++j) {
        const unsigned x = static_cast<unsigned>((j % grid_x + 0.5) * img.width / grid_x);
        // The cell's row j / grid_x is an integer division on purpose; + 0.5 takes the cell's centre.
        const unsigned y =
            static_cast<unsigned>((j / grid_x + 0.5) * img.height / grid_y);   // NOLINT(bugprone-integer-division)
        const float* p = &points[(std::size_t{y} * img.width + x) * point_dims];
        std::copy(p, p + point_dims, &centres[std::size_t{j} * point_dims]);
    }

    std::vector<std::uint8_t> label(n, 0);
    std::vector<double> sums(std::size_t{k} * point_dims);
    std::vector<std::size_t> counts(k);
    for (unsigned iter = 0; iter < max_iterations; ++iter) {
        bool changed = iter == 0;
        for (std::size_t i = 0; i < n; ++i) {
            const float* p = &points[i * point_dims];
            unsigned best = 0;
            float best_d = squared_distance(p, &centres[0]);
            for (unsigned j = 1; j < k; ++j) {
                const float d = squared_distance(p, &centres[std::size_t{j} * point_dims]);
                if (d < best_d) best_d = d, best = j;
            }
            if (label[i] != best) changed = true;
            label[i] = static_cast<std::uint8_t>(best);
        }
        if (!changed) break;
        std::fill(sums.begin(), sums.end(), 0.0);
        std::fill(counts.begin(), counts.end(), 0);
        for (std::size_t i = 0; i < n; ++i) {
            ++counts[label[i]];
            for (unsigned c = 0; c < point_dims; ++c) sums[label[i] * point_dims + c] += points[i * point_dims + c];
        }
        for (unsigned j = 0; j < k; ++j)   // an empty cluster keeps its centre
            if (counts[j])
                for (unsigned c = 0; c < point_dims; ++c)
                    centres[j * point_dims + c] = static_cast<float>(sums[j * point_dims + c] / counts[j]);
    }

    // Renumber the clusters that kept pixels: 0 .. regions-1, in cluster order.
    std::vector<int> renumber(k, -1);
    segmentation seg;
    for (std::size_t i = 0; i < n; ++i)
        if (renumber[label[i]] < 0) renumber[label[i]] = 0;
    for (unsigned j = 0; j < k; ++j)
        if (renumber[j] == 0) renumber[j] = static_cast<int>(seg.regions++);
    for (auto& l : label) l = static_cast<std::uint8_t>(renumber[l]);
    seg.label = std::move(label);
    return seg;
}

}   // namespace pipescope::workloads::ferret
