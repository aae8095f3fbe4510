// x264-like: encoding one frame's macroblocks — motion search by SAD, 16x16 intra prediction, the
// H.264 4x4 integer transform and quantizer (the standard's forward/inverse core transform and its
// multiplication and rescaling factors per qp % 6), reconstruction, and an exp-Golomb bit count
// standing in for the entropy coder.
#include "x264_internal.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pipescope::workloads::x264 {

namespace {

constexpr int zigzag4x4[16] = {0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15};
// Quantization multipliers and rescaling factors of H.264 by qp % 6, for the three classes of
// coefficient position: (even, even), (odd, odd), the others.
constexpr int quant_mf[6][3] = {{13107, 5243, 8066}, {11916, 4660, 7490}, {10082, 4194, 6554},
                                {9362, 3647, 5825},  {8192, 3355, 5243},  {7282, 2893, 4559}};
constexpr int rescale_v[6][3] = {{10, 16, 13}, {11, 18, 14}, {13, 20, 16}, {14, 23, 18}, {16, 25, 20}, {18, 29, 23}};

int position_class(int pos) {
    const int i = pos / 4, j = pos % 4;
    if (i % 2 == 0 && j % 2 == 0) return 0;
    if (i % 2 == 1 && j % 2 == 1) return 1;
    return 2;
}

// Exp-Golomb code lengths: ue(v) for v >= 0, se(v) mapped as 1, -1, 2, -2, ...
unsigned ue_bits(unsigned v) { return 2 * (static_cast<unsigned>(std::bit_width(v + 1)) - 1) + 1; }
unsigned se_bits(int v) { return ue_bits(v > 0 ? 2u * static_cast<unsigned>(v) - 1 : 2u * static_cast<unsigned>(-v)); }

unsigned mv_bits(motion_vector mv, motion_vector pred) { return se_bits(mv.x - pred.x) + se_bits(mv.y - pred.y); }

// Sum of absolute differences of two 16x16 blocks; stops early (returning something >= limit)
// once the partial sum reaches limit, which is what makes the search's cost depend on the data.
int sad16x16(const std::uint8_t* a, int a_stride, const std::uint8_t* b, int b_stride, int limit) {
    int sum = 0;
    for (int y = 0; y < mb_size; y += 4) {
        for (int k = 0; k < 4; ++k, a += a_stride, b += b_stride) {
#if defined(__SSE2__)
            const __m128i s = _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)),
                                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
            sum += _mm_cvtsi128_si32(s) + _mm_extract_epi16(s, 4);
#else
            for (int x = 0; x < mb_size; ++x) sum += std::abs(a[x] - b[x]);
#endif
        }
        if (sum >= limit) return sum;
    }
    return sum;
}

// The H.264 forward core transform, rows then columns (Y = Cf X Cf^T).
void forward4x4(const int in[16], int out[16]) {
    int tmp[16];
    for (int i = 0; i < 4; ++i) {
        const int* x = in + 4 * i;
        const int s0 = x[0] + x[3], s1 = x[1] + x[2], d0 = x[0] - x[3], d1 = x[1] - x[2];
        tmp[4 * i + 0] = s0 + s1;
        tmp[4 * i + 1] = 2 * d0 + d1;
        tmp[4 * i + 2] = s0 - s1;
        tmp[4 * i + 3] = d0 - 2 * d1;
    }
    for (int j = 0; j < 4; ++j) {
        const int x0 = tmp[j], x1 = tmp[4 + j], x2 = tmp[8 + j], x3 = tmp[12 + j];
        const int s0 = x0 + x3, s1 = x1 + x2, d0 = x0 - x3, d1 = x1 - x2;
        out[j] = s0 + s1;
        out[4 + j] = 2 * d0 + d1;
        out[8 + j] = s0 - s1;
        out[12 + j] = d0 - 2 * d1;
    }
}

