// ferret's extract stage (a feature vector per region) and the distances the rank stage uses.
#include <pipescope/workloads/ferret.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace pipescope::workloads::ferret {

namespace {

// Scales of the feature groups, so that a plain Euclidean distance weighs them as intended.
constexpr float colour_scale = 1.0f;
constexpr float position_scale = 0.5f;
constexpr float texture_scale = 1.5f;

float luminance(const image& img, unsigned x, unsigned y) {
    const std::uint8_t* px = &img.rgb[(std::size_t{y} * img.width + x) * 3];
    return static_cast<float>(px[0] + px[1] + px[2]) * (1.f / (3.f * 255.f));
}

}   // namespace

signature extract_features(const image& img, const segmentation& seg) {
    struct sums {
        std::size_t pixels = 0;
        double r = 0, g = 0, b = 0, x = 0, y = 0, gradient = 0;
    };
    std::vector<sums> acc(seg.regions);
    const unsigned w = img.width, h = img.height;
    for (unsigned y = 0; y < h; ++y) {
        for (unsigned x = 0; x < w; ++x) {
            const std::size_t i = std::size_t{y} * w + x;
            sums& s = acc[seg.label[i]];
            const std::uint8_t* px = &img.rgb[i * 3];
            ++s.pixels;
            s.r += px[0];
            s.g += px[1];
            s.b += px[2];
            s.x += x + 0.5;
            s.y += y + 0.5;
            // Texture: how fast luminance changes, forward differences (zero at the far edges).
            const float l = luminance(img, x, y);
            float grad = 0;
            if (x + 1 < w) grad += std::fabs(luminance(img, x + 1, y) - l);
            if (y + 1 < h) grad += std::fabs(luminance(img, x, y + 1) - l);
            s.gradient += grad;
        }
    }
    signature sig;
    sig.reserve(seg.regions);
    const double total = static_cast<double>(std::size_t{w} * h);
    for (const sums& s : acc) {
        if (s.pixels == 0) continue;
        const double n = static_cast<double>(s.pixels);
        region r;
        r.weight = static_cast<float>(n / total);
        r.features = {static_cast<float>(colour_scale * s.r / (255 * n)),
                      static_cast<float>(colour_scale * s.g / (255 * n)),
                      static_cast<float>(colour_scale * s.b / (255 * n)),
                      static_cast<float>(position_scale * s.x / (n * w)),
                      static_cast<float>(position_scale * s.y / (n * h)),
                      static_cast<float>(texture_scale * s.gradient / n)};
        sig.push_back(r);
    }
    return sig;
}

float ground_distance(const region& a, const region& b) {
    float d = 0;
    for (std::size_t k = 0; k < feature_dims; ++k) d += (a.features[k] - b.features[k]) * (a.features[k] - b.features[k]);
    return std::sqrt(d);
}

float signature_distance(const signature& a, const signature& b) {
    if (a.empty() || b.empty()) return a.empty() && b.empty() ? 0.f : 1e30f;
    struct pair_cost {
        float cost;
        unsigned i, j;
    };
    std::vector<pair_cost> pairs;
    pairs.reserve(a.size() * b.size());
    for (unsigned i = 0; i < a.size(); ++i)
        for (unsigned j = 0; j < b.size(); ++j) pairs.push_back({ground_distance(a[i], b[j]), i, j});
    // Ties broken by index: the plan, and so the distance, never depends on the sort's whims.
    std::sort(pairs.begin(), pairs.end(), [](const pair_cost& x, const pair_cost& y) {
        if (x.cost != y.cost) return x.cost < y.cost;
        return x.i != y.i ? x.i < y.i : x.j < y.j;
    });
    std::vector<float> supply(a.size()), demand(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) supply[i] = a[i].weight;
    for (std::size_t j = 0; j < b.size(); ++j) demand[j] = b[j].weight;
    float work = 0, moved = 0;
    for (const pair_cost& p : pairs) {
        const float flow = std::min(supply[p.i], demand[p.j]);
        if (flow <= 0) continue;
        supply[p.i] -= flow;
        demand[p.j] -= flow;
        work += flow * p.cost;
        moved += flow;
    }
    return moved > 0 ? work / moved : 1e30f;
}

}   // namespace pipescope::workloads::ferret
