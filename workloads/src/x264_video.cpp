// x264-like: the synthetic input video. Everything is integer arithmetic on a seeded hash, so a
// frame is the same bytes on every run, in every thread, for a given (params, display index).
//
// A scene is a periodic textured tile seen through a window that pans (global motion), with
// textured rectangles and ellipses sliding over it (local motion) and fresh noise in every frame,
// so motion search finds good but imperfect matches and the residual depends on the content.
#include "x264_internal.hpp"

#include <algorithm>

namespace pipescope::workloads::x264 {

namespace {

std::uint64_t mix(std::uint64_t x) {   // splitmix64's finalizer
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::uint64_t hash3(std::uint64_t a, std::uint64_t b, std::uint64_t c) { return mix(mix(mix(a) ^ b) ^ c); }

// A draw in [lo, hi] from the stream (key, k).
int draw(std::uint64_t key, std::uint64_t k, int lo, int hi) {
    return lo + static_cast<int>(mix(key ^ mix(k)) % static_cast<std::uint64_t>(hi - lo + 1));
}

// Floor division by 16 for positions in 1/16 pixel (negative ones included).
int floor16(int v) { return v >= 0 ? v / 16 : -((-v + 15) / 16); }

std::uint8_t clamp_pixel(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// Value noise on a periodic lattice: hashed values in [0, 255] at every `spacing` pixels,
// interpolated bilinearly; the tile it fills wraps around seamlessly.
class lattice_noise {
public:
    lattice_noise(std::uint64_t key, int spacing) : spacing_(spacing), cells_(synthetic_video::tile_size / spacing) {
        values_.resize(static_cast<std::size_t>(cells_) * cells_);
        for (int j = 0; j < cells_; ++j)
            for (int i = 0; i < cells_; ++i)
                values_[static_cast<std::size_t>(j) * cells_ + i] =
                    static_cast<int>(hash3(key, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j)) & 255u);
    }
    int operator()(int x, int y) const {
        const int cx = x / spacing_, cy = y / spacing_, fx = x % spacing_, fy = y % spacing_;
        const int top = at(cx, cy) * (spacing_ - fx) + at(cx + 1, cy) * fx;
        const int bottom = at(cx, cy + 1) * (spacing_ - fx) + at(cx + 1, cy + 1) * fx;
        return (top * (spacing_ - fy) + bottom * fy) / (spacing_ * spacing_);
    }

private:
    int at(int i, int j) const { return values_[static_cast<std::size_t>(j % cells_) * cells_ + i % cells_]; }
    int spacing_, cells_;
    std::vector<int> values_;
};

synthetic_video::scene make_scene(std::uint64_t key, int width, int height) {
    synthetic_video::scene sc;
    const int n = synthetic_video::tile_size;
    const int mean = draw(key, 1, 50, 200);
    const int contrast = draw(key, 2, 24, 90);   // of the coarse octave, in 1/64
    const int detail = draw(key, 3, 10, 40);     // amplitude of the medium octave
    const int grain = draw(key, 4, 2, 12);       // static fine texture (moves with the picture)
    const int stripes = draw(key, 5, 0, 1);      // some scenes have diagonal stripes
    const lattice_noise coarse(key ^ 0x11, 32), medium(key ^ 0x22, 8);
    sc.tile.resize(static_cast<std::size_t>(n) * n);
    for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
            int v = mean + (coarse(x, y) - 128) * contrast / 64 + (medium(x, y) - 128) * detail / 128 +
                    static_cast<int>(hash3(key ^ 0x33, x, y) % static_cast<std::uint64_t>(2 * grain + 1)) - grain;
            if (stripes && ((x + y) / 6) % 2 == 0) v += 24;
            sc.tile[static_cast<std::size_t>(y) * n + x] = clamp_pixel(v);
        }
    sc.pan_vx16 = draw(key, 6, -48, 48);
    sc.pan_vy16 = draw(key, 7, -24, 24);
    sc.noise = draw(key, 8, 1, 4);
    const int count = draw(key, 9, 2, 7);
    for (int k = 0; k < count; ++k) {
        const std::uint64_t sk = mix(key ^ (0x100u + static_cast<unsigned>(k)));
        synthetic_video::shape s;
        s.w = draw(sk, 1, 12, std::max(12, std::min(64, width / 2)));
        s.h = draw(sk, 2, 12, std::max(12, std::min(64, height / 2)));
        s.ellipse = draw(sk, 3, 0, 1) == 1;
        s.x16 = draw(sk, 4, 0, width * 16);
        s.y16 = draw(sk, 5, 0, height * 16);
        s.vx16 = draw(sk, 6, -80, 80);
        s.vy16 = draw(sk, 7, -40, 40);
        s.tex_x = draw(sk, 8, 0, n - 1);
        s.tex_y = draw(sk, 9, 0, n - 1);
        s.brightness = draw(sk, 10, -90, 90);
        sc.shapes.push_back(s);
    }
    return sc;
}

}   // namespace

synthetic_video::synthetic_video(const x264_video_params& p) : params_(p) {
    // Scene lengths are drawn from the seed: 6 to 40 frames.
    for (unsigned start = 0, k = 0; start < p.frames; ++k) {
        const std::uint64_t key = hash3(p.seed, 0x5ce4e, k);
        scene_starts_.push_back(start);
        scenes_.push_back(make_scene(key, width(), height()));
        start += static_cast<unsigned>(draw(key, 0, 6, 40));
    }
}

const synthetic_video::scene& synthetic_video::scene_of(unsigned display, unsigned* first_frame) const {
    const auto it = std::upper_bound(scene_starts_.begin(), scene_starts_.end(), display) - 1;
    *first_frame = *it;
    return scenes_[static_cast<std::size_t>(it - scene_starts_.begin())];
}

plane synthetic_video::frame(unsigned display) const {
    unsigned first = 0;
    const scene& sc = scene_of(display, &first);
    const int t = static_cast<int>(display - first);
    const int w = width(), h = height(), mask = tile_size - 1;
    plane out(w, h);

    // Background: the tile through a window that moves by the pan velocity.
    const int pan_x = floor16(sc.pan_vx16 * t), pan_y = floor16(sc.pan_vy16 * t);
    for (int y = 0; y < h; ++y) {
        const std::uint8_t* src = sc.tile.data() + static_cast<std::size_t>((y + pan_y) & mask) * tile_size;
        std::uint8_t* dst = out.row(y);
        for (int x = 0; x < w; ++x) dst[x] = src[(x + pan_x) & mask];
    }

    // Shapes, in order (later ones cover earlier ones); they wrap around the frame's edges.
    for (const shape& s : sc.shapes) {
        const int span_x = w + s.w, span_y = h + s.h;
        const int left = ((floor16(s.x16 + s.vx16 * t) % span_x) + span_x) % span_x - s.w;
        const int top = ((floor16(s.y16 + s.vy16 * t) % span_y) + span_y) % span_y - s.h;
        for (int v = 0; v < s.h; ++v) {
            const int y = top + v;
            if (y < 0 || y >= h) continue;
            const std::uint8_t* tex = sc.tile.data() + static_cast<std::size_t>((s.tex_y + v) & mask) * tile_size;
            std::uint8_t* dst = out.row(y);
            for (int u = 0; u < s.w; ++u) {
                const int x = left + u;
                if (x < 0 || x >= w) continue;
                if (s.ellipse) {   // inside the ellipse inscribed in the w x h box
                    const int dx = 2 * u + 1 - s.w, dy = 2 * v + 1 - s.h;
                    if (dx * dx * s.h * s.h + dy * dy * s.w * s.w > s.w * s.w * s.h * s.h) continue;
                }
                dst[x] = clamp_pixel(tex[(s.tex_x + u) & mask] + s.brightness);
            }
        }
    }

    // Sensor noise, fresh in every frame.
    if (sc.noise > 0) {
        const std::uint64_t span = 2 * static_cast<std::uint64_t>(sc.noise) + 1;
        for (int y = 0; y < h; ++y) {
            std::uint64_t state = hash3(params_.seed, display, static_cast<std::uint64_t>(y));
            std::uint8_t* dst = out.row(y);
            for (int x = 0; x < w; ++x) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;   // an LCG is plenty here
                dst[x] = clamp_pixel(dst[x] + static_cast<int>((state >> 33) % span) - sc.noise);
            }
        }
    }
    return out;
}

}   // namespace pipescope::workloads::x264
