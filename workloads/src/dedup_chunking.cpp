// Coarse and fine chunks (seed 000 §2.2: DataProcess makes coarse chunks, FindAllAnchors cuts them
// into fine ones). Fine boundaries are content-defined with a Gear rolling hash: h = (h << 1) +
// gear[byte], so h depends on the last 64 bytes only, and a chunk ends where the top bits of h are
// all zero. A region repeated at another offset is therefore cut at the same places (after at most
// one chunk of resynchronisation), which is what lets dedup find repeats that are not aligned.
#include <pipescope/workloads/dedup.hpp>

#include <algorithm>
#include <bit>
#include <string>

namespace pipescope::workloads {

namespace {

constexpr std::size_t gear_window = 64;   // bytes h depends on (64-bit h, shifted once per byte)

const std::array<std::uint64_t, 256>& gear_table() {
    static const std::array<std::uint64_t, 256> table = [] {
        std::array<std::uint64_t, 256> t{};
        std::uint64_t state = 0x6465647570676561ull;   // fixed: archives must not depend on anything else
        for (auto& v : t) {
            std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            v = z ^ (z >> 31);
        }
        return t;
    }();
    return table;
}

// After min_chunk bytes every byte ends the chunk with probability 2^-bits, so the expected length
// is about min_chunk + 2^bits: bits is chosen to make that avg_chunk.
unsigned cut_bits(const dedup_config& c) {
    const std::size_t spread = c.avg_chunk - c.min_chunk;
    return static_cast<unsigned>(std::bit_width(spread) - 1 + ((spread & (std::bit_floor(spread) >> 1)) ? 1 : 0));
}

void require(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("dedup: " + what);
}

}   // namespace

void validate(const dedup_config& c) {
    require(c.min_chunk >= gear_window && c.min_chunk <= (1u << 20),
            "min_chunk=" + std::to_string(c.min_chunk) + ": must be between 64 and 1048576");
    require(c.avg_chunk >= c.min_chunk + 2 && c.avg_chunk <= (1u << 22),
            "avg_chunk=" + std::to_string(c.avg_chunk) + ": must be between min_chunk+2 (" +
                std::to_string(c.min_chunk + 2) + ") and 4194304");
    require(c.max_chunk > c.avg_chunk && c.max_chunk <= (1u << 24), "max_chunk=" + std::to_string(c.max_chunk) +
                                                                        ": must be between avg_chunk+1 (" +
                                                                        std::to_string(c.avg_chunk + 1) + ") and 16777216");
    require(c.coarse_size >= 4096 && c.coarse_size <= (1u << 26),
            "coarse=" + std::to_string(c.coarse_size) + ": must be between 4096 and 67108864");
    require(c.level >= 0 && c.level <= 9, "level=" + std::to_string(c.level) + ": must be between 0 and 9");
}

byte_vector read_coarse_chunk(byte_reader& in, const dedup_config& c) {
    byte_vector buf(c.coarse_size);
    std::size_t got = 0;
    while (got < buf.size()) {
        const std::size_t n = in.read(buf.data() + got, buf.size() - got);
        if (n == 0) break;
        got += n;
    }
    buf.resize(got);
    return buf;
}

std::vector<std::size_t> fine_chunk_ends(const std::uint8_t* data, std::size_t n, const dedup_config& c) {
    const auto& gear = gear_table();
    const std::uint64_t below = std::uint64_t{1} << (64 - cut_bits(c));   // h < below: top bits all zero
    std::vector<std::size_t> ends;
    ends.reserve(n / c.avg_chunk + 2);
    std::size_t start = 0;
    while (start < n) {
        const std::size_t hard_end = std::min(n, start + c.max_chunk);
        std::size_t cut = hard_end;
        if (start + c.min_chunk < hard_end) {
            // Warm the hash up on the window before the first possible cut, so that every cut
            // decision sees exactly the 64 bytes before it, whatever came earlier.
            std::uint64_t h = 0;
            std::size_t i = start + c.min_chunk - gear_window;
            for (; i < start + c.min_chunk; ++i) h = (h << 1) + gear[data[i]];
            for (; i < hard_end; ++i) {
                h = (h << 1) + gear[data[i]];
                if (h < below) {
                    cut = i + 1;
                    break;
                }
            }
        }
        ends.push_back(cut);
        start = cut;
    }
    return ends;
}

}   // namespace pipescope::workloads
