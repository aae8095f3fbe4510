// The generated dedup input: what a backup stream or a disk image looks like to a deduplicator.
// Fresh text-like and binary-like blocks, interleaved with copies of earlier regions taken at
// arbitrary (unaligned) offsets, some with a few bytes changed, so that fixed-size chunking would
// miss most repeats and content-defined chunking finds them.
#include <pipescope/workloads/dedup.hpp>

#include <algorithm>
#include <string>

namespace pipescope::workloads {

namespace {

// splitmix64: tiny, fast, and the same on every platform (std:: distributions are not).
class rng {
public:
    explicit rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
    std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }

private:
    std::uint64_t state_;
};

std::vector<std::string> make_vocabulary(rng& r) {
    std::vector<std::string> words(1500);
    for (auto& w : words) {
        const std::size_t len = r.between(2, 10);
        for (std::size_t i = 0; i < len; ++i) w += static_cast<char>('a' + r.below(26));
    }
    return words;
}

// Words with a skewed (roughly Zipf-like) frequency, spaces, punctuation and line breaks.
void append_text(byte_vector& out, std::size_t n, rng& r, const std::vector<std::string>& words) {
    const std::size_t end = out.size() + n;
    std::size_t on_line = 0;
    while (out.size() < end) {
        const std::size_t a = r.below(words.size()), b = r.below(words.size());
        const std::string& w = words[std::min(a, b) * std::min(a, b) / words.size()];   // favours low indices
        out.insert(out.end(), w.begin(), w.end());
        if (++on_line == 12) {
            out.push_back('.');
            out.push_back('\n');
            on_line = 0;
        } else {
            out.push_back(r.below(10) == 0 ? ',' : ' ');
        }
    }
    out.resize(end);
}

// One of three binary shapes: 32-byte records with counters and random fields, a noisy 16-bit
// sawtooth signal, or bytes from a small alphabet.
void append_binary(byte_vector& out, std::size_t n, rng& r) {
    const std::size_t end = out.size() + n;
    switch (r.below(3)) {
        case 0: {
            std::uint32_t id = static_cast<std::uint32_t>(r.next());
            while (out.size() < end) {
                std::uint8_t rec[32] = {};
                for (int k = 0; k < 4; ++k) rec[k] = static_cast<std::uint8_t>(id >> (8 * k));
                ++id;
                const std::uint64_t f = r.next();
                for (int k = 0; k < 6; ++k) rec[8 + k] = static_cast<std::uint8_t>(f >> (8 * k));
                rec[16] = static_cast<std::uint8_t>(r.below(4));
                out.insert(out.end(), rec, rec + 32);
            }
            break;
        }
        case 1: {
            const unsigned period = static_cast<unsigned>(r.between(50, 400));
            for (unsigned t = 0; out.size() < end; ++t) {
                const int v = static_cast<int>((t % period) * 60000 / period) - 30000 + static_cast<int>(r.below(64));
                out.push_back(static_cast<std::uint8_t>(v & 0xff));
                out.push_back(static_cast<std::uint8_t>((v >> 8) & 0xff));
            }
            break;
        }
        default: {
            const unsigned alphabet = static_cast<unsigned>(r.between(4, 40));
            while (out.size() < end) out.push_back(static_cast<std::uint8_t>(0x20 + r.below(alphabet)));
            break;
        }
    }
    out.resize(end);
}

}   // namespace

byte_vector dedup_corpus(std::size_t bytes, std::uint64_t seed) {
    rng r(seed * 0x2545F4914F6CDD1Dull + 17);
    const std::vector<std::string> words = make_vocabulary(r);
    byte_vector out;
    out.reserve(bytes + 256 * 1024);
    while (out.size() < bytes) {
        const std::size_t kind = r.below(100);
        if (kind < 45 && out.size() >= 16 * 1024) {
            // A repeat of an earlier region, at any offset, of 4 KiB .. 192 KiB.
            const std::size_t len = std::min(r.between(4 * 1024, 192 * 1024), out.size() / 2);
            const std::size_t from = r.below(out.size() - len + 1);
            const std::size_t at = out.size();
            out.resize(at + len);   // (insert() from the vector into itself is not allowed)
            std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(from), len, out.begin() + static_cast<std::ptrdiff_t>(at));
            if (r.below(2) == 0) {   // an edited copy: a few bytes differ
                for (std::size_t k = r.between(1, 3); k > 0; --k) out[at + r.below(len)] ^= 0x5a;
            }
        } else if (kind < 75) {
            append_text(out, r.between(4 * 1024, 64 * 1024), r, words);
        } else {
            append_binary(out, r.between(4 * 1024, 64 * 1024), r);
        }
    }
    out.resize(bytes);
    return out;
}

}   // namespace pipescope::workloads
