// x264-like: the pieces the serial program and the pipeline share (private to the library).
#pragma once

#include <pipescope/workloads/x264.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace pipescope::workloads::x264 {

inline constexpr int mb_size = 16;

// A luma picture, 8 bits per pixel, row-major.
struct plane {
    int width = 0, height = 0;
    std::vector<std::uint8_t> pix;
    plane() = default;
    plane(int w, int h) : width(w), height(h), pix(static_cast<std::size_t>(w) * h) {}
    std::uint8_t* row(int y) { return pix.data() + static_cast<std::ptrdiff_t>(y) * width; }
    const std::uint8_t* row(int y) const { return pix.data() + static_cast<std::ptrdiff_t>(y) * width; }
};

// ---- x264_video.cpp: the deterministic synthetic video -------------------------------------

// Scenes of textured background panning (global motion) with textured shapes moving over it and
// per-pixel noise; each scene has its own texture and brightness, so its first frame is a cut.
class synthetic_video {
public:
    explicit synthetic_video(const x264_video_params& p);
    unsigned frames() const { return params_.frames; }
    int width() const { return static_cast<int>(params_.mb_cols) * mb_size; }
    int height() const { return static_cast<int>(params_.mb_rows) * mb_size; }
    plane frame(unsigned display) const;   // a pure function of (params, display)

    struct shape {
        int w = 0, h = 0;
        bool ellipse = false;
        int x16 = 0, y16 = 0;       // position at the scene's first frame, in 1/16 pixel
        int vx16 = 0, vy16 = 0;     // velocity, 1/16 pixel per frame
        int tex_x = 0, tex_y = 0;   // where its texture comes from in the scene's tile
        int brightness = 0;         // added to the texture
    };
    struct scene {
        std::vector<std::uint8_t> tile;   // tile_size x tile_size, periodic
        int pan_vx16 = 0, pan_vy16 = 0;   // global motion, 1/16 pixel per frame
        int noise = 0;                    // per-pixel noise amplitude
        std::vector<shape> shapes;
    };
    static constexpr int tile_size = 256;   // a power of two: coordinates wrap with a mask

private:
    const scene& scene_of(unsigned display, unsigned* first_frame) const;
    x264_video_params params_;
    std::vector<scene> scenes_;
    std::vector<unsigned> scene_starts_;
};

// ---- x264_gop.cpp: stage 0, frame-type decision --------------------------------------------

struct source_frame {
    unsigned display = 0;
    x264_frame_type type = x264_frame_type::I;
    plane pixels;
};

// What one pipeline iteration encodes: an I/P frame and the B-frames that came before it in
// display order (Fig. 2 lines 8-14).
struct coding_group {
    source_frame ref;
    std::vector<source_frame> bframes;
};

class gop_reader {
public:
    gop_reader(const synthetic_video& video, const x264_encoder_params& enc);
    bool more() const { return next_ < video_->frames(); }
    coding_group next();

private:
    x264_frame_type decide(const plane& pixels, unsigned display);
    const synthetic_video* video_;
    x264_encoder_params enc_;
    unsigned next_ = 0;
    unsigned last_i_ = 0;      // display index of the latest I-frame
    unsigned pending_b_ = 0;   // B-frames buffered since the latest reference
    std::vector<std::uint32_t> prev_histogram_;
};

// Histogram distance in [0, 2]: the scene-cut test.
double histogram_distance(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b);
std::vector<std::uint32_t> luma_histogram(const plane& p);

// ---- x264_codec.cpp: one frame's macroblocks ----------------------------------------------

struct motion_vector {
    int x = 0, y = 0;
    bool operator==(const motion_vector&) const = default;
};

// Encodes one frame, macroblock row by macroblock row, top to bottom. The references must hold
// every reconstructed row a row's search window reaches (rows up to r + x264_row_offset).
class frame_coder {
public:
    // ref0: the previous reference (P and B); ref1: the following reference (B only).
    frame_coder(const source_frame& src, plane& recon, const plane* ref0, const plane* ref1, const x264_encoder_params& enc);
    void encode_row(int mb_row);
    int rows() const { return mb_rows_; }
    // After the last row: checksums and error of the reconstruction.
    x264_frame_record finish();
    // Convenience: every row, then finish().
    x264_frame_record encode_all();

private:
    struct mb_choice;
    mb_choice choose_inter(int mbx, int mby, motion_vector pred0, motion_vector pred1);
    std::uint32_t code_residual(int mbx, int mby, const std::uint8_t* pred, bool intra, bool* coded);
    motion_vector predict_mv(int mbx, int mby, int list) const;

    const source_frame* src_;
    plane* recon_;
    const plane* ref0_;
    const plane* ref1_;
    x264_encoder_params enc_;
    int mb_cols_, mb_rows_;
    int lambda_;
    std::vector<motion_vector> mvs_[2];   // chosen vectors per macroblock, per reference list
    x264_frame_record record_;
};

// FNV-1a, the checksums of the output.
inline constexpr std::uint64_t fnv_offset = 14695981039346656037ull;
inline std::uint64_t fnv_mix(std::uint64_t h, std::uint64_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) {
        h ^= (v >> (8 * k)) & 0xffu;
        h *= 1099511628211ull;
    }
    return h;
}

// Appends a frame's record to the output and its totals (the in-order output stage).
void append_frame(x264_output& out, const x264_frame_record& r);

}   // namespace pipescope::workloads::x264
