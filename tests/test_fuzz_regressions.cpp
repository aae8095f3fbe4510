// Replays what the fuzzer found (tests/fuzz/regressions/) and a bounded, deterministic mutation pass
// over the seed traces through the same code the libFuzzer target runs (scripts/fuzz.sh), so every
// build — plain, ASan+UBSan, TSan — checks the reader's contract: malformed input is rejected with a
// decode_error and nothing else happens (no other exception, crash, sanitizer report or hang).
#include "fuzz/exercise_trace_reader.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path tests_dir = fs::path(__FILE__).parent_path();

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> files_in(const fs::path& dir, const std::string& ext = {}) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && (ext.empty() || e.path().extension() == ext)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

}   // namespace

TEST_CASE("fuzz regressions: every saved input is read or rejected with a decode_error", "[fuzz][reader]") {
    const auto inputs = files_in(tests_dir / "fuzz" / "regressions");
    REQUIRE(!inputs.empty());   // at least the NaN counter the fuzzer found first
    for (const auto& p : inputs) {
        INFO(p.filename().string());
        const auto bytes = read_bytes(p);
        CHECK_NOTHROW(pipescope::fuzz::exercise_trace_reader(bytes.data(), bytes.size()));
    }
}

TEST_CASE("fuzz seeds: the foreign traces are read, and mutations of them are read or rejected cleanly", "[fuzz][reader]") {
    const auto seeds = files_in(tests_dir / "data", ".pftrace");
    REQUIRE(seeds.size() >= 3);
    std::mt19937_64 rng(20261122);
    for (const auto& p : seeds) {
        INFO(p.filename().string());
        const auto original = read_bytes(p);
        CHECK(pipescope::fuzz::exercise_trace_reader(original.data(), original.size()));
        std::size_t rejected = 0;
        constexpr int mutations = 300;
        for (int m = 0; m < mutations; ++m) {
            std::vector<std::uint8_t> bytes = original;
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int k = 0; k < edits && !bytes.empty(); ++k) {
                const std::size_t at = rng() % bytes.size();
                switch (rng() % 4) {
                    case 0: bytes[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;          // bit flip
                    case 1: bytes[at] = static_cast<std::uint8_t>(rng()); break;                       // byte
                    case 2: bytes.resize(at); break;                                                   // truncate
                    default: bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), 4, 0xFF);   // varint-ish run
                }
            }
            INFO("mutation " << m);
            bool read = false;
            CHECK_NOTHROW(read = pipescope::fuzz::exercise_trace_reader(bytes.data(), bytes.size()));
            rejected += !read;
        }
        CHECK(rejected > 0);   // the mutations do reach the error paths
    }
}
