#include "packet_compressor.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>

namespace pipescope::trace::detail {

packet_compressor::~packet_compressor() {
    for (libdeflate_compressor* c : compressors_)
        if (c) libdeflate_free_compressor(c);
}

void packet_compressor::compress(const std::vector<std::uint8_t>& in, int level, std::vector<std::uint8_t>& out) {
    level = std::clamp(level, min_level, max_level);
    libdeflate_compressor*& c = compressors_[static_cast<std::size_t>(level - 1)];
    if (!c) {
        c = libdeflate_alloc_compressor(level);
        if (!c) throw std::bad_alloc();   // the level is valid, so only memory can be missing
    }
    out.resize(libdeflate_zlib_compress_bound(c, in.size()));
    const std::size_t size = libdeflate_zlib_compress(c, in.data(), in.size(), out.data(), out.size());
    if (size == 0)
        throw std::runtime_error("perfetto_writer: libdeflate compression failed (level " + std::to_string(level) + ", " +
                                 std::to_string(in.size()) + " bytes did not fit the bound of " +
                                 std::to_string(out.size()) + ")");
    out.resize(size);
}

}   // namespace pipescope::trace::detail
