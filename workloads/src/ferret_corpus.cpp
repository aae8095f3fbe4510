// ferret's synthetic corpus: seeded images of textured shapes, and queries that are perturbed
// copies of database images (so every query has a known right answer).
#include <pipescope/workloads/ferret.hpp>

#include <algorithm>
#include <cmath>

namespace pipescope::workloads::ferret {

namespace {

std::uint64_t splitmix(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Random streams of the corpus (the index has its own, see ferret_index.cpp).
constexpr std::uint64_t database_stream = 1;
constexpr std::uint64_t query_stream = 2;

struct colour {
    float r, g, b;
};

colour random_colour(random_stream& rng) { return {rng.unit(), rng.unit(), rng.unit()}; }

enum class shape_kind { rectangle, ellipse };
enum class texture_kind { flat, stripes, checker, speckle };

struct shape {
    shape_kind kind;
    float cx, cy, rx, ry;   // centre and half extents, in pixels
    colour base;
    texture_kind texture;
    unsigned period;    // stripes and checker: pixels per band
    int dir_x, dir_y;   // stripes: orientation
    float contrast;     // how much darker the dark bands or speckles are
    std::uint64_t speckle_seed;
};

bool covers(const shape& s, float x, float y) {
    const float dx = (x - s.cx) / s.rx, dy = (y - s.cy) / s.ry;
    if (s.kind == shape_kind::rectangle) return std::fabs(dx) <= 1.f && std::fabs(dy) <= 1.f;
    return dx * dx + dy * dy <= 1.f;
}

// 1 on light texels, 1 - contrast on dark ones.
float texture_factor(const shape& s, unsigned x, unsigned y) {
    switch (s.texture) {
        case texture_kind::flat: return 1.f;
        case texture_kind::stripes: {
            const int t = s.dir_x * static_cast<int>(x) + s.dir_y * static_cast<int>(y) + 1024;
            return (static_cast<unsigned>(t) / s.period) % 2 ? 1.f - s.contrast : 1.f;
        }
        case texture_kind::checker: return ((x / s.period) + (y / s.period)) % 2 ? 1.f - s.contrast : 1.f;
        case texture_kind::speckle: {
            std::uint64_t h = s.speckle_seed ^ (std::uint64_t{y} << 32 | x);
            return 1.f - s.contrast * static_cast<float>(splitmix(h) >> 40) * (1.f / 16777216.f);
        }
    }
    return 1.f;
}

shape random_shape(random_stream& rng, unsigned side) {
    shape s{};
    const float n = static_cast<float>(side);
    s.kind = rng.below(2) ? shape_kind::ellipse : shape_kind::rectangle;
    s.cx = rng.between(0.1f, 0.9f) * n;
    s.cy = rng.between(0.1f, 0.9f) * n;
    s.rx = rng.between(0.08f, 0.3f) * n;
    s.ry = rng.between(0.08f, 0.3f) * n;
    s.base = random_colour(rng);
    s.texture = static_cast<texture_kind>(rng.below(4));
    s.period = 2 + rng.below(5);
    static constexpr int dirs[4][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};
    const unsigned d = rng.below(4);
    s.dir_x = dirs[d][0];
    s.dir_y = dirs[d][1];
    s.contrast = rng.between(0.25f, 0.6f);
    s.speckle_seed = rng.next();
    return s;
}

std::uint8_t to_byte(float v) {
    const float c = std::clamp(v * 255.f + 0.5f, 0.f, 255.f);
    return static_cast<std::uint8_t>(c);
}

}   // namespace

random_stream::random_stream(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) noexcept {
    // Mix the three keys through splitmix so that neighbouring (stream, index) pairs are unrelated.
    std::uint64_t s = seed;
    state_ = splitmix(s);
    state_ ^= stream * 0xD1B54A32D192ED03ull;
    state_ = splitmix(state_);
    state_ ^= index * 0x8CB92BA72F3D8DD7ull;
    state_ = splitmix(state_);
}

std::uint64_t random_stream::next() noexcept { return splitmix(state_); }

unsigned random_stream::below(unsigned n) noexcept {
    return static_cast<unsigned>(((next() >> 32) * std::uint64_t{n}) >> 32);
}

float random_stream::unit() noexcept { return static_cast<float>(next() >> 40) * (1.f / 16777216.f); }

float random_stream::between(float lo, float hi) noexcept { return lo + (hi - lo) * unit(); }

image database_image(const corpus_config& c, unsigned id) {
    random_stream rng(c.seed, database_stream, id);
    const unsigned side = c.side;
    // Background: a linear gradient between two colours in a random direction.
    const colour from = random_colour(rng), to = random_colour(rng);
    const float gx = rng.between(-1.f, 1.f), gy = rng.between(-1.f, 1.f);
    std::vector<shape> shapes(3 + rng.below(4));
    for (auto& s : shapes) s = random_shape(rng, side);

    image img{side, side, std::vector<std::uint8_t>(std::size_t{side} * side * 3)};
    const float inv = 1.f / static_cast<float>(side);
    for (unsigned y = 0; y < side; ++y) {
        for (unsigned x = 0; x < side; ++x) {
            const float fx = static_cast<float>(x) + 0.5f, fy = static_cast<float>(y) + 0.5f;
            colour px;
            float f = 1.f;
            auto top = std::find_if(shapes.rbegin(), shapes.rend(), [&](const shape& s) { return covers(s, fx, fy); });
            if (top != shapes.rend()) {   // the last shape drawn is on top
                px = top->base;
                f = texture_factor(*top, x, y);
            } else {
                const float t = std::clamp(0.5f + gx * (fx * inv - 0.5f) + gy * (fy * inv - 0.5f), 0.f, 1.f);
                px = {from.r + (to.r - from.r) * t, from.g + (to.g - from.g) * t, from.b + (to.b - from.b) * t};
            }
            std::uint8_t* out = &img.rgb[(std::size_t{y} * side + x) * 3];
            out[0] = to_byte(px.r * f);
            out[1] = to_byte(px.g * f);
            out[2] = to_byte(px.b * f);
        }
    }
    return img;
}

unsigned query_source(const corpus_config& c, unsigned q) {
    random_stream rng(c.seed, query_stream, q);
    return rng.below(c.database_images);   // the first draw of the query's stream
}

image query_image(const corpus_config& c, unsigned q) {
    random_stream rng(c.seed, query_stream, q);
    const unsigned source = rng.below(c.database_images);   // same draw as query_source
    const image src = database_image(c, source);
    const int shift_x = static_cast<int>(rng.below(5)) - 2, shift_y = static_cast<int>(rng.below(5)) - 2;
    const int brightness = static_cast<int>(rng.below(31)) - 15;
    const int side = static_cast<int>(c.side);

    image out{src.width, src.height, std::vector<std::uint8_t>(src.rgb.size())};
    for (int y = 0; y < side; ++y) {
        const int sy = std::clamp(y - shift_y, 0, side - 1);   // shifted, edges repeated
        for (int x = 0; x < side; ++x) {
            const int sx = std::clamp(x - shift_x, 0, side - 1);
            const std::uint8_t* in = &src.rgb[(static_cast<std::size_t>(sy) * c.side + static_cast<unsigned>(sx)) * 3];
            std::uint8_t* px = &out.rgb[(static_cast<std::size_t>(y) * c.side + static_cast<unsigned>(x)) * 3];
            for (int ch = 0; ch < 3; ++ch) {
                const int noise = static_cast<int>(rng.below(21)) - 10;
                px[ch] = static_cast<std::uint8_t>(std::clamp(in[ch] + brightness + noise, 0, 255));
            }
        }
    }
    return out;
}

}   // namespace pipescope::workloads::ferret
