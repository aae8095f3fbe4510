// x264-like: stage 0 of Fig. 2 (seed 001 §3) — read frames, decide each one's type, buffer the
// B-frames until the I- or P-frame they lean on arrives.
#include "x264_internal.hpp"

#include <cstdlib>

namespace pipescope::workloads::x264 {

namespace {

constexpr int histogram_bins = 32;
// Above this histogram distance the picture is taken to have changed completely. Panning, moving
// shapes and noise stay well below it; a new scene (other texture, other brightness) mostly not.
constexpr double scenecut_threshold = 0.5;

}   // namespace

std::vector<std::uint32_t> luma_histogram(const plane& p) {
    std::vector<std::uint32_t> h(histogram_bins);
    for (std::uint8_t v : p.pix) ++h[v * histogram_bins / 256];
    return h;
}

double histogram_distance(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
    std::uint64_t diff = 0, total = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        diff += static_cast<std::uint64_t>(std::llabs(static_cast<long long>(a[k]) - static_cast<long long>(b[k])));
        total += a[k];
    }
    return total ? static_cast<double>(diff) / static_cast<double>(total) : 0.0;
}

gop_reader::gop_reader(const synthetic_video& video, const x264_encoder_params& enc) : video_(&video), enc_(enc) {}

x264_frame_type gop_reader::decide(const plane& pixels, unsigned display) {
    std::vector<std::uint32_t> histogram = luma_histogram(pixels);
    const bool cut = enc_.scenecut && display > 0 && histogram_distance(histogram, prev_histogram_) > scenecut_threshold;
    prev_histogram_ = std::move(histogram);
    if (display == 0 || cut || display - last_i_ >= enc_.keyint) {
        last_i_ = display;
        pending_b_ = 0;
        return x264_frame_type::I;
    }
    // The last frame is never a B-frame: a B-frame needs a reference after it.
    if (display + 1 == video_->frames() || pending_b_ >= enc_.bframes) {
        pending_b_ = 0;
        return x264_frame_type::P;
    }
    ++pending_b_;
    return x264_frame_type::B;
}

coding_group gop_reader::next() {
    coding_group g;
    for (;;) {
        source_frame f;
        f.display = next_;
        f.pixels = video_->frame(next_);
        f.type = decide(f.pixels, next_);
        ++next_;
        if (f.type != x264_frame_type::B) {
            g.ref = std::move(f);
            return g;
        }
        g.bframes.push_back(std::move(f));
    }
}

}   // namespace pipescope::workloads::x264