// The inverse core transform, including the final rounding (x + 32) >> 6.
void inverse4x4(const int in[16], int out[16]) {
    int tmp[16];
    for (int i = 0; i < 4; ++i) {
        const int* w = in + 4 * i;
        const int e0 = w[0] + w[2], e1 = w[0] - w[2], e2 = (w[1] >> 1) - w[3], e3 = w[1] + (w[3] >> 1);
        tmp[4 * i + 0] = e0 + e3;
        tmp[4 * i + 1] = e1 + e2;
        tmp[4 * i + 2] = e1 - e2;
        tmp[4 * i + 3] = e0 - e3;
    }
    for (int j = 0; j < 4; ++j) {
        const int w0 = tmp[j], w1 = tmp[4 + j], w2 = tmp[8 + j], w3 = tmp[12 + j];
        const int e0 = w0 + w2, e1 = w0 - w2, e2 = (w1 >> 1) - w3, e3 = w1 + (w3 >> 1);
        out[j] = (e0 + e3 + 32) >> 6;
        out[4 + j] = (e1 + e2 + 32) >> 6;
        out[8 + j] = (e1 - e2 + 32) >> 6;
        out[12 + j] = (e0 - e3 + 32) >> 6;
    }
}

struct search_result {
    motion_vector mv;
    int cost = INT_MAX;
};

// Full search over ±range (clipped so the block stays inside the picture), cost SAD + λ·bits of
// the vector difference. Candidates in a fixed order; a strictly lower cost wins.
search_result motion_search(const plane& ref, const std::uint8_t* src, int src_stride, int x0, int y0, int range,
                            motion_vector pred, int lambda) {
    const int xmin = std::max(-range, -x0), xmax = std::min(range, ref.width - mb_size - x0);
    const int ymin = std::max(-range, -y0), ymax = std::min(range, ref.height - mb_size - y0);
    search_result best;
    auto consider = [&](int dx, int dy) {
        const int mv_cost = lambda * static_cast<int>(mv_bits({dx, dy}, pred));
        if (mv_cost >= best.cost) return;
        const int sad = sad16x16(src, src_stride, ref.row(y0 + dy) + x0 + dx, ref.width, best.cost - mv_cost);
        if (sad + mv_cost < best.cost) best = {{dx, dy}, sad + mv_cost};
    };
    // The predicted vector and zero first: a good early bound makes the scan cut most SADs short.
    consider(std::clamp(pred.x, xmin, xmax), std::clamp(pred.y, ymin, ymax));
    consider(0, 0);
    for (int dy = ymin; dy <= ymax; ++dy)
        for (int dx = xmin; dx <= xmax; ++dx) consider(dx, dy);
    return best;
}

void copy_block(const plane& ref, int x, int y, std::uint8_t* out) {
    for (int v = 0; v < mb_size; ++v) std::memcpy(out + v * mb_size, ref.row(y + v) + x, mb_size);
}

}   // namespace

struct frame_coder::mb_choice {
    int cost = INT_MAX;
    unsigned mb_type = 0;   // P: 0 list0; B: 0 list0, 1 list1, 2 bi; intra types follow
    bool intra = true;
    bool uses[2] = {false, false};
    motion_vector mv[2];
    std::uint8_t pred[mb_size * mb_size];
};

frame_coder::frame_coder(const source_frame& src, plane& recon, const plane* ref0, const plane* ref1,
                         const x264_encoder_params& enc)
    : src_(&src),
      recon_(&recon),
      ref0_(ref0),
      ref1_(ref1),
      enc_(enc),
      mb_cols_(src.pixels.width / mb_size),
      mb_rows_(src.pixels.height / mb_size) {
    // λ for the motion cost, about 0.85·2^((qp-12)/6) as H.264 reference encoders use for SAD.
    lambda_ = std::max(1, static_cast<int>(std::lround(0.85 * std::exp2((static_cast<int>(enc.qp) - 12) / 6.0))));
    for (auto& v : mvs_) v.assign(static_cast<std::size_t>(mb_cols_) * mb_rows_, {});
    record_.display = src.display;
    record_.type = src.type;
    record_.coef_checksum = fnv_offset;
}

