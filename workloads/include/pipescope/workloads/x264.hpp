// x264-like (seed 001 §3, Fig. 2-3): a small video encoder over a synthetic video, as an on-the-fly
// pipeline whose shape is decided by the frame types.
//
// Stage 0 reads frames and decides each one's type (I, P or B; GOP pattern plus scene-cut
// detection), buffering B-frames until an I- or P-frame arrives. That I/P frame is encoded one
// macroblock row per stage; a P-frame's row r waits for the previous I/P frame's row r + w to be
// reconstructed (w = search range in macroblock rows), which Fig. 2 expresses by starting
// iteration i's rows w·i stages later than iteration 0's and entering each row with stage_wait.
// I-frame rows do not wait. The buffered B-frames are then encoded in parallel (fork-join), each
// against its two references, and an in-order stage writes the "bitstream".
//
// The encoder is real, if small: full-search block matching by SAD, 16x16 intra prediction,
// the 4x4 integer transform and quantizer of H.264, reconstruction (P-frames reference
// reconstructed frames), and an exp-Golomb bit count as the entropy estimate.
#pragma once

#include <pipescope/pipeline.hpp>

#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::workloads {

// Why a construct-and-run (TBB-style, filters declared up front) policy cannot run this workload.
inline constexpr std::string_view x264_construct_and_run_refusal =
    "x264: the pipeline's structure is decided on the fly — how many stages a frame passes and which of "
    "them wait depend on the frame type chosen in stage 0 — so it cannot be declared up front, as a TBB "
    "filter chain or as threads bound to stages (seed 001 §10, quoting Reed et al.)";

// The synthetic input: a function of these fields only.
struct x264_video_params {
    unsigned mb_cols = 11;   // frame width in 16x16 macroblocks
    unsigned mb_rows = 9;    // frame height in macroblocks (= row stages per I/P frame)
    unsigned frames = 40;
    std::uint64_t seed = 1;
};

struct x264_encoder_params {
    unsigned keyint = 24;         // an I-frame at least every keyint frames (1: all I)
    unsigned bframes = 2;         // B-frames between references (0: IPPP..., 2: IBBP...)
    unsigned search_range = 16;   // motion vectors within ±search_range pixels
    unsigned qp = 26;             // quantizer, 0..51 as in H.264
    bool scenecut = true;         // start an I-frame where the picture changes completely
};

// The row offset w of Fig. 2: a P-frame's row r reads the reference up to row r + w.
unsigned x264_row_offset(const x264_encoder_params& p);

enum class x264_frame_type : char { I = 'I', P = 'P', B = 'B' };

// One frame of the output, the bitstream stand-in.
struct x264_frame_record {
    std::uint32_t display = 0;   // position in the input (display order)
    x264_frame_type type = x264_frame_type::I;
    std::uint64_t bits = 0;             // exp-Golomb estimate of the coded size
    std::uint64_t coef_checksum = 0;    // FNV-1a over the quantized coefficients, in coding order
    std::uint64_t recon_checksum = 0;   // FNV-1a over the reconstructed picture
    std::uint64_t sse = 0;              // squared error of the reconstruction against the source
    std::uint32_t intra_mbs = 0, skip_mbs = 0;
    bool operator==(const x264_frame_record&) const = default;
};

struct x264_output {
    std::vector<x264_frame_record> frames;   // coding order: each I/P frame, then the B-frames before it
    std::uint64_t total_bits = 0;
    std::uint64_t total_sse = 0;
    std::uint32_t count_i = 0, count_p = 0, count_b = 0;
    bool operator==(const x264_output&) const = default;

    double psnr(const x264_video_params& v) const;   // average over all pixels, in dB
};

// The serial program (T_S): the same encoder as plain loops, no runtime at all.
x264_output x264_serial(const x264_video_params& video, const x264_encoder_params& enc,
                        std::stop_token cancel = {});   // cancel: per group of frames

// The pipeline (Fig. 2); `options.policy` selects piper or the serial elision.
x264_output x264_pipeline(scheduler& s, const x264_video_params& video, const x264_encoder_params& enc,
                          const pipeline_options& options, pipeline_stats* stats = nullptr);

// Stage numbers of Fig. 2, for tools and tests that read the pipeline's DAG back.
inline constexpr std::uint64_t x264_stage_bframes = std::uint64_t{1} << 40;   // PROCESS_BFRAMES
inline constexpr std::uint64_t x264_stage_output = x264_stage_bframes + 1;    // END
// The stage of row r of the I/P frame in iteration i (PROCESS_IPFRAME + w·i + r). An I-frame
// iteration with B-frames also passes stage x264_row_stage(i, rows, w), an empty node entered with
// stage_wait: its B-frames read the previous reference whole, which its rows never waited for.
inline std::uint64_t x264_row_stage(std::uint64_t iteration, unsigned row, unsigned w) {
    return 1 + std::uint64_t{w} * iteration + row;
}

}   // namespace pipescope::workloads
