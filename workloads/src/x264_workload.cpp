// `x264` as a named workload.
#include <pipescope/workloads/workload.hpp>
#include <pipescope/workloads/x264.hpp>

#include <chrono>
#include <fmt/format.h>

#include <cstdio>

namespace pipescope::workloads {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct size_defaults {
    unsigned mb_cols, mb_rows, frames;
};

size_defaults defaults_for(input_size s) {
    switch (s) {
        case input_size::tiny: return {4, 3, 10};       // 64x48
        case input_size::small: return {11, 9, 30};     // QCIF, 176x144
        case input_size::large: return {22, 18, 400};   // CIF, 352x288
    }
    return {11, 9, 30};
}

class x264_workload final : public workload {
public:
    std::string name() const override { return "x264"; }
    std::string summary() const override {
        return "video encoder over a synthetic video (seed 001 §3): one stage per macroblock row, P-frame rows "
               "wait for the reference, B-frames fork-join; the shape depends on the frame types";
    }
    std::string parameters() const override {
        return "width=<by size: tiny 4, small 11, large 22>: frame width in 16x16 macroblocks\n"
               "height=<by size: tiny 3, small 9, large 18>: frame height in macroblocks (= row stages)\n"
               "frames=<by size: tiny 10, small 30, large 400>: frames in the video\n"
               "keyint=24: an I-frame at least every keyint frames (1 = all I)\n"
               "bframes=2: B-frames between reference frames (0 = IPPP, 2 = IBBP)\n"
               "range=16: motion search range in pixels (row offset w = ceil(range/16))\n"
               "qp=26: quantizer (0-51)\n"
               "scenecut=on: start an I-frame at a scene change\n" +
               std::string(pipeline_parameters);
    }

    run_report run(scheduler& s, run_request& request) const override {
        x264_video_params video;
        x264_encoder_params enc;
        take_params(request, video, enc);
        const pipeline_options options = pipeline_options_from(request, request.params);
        request.params.reject_unknown(name());

        run_report report;
        auto t0 = std::chrono::steady_clock::now();
        const x264_output reference = x264_serial(video, enc, request.cancel);
        report.reference_seconds = seconds_since(t0);

        if (request.on_measured_start) request.on_measured_start(report.reference_seconds);
        t0 = std::chrono::steady_clock::now();
        const x264_output result = x264_pipeline(s, video, enc, options, &report.stats);
        if (request.on_measured_end) request.on_measured_end();
        report.seconds = seconds_since(t0);

        report.matches_reference = result == reference;
        report.description =
            fmt::format("{} frames {}x{} (I {}, P {}, B {}), {:.1f} kbit, PSNR {:.2f} dB", result.frames.size(),
                        video.mb_cols * 16, video.mb_rows * 16, result.count_i, result.count_p, result.count_b,
                        static_cast<double>(result.total_bits) / 1000.0, result.psnr(video));
        return report;
    }

    std::string refuses(const std::string& policy) const override {
        for (const auto& p : pipeline_policies())
            if (p.name == policy && p.needs_declared_stages) return std::string(x264_construct_and_run_refusal);
        return {};
    }

    program_info program(const run_request& request) const override {
        x264_video_params video;
        x264_encoder_params enc;
        run_request copy = request;   // read the parameters without consuming the caller's
        take_params(copy, video, enc);
        const unsigned w = x264_row_offset(enc);
        program_info p;
        p.shape = "on the fly (seed 001 §3, Fig. 2): iteration i encodes one I/P frame and the B-frames before it; "
                  "row r of its frame is stage 1 + " +
                  std::to_string(w) + "·i + r (w = " + std::to_string(w) +
                  " skipped stages per iteration), waited for P-frames only; B-frames fork-join in stage 2^40; "
                  "output in stage 2^40 + 1. " +
                  std::string(x264_construct_and_run_refusal);
        p.stages = {{"stage 0 · read, decide frame type", "serial",
                     "buffers B-frames until an I/P frame (GOP pattern, scene cuts)"},
                    {"stage 1 + w·i + r · encode macroblock row r", "stage_wait",
                     std::to_string(video.mb_rows) +
                         " row stages per I/P frame; P-frame rows wait for the reference's row r + w "
                         "(w = " +
                         std::to_string(w) + "), I-frame rows do not wait (hybrid stage)"},
                    {"stage 1 + w·i + rows · references ready", "stage_wait",
                     "empty node, only in I-frame iterations with B-frames: waits until the previous reference is whole"},
                    {"stage 2^40 · encode B-frames", "parallel",
                     "one fork-join task per buffered B-frame, against both references"},
                    {"stage 2^40 + 1 · write frames", "stage_wait", "in order: the I/P frame, then its B-frames"}};
        return p;
    }

private:
    static void take_params(run_request& request, x264_video_params& video, x264_encoder_params& enc) {
        const size_defaults d = defaults_for(request.size);
        video.seed = request.seed;
        video.mb_cols = static_cast<unsigned>(request.params.take_uint("width", d.mb_cols, 1, 120));
        video.mb_rows = static_cast<unsigned>(request.params.take_uint("height", d.mb_rows, 1, 68));
        video.frames = static_cast<unsigned>(request.params.take_uint("frames", d.frames, 1, 100000));
        enc.keyint = static_cast<unsigned>(request.params.take_uint("keyint", enc.keyint, 1, 100000));
        enc.bframes = static_cast<unsigned>(request.params.take_uint("bframes", enc.bframes, 0, 16));
        enc.search_range = static_cast<unsigned>(request.params.take_uint("range", enc.search_range, 0, 64));
        enc.qp = static_cast<unsigned>(request.params.take_uint("qp", enc.qp, 0, 51));
        enc.scenecut = request.params.take_bool("scenecut", enc.scenecut);
    }
};

}   // namespace

const workload& x264_encoder() {
    static const x264_workload w;
    return w;
}

}   // namespace pipescope::workloads