// Median of the left, top and top-right neighbours' vectors (top-left when top-right is outside).
motion_vector frame_coder::predict_mv(int mbx, int mby, int list) const {
    auto at = [&](int x, int y) -> motion_vector {
        if (x < 0 || y < 0 || x >= mb_cols_) return {};
        return mvs_[list][static_cast<std::size_t>(y) * mb_cols_ + x];
    };
    const motion_vector a = at(mbx - 1, mby), b = at(mbx, mby - 1);
    const motion_vector c = mbx + 1 < mb_cols_ ? at(mbx + 1, mby - 1) : at(mbx - 1, mby - 1);
    auto median = [](int p, int q, int r) { return std::max(std::min(p, q), std::min(std::max(p, q), r)); };
    return {median(a.x, b.x, c.x), median(a.y, b.y, c.y)};
}

frame_coder::mb_choice frame_coder::choose_inter(int mbx, int mby, motion_vector pred0, motion_vector pred1) {
    const int x0 = mbx * mb_size, y0 = mby * mb_size, stride = src_->pixels.width;
    const std::uint8_t* src = src_->pixels.row(y0) + x0;
    const int range = static_cast<int>(enc_.search_range);
    mb_choice best;
    best.intra = false;
    const search_result fwd = motion_search(*ref0_, src, stride, x0, y0, range, pred0, lambda_);
    best.cost = fwd.cost;
    best.uses[0] = true;
    best.mv[0] = fwd.mv;
    copy_block(*ref0_, x0 + fwd.mv.x, y0 + fwd.mv.y, best.pred);
    if (src_->type != x264_frame_type::B) return best;

    const search_result bwd = motion_search(*ref1_, src, stride, x0, y0, range, pred1, lambda_);
    std::uint8_t p1[mb_size * mb_size];
    copy_block(*ref1_, x0 + bwd.mv.x, y0 + bwd.mv.y, p1);
    // Bi-prediction: the rounded average of the two best blocks.
    std::uint8_t bi[mb_size * mb_size];
    for (int k = 0; k < mb_size * mb_size; ++k) bi[k] = static_cast<std::uint8_t>((best.pred[k] + p1[k] + 1) >> 1);
    const int bi_cost = sad16x16(src, stride, bi, mb_size, INT_MAX) +
                        lambda_ * static_cast<int>(mv_bits(fwd.mv, pred0) + mv_bits(bwd.mv, pred1));
    if (bwd.cost < best.cost) {
        best.cost = bwd.cost;
        best.mb_type = 1;
        best.uses[0] = false;
        best.uses[1] = true;
        best.mv[1] = bwd.mv;
        std::memcpy(best.pred, p1, sizeof p1);
    }
    if (bi_cost < best.cost) {
        best.cost = bi_cost;
        best.mb_type = 2;
        best.uses[0] = best.uses[1] = true;
        best.mv[0] = fwd.mv;
        best.mv[1] = bwd.mv;
        std::memcpy(best.pred, bi, sizeof bi);
    }
    return best;
}

