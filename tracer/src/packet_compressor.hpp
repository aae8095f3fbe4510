// Compressing a batch of converted TracePackets for one `compressed_packets` packet (docs/tracing.md,
// "Compression"). Internal to the tracer (the writer's building block).
//
// The output is a zlib-format stream (RFC 1950: header, raw DEFLATE, Adler-32), which Perfetto and
// our reader inflate like any other, written by libdeflate: a whole buffer at a time, several times
// faster than zlib's compress2 at the same ratio. A libdeflate compressor holds its match-finder
// tables (a few hundred KB at the low levels), so each level's is allocated once, when first used,
// reused for every later batch and freed by the destructor. Not thread-safe: one object per thread.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

struct libdeflate_compressor;

namespace pipescope::trace::detail {

class packet_compressor {
public:
    static constexpr int min_level = 1;
    static constexpr int max_level = 9;

    packet_compressor() = default;
    ~packet_compressor();
    packet_compressor(const packet_compressor&) = delete;
    packet_compressor& operator=(const packet_compressor&) = delete;

    // Replaces `out` with `in` compressed at `level` (writer_options::compression_level: clamped to
    // 1..9, which are libdeflate's levels 1..9). Throws std::bad_alloc if libdeflate cannot allocate
    // the level's compressor, std::runtime_error if the compression fails (the output did not fit
    // libdeflate's own bound, which would be a libdeflate bug).
    void compress(const std::vector<std::uint8_t>& in, int level, std::vector<std::uint8_t>& out);

private:
    std::array<libdeflate_compressor*, max_level> compressors_{};   // [level - 1], allocated when first used
};

}   // namespace pipescope::trace::detail
