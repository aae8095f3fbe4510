// x264-like: the serial encoder and the on-the-fly pipeline of seed 001 §3, Fig. 2.
//
// Iteration i encodes one I/P frame and the B-frames buffered before it (stage 0 decides the
// types). Its node for macroblock row r is stage 1 + w·i + r, entered with stage_wait for a
// P-frame: the cross edge comes from node (i-1, 1 + w·i + r), which is iteration i-1's row r + w
// — the rows a search window of ±w macroblock rows reads — or, past i-1's last row, a null node
// that is done once i-1 has left its rows. Skipping w·i stages is how Fig. 2 (line 16) turns
// "row r + w of the previous frame" into a same-numbered cross edge. I-frame rows do not wait.
// The B-frames run in stage PROCESS_BFRAMES, one task each (cilk_for in Fig. 2, lines 25-28),
// and stage END writes the frames out in order (line 29).
#include "x264_internal.hpp"

#include <pipescope/task_group.hpp>
#include <pipescope/workloads/workload.hpp>

#include <memory>
#include <stdexcept>

namespace pipescope::workloads {

using namespace x264;

namespace {

void check(const x264_video_params& v, const x264_encoder_params& e) {
    if (v.mb_cols == 0 || v.mb_rows == 0) throw std::invalid_argument("x264: the frame needs at least one macroblock");
    if (e.keyint == 0) throw std::invalid_argument("x264: keyint must be at least 1");
    if (e.qp > 51) throw std::invalid_argument("x264: qp must be between 0 and 51");
}

}   // namespace

x264_output x264_serial(const x264_video_params& video_params, const x264_encoder_params& enc, std::stop_token cancel) {
    check(video_params, enc);
    const synthetic_video video(video_params);
    gop_reader reader(video, enc);
    x264_output out;
    std::shared_ptr<const plane> previous;   // the previous I/P frame, reconstructed
    while (reader.more()) {
        throw_if_cancelled(cancel);
        const coding_group g = reader.next();
        auto recon = std::make_shared<plane>(video.width(), video.height());
        const x264_frame_record ref = frame_coder(g.ref, *recon, previous.get(), nullptr, enc).encode_all();
        std::vector<x264_frame_record> b(g.bframes.size());
        for (std::size_t k = 0; k < g.bframes.size(); ++k) {
            plane b_recon(video.width(), video.height());
            b[k] = frame_coder(g.bframes[k], b_recon, previous.get(), recon.get(), enc).encode_all();
        }
        append_frame(out, ref);
        for (const auto& r : b) append_frame(out, r);
        previous = std::move(recon);
    }
    return out;
}

x264_output x264_pipeline(scheduler& s, const x264_video_params& video_params, const x264_encoder_params& enc,
                          const pipeline_options& options, pipeline_stats* stats) {
    check(video_params, enc);
    const synthetic_video video(video_params);
    gop_reader reader(video, enc);
    const unsigned w = x264_row_offset(enc);
    const unsigned rows = video_params.mb_rows;
    x264_output out;
    std::shared_ptr<const plane> last_reference;   // stage 0's: the latest I/P frame's reconstruction
    std::uint64_t next_iteration = 0;

    const pipeline_stats st = pipe_while(
        s, [&] { return reader.more(); },
        [&](iteration& it) -> pipe_task {
            // Stage 0 (serial): read up to the next I/P frame, buffering B-frames (Fig. 2, lines 8-14).
            const std::uint64_t i = next_iteration++;
            const coding_group g = reader.next();
            const std::shared_ptr<const plane> previous = last_reference;
            const auto recon = std::make_shared<plane>(video.width(), video.height());
            last_reference = recon;
            const bool is_p = g.ref.type == x264_frame_type::P;

            // Row stages (lines 15-24): P-frame rows wait for the reference's row r + w.
            frame_coder coder(g.ref, *recon, previous.get(), nullptr, enc);
            for (unsigned r = 0; r < rows; ++r) {
                const std::uint64_t j = x264_row_stage(i, r, w);
                if (is_p) co_await it.stage_wait(j);
                else co_await it.stage(j);
                coder.encode_row(static_cast<int>(r));
            }
            const x264_frame_record ref = coder.finish();

            std::vector<x264_frame_record> b(g.bframes.size());
            if (!g.bframes.empty()) {
                // The B-frames also read the previous reference whole. A P-frame's last row has
                // already waited for it; an I-frame waited for nothing, so it waits here, at the
                // stage after its last row: a null node of i-1, done once i-1 has left its rows.
                if (!is_p && previous) co_await it.stage_wait(x264_row_stage(i, rows, w));
                co_await it.stage(x264_stage_bframes);
                task_group group(s);
                for (std::size_t k = 0; k < g.bframes.size(); ++k)
                    group.spawn([&, k] {
                        plane b_recon(video.width(), video.height());
                        b[k] = frame_coder(g.bframes[k], b_recon, previous.get(), recon.get(), enc).encode_all();
                    });
                group.sync();
            }

            co_await it.stage_wait(x264_stage_output);   // END: in order
            append_frame(out, ref);
            for (const auto& r : b) append_frame(out, r);
        },
        options);
    if (stats) *stats = st;
    return out;
}

}   // namespace pipescope::workloads