// Transforms, quantizes and reconstructs the macroblock's 16 4x4 blocks against `pred`; mixes the
// levels into the coefficient checksum and returns the bits of the coded block pattern and levels.
std::uint32_t frame_coder::code_residual(int mbx, int mby, const std::uint8_t* pred, bool intra, bool* coded) {
    const int x0 = mbx * mb_size, y0 = mby * mb_size;
    const int qp_rem = static_cast<int>(enc_.qp % 6), qp_div = static_cast<int>(enc_.qp / 6);
    const int qbits = 15 + qp_div;
    const int rounding = (1 << qbits) / (intra ? 3 : 6);
    int levels[16][16];
    unsigned nonzero[16];
    unsigned cbp = 0;
    for (int blk = 0; blk < 16; ++blk) {
        const int bx = (blk % 4) * 4, by = (blk / 4) * 4;
        int residual[16], coef[16], rescaled[16], back[16];
        for (int v = 0; v < 4; ++v)
            for (int u = 0; u < 4; ++u)
                residual[4 * v + u] = src_->pixels.row(y0 + by + v)[x0 + bx + u] - pred[(by + v) * mb_size + bx + u];
        forward4x4(residual, coef);
        nonzero[blk] = 0;
        for (int k = 0; k < 16; ++k) {
            const int cls = position_class(k);
            const int magnitude = (std::abs(coef[k]) * quant_mf[qp_rem][cls] + rounding) >> qbits;
            const int level = coef[k] < 0 ? -magnitude : magnitude;
            levels[blk][k] = level;
            nonzero[blk] += level != 0;
            rescaled[k] = level * rescale_v[qp_rem][cls] * (1 << qp_div);
            record_.coef_checksum = fnv_mix(record_.coef_checksum, static_cast<std::uint16_t>(level), 2);
        }
        if (nonzero[blk]) cbp |= 1u << ((by / 8) * 2 + bx / 8);
        inverse4x4(rescaled, back);
        for (int v = 0; v < 4; ++v)
            for (int u = 0; u < 4; ++u) {
                const int value = pred[(by + v) * mb_size + bx + u] + back[4 * v + u];
                recon_->row(y0 + by + v)[x0 + bx + u] = static_cast<std::uint8_t>(std::clamp(value, 0, 255));
            }
    }
    // Entropy estimate: ue(cbp), then per block of a coded 8x8 quadrant ue(count) and, in zigzag
    // order, ue(zeros before) + se(level) for each nonzero level.
    std::uint32_t bits = ue_bits(cbp);
    for (int blk = 0; blk < 16; ++blk) {
        const int bx = (blk % 4) * 4, by = (blk / 4) * 4;
        if (!(cbp & (1u << ((by / 8) * 2 + bx / 8)))) continue;
        bits += ue_bits(nonzero[blk]);
        unsigned run = 0;
        for (int k : zigzag4x4) {
            const int level = levels[blk][k];
            if (level == 0) {
                ++run;
                continue;
            }
            bits += ue_bits(run) + se_bits(level);
            run = 0;
        }
    }
    *coded = cbp != 0;
    return bits;
}

void frame_coder::encode_row(int mby) {
    const int stride = src_->pixels.width;
    for (int mbx = 0; mbx < mb_cols_; ++mbx) {
        const int x0 = mbx * mb_size, y0 = mby * mb_size;
        const std::uint8_t* src = src_->pixels.row(y0) + x0;
        const motion_vector pred_mv[2] = {predict_mv(mbx, mby, 0), predict_mv(mbx, mby, 1)};
        mb_choice choice;
        if (src_->type != x264_frame_type::I) choice = choose_inter(mbx, mby, pred_mv[0], pred_mv[1]);

        // Intra 16x16 from this frame's reconstructed neighbours: DC, vertical, horizontal.
        const bool has_top = mby > 0, has_left = mbx > 0;
        const std::uint8_t* top = has_top ? recon_->row(y0 - 1) + x0 : nullptr;
        int dc_sum = 0, dc_count = 0;
        if (has_top)
            for (int u = 0; u < mb_size; ++u) dc_sum += top[u], ++dc_count;
        if (has_left)
            for (int v = 0; v < mb_size; ++v) dc_sum += recon_->row(y0 + v)[x0 - 1], ++dc_count;
        const int dc = dc_count ? (dc_sum + dc_count / 2) / dc_count : 128;
        const unsigned intra_base = src_->type == x264_frame_type::I ? 0 : src_->type == x264_frame_type::P ? 1 : 3;
        for (int mode = 0; mode < 3; ++mode) {
            if ((mode == 1 && !has_top) || (mode == 2 && !has_left)) continue;
            std::uint8_t p[mb_size * mb_size];
            for (int v = 0; v < mb_size; ++v)
                for (int u = 0; u < mb_size; ++u)
                    p[v * mb_size + u] = static_cast<std::uint8_t>(mode == 0   ? dc
                                                                   : mode == 1 ? top[u]
                                                                               : recon_->row(y0 + v)[x0 - 1]);
            const unsigned type = intra_base + static_cast<unsigned>(mode);
            const int cost = sad16x16(src, stride, p, mb_size, INT_MAX) + lambda_ * static_cast<int>(ue_bits(type));
            if (cost < choice.cost) {
                choice.cost = cost;
                choice.mb_type = type;
                choice.intra = true;
                choice.uses[0] = choice.uses[1] = false;
                std::memcpy(choice.pred, p, sizeof p);
            }
        }

        bool coded = false;
        const std::uint32_t coef_bits = code_residual(mbx, mby, choice.pred, choice.intra, &coded);
        // Skip: the default inter mode (list0 for P, bi for B) with predicted vectors and no residual.
        const unsigned skip_type = src_->type == x264_frame_type::B ? 2 : 0;
        const bool skip = !choice.intra && !coded && choice.mb_type == skip_type &&
                          (!choice.uses[0] || choice.mv[0] == pred_mv[0]) && (!choice.uses[1] || choice.mv[1] == pred_mv[1]);
        std::uint64_t bits = 1;   // the skip flag
        if (skip) {
            ++record_.skip_mbs;
        } else {
            bits += ue_bits(choice.mb_type) + coef_bits;
            for (int list = 0; list < 2; ++list)
                if (choice.uses[list]) bits += mv_bits(choice.mv[list], pred_mv[list]);
        }
        record_.intra_mbs += choice.intra;
        record_.bits += bits;
        const std::size_t at = static_cast<std::size_t>(mby) * mb_cols_ + mbx;
        for (int list = 0; list < 2; ++list) mvs_[list][at] = choice.uses[list] ? choice.mv[list] : motion_vector{};
    }
}

x264_frame_record frame_coder::finish() {
    std::uint64_t h = fnv_offset, sse = 0;
    for (std::size_t k = 0; k < recon_->pix.size(); ++k) {
        h = fnv_mix(h, recon_->pix[k], 1);
        const int d = static_cast<int>(recon_->pix[k]) - static_cast<int>(src_->pixels.pix[k]);
        sse += static_cast<std::uint64_t>(d * d);
    }
    record_.recon_checksum = h;
    record_.sse = sse;
    return record_;
}

x264_frame_record frame_coder::encode_all() {
    for (int r = 0; r < mb_rows_; ++r) encode_row(r);
    return finish();
}

void append_frame(x264_output& out, const x264_frame_record& r) {
    out.frames.push_back(r);
    out.total_bits += r.bits;
    out.total_sse += r.sse;
    switch (r.type) {
        case x264_frame_type::I: ++out.count_i; break;
        case x264_frame_type::P: ++out.count_p; break;
        case x264_frame_type::B: ++out.count_b; break;
    }
}

}   // namespace pipescope::workloads::x264

namespace pipescope::workloads {

unsigned x264_row_offset(const x264_encoder_params& p) { return (p.search_range + x264::mb_size - 1) / x264::mb_size; }

double x264_output::psnr(const x264_video_params& v) const {
    const double pixels = static_cast<double>(v.mb_cols) * v.mb_rows * x264::mb_size * x264::mb_size * frames.size();
    if (pixels == 0 || total_sse == 0) return 99.0;
    return 10.0 * std::log10(255.0 * 255.0 * pixels / static_cast<double>(total_sse));
}

}   // namespace pipescope::workloads
