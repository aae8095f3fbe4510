// Hand-made trace models for the viewer's model tests.
#pragma once

#include <model/document.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace viewer_test {

namespace tm = pipescope::trace;

// A model with one track whose depth-0 slices are the given [begin, end) with names "stage k"
// (k = index into stages), plus "idle"/"parked" when stage < 0 (-1 idle, -2 parked).
struct spec {
    std::uint64_t b, e;
    int stage;
};
inline std::unique_ptr<pipescope::viewer::loaded_file> make_file(const std::vector<spec>& slices) {
    tm::trace_model m;
    m.strings = {"", "idle", "parked"};
    for (int k = 0; k < 16; ++k) m.strings.push_back("stage " + std::to_string(k));
    tm::track t;
    t.kind = tm::track_kind::thread;
    t.name = "worker 0";
    for (const spec& s : slices) {
        tm::slice x;
        x.begin = s.b;
        x.end = s.e;
        x.name = s.stage == -1 ? 1 : s.stage == -2 ? 2 : static_cast<tm::string_id>(3 + s.stage);
        t.slices.push_back(x);
    }
    m.tracks.push_back(std::move(t));
    return pipescope::viewer::prepare_file(std::move(m));
}

// n random disjoint slices (gaps and lengths from lognormal-ish distributions).
inline std::vector<spec> random_slices(std::mt19937_64& rng, std::size_t n, int stages) {
    std::vector<spec> v;
    std::uint64_t t = 1000;
    std::uniform_int_distribution<int> st(-2, stages - 1);
    std::uniform_int_distribution<int> mag(0, 5);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t gap = rng() % (std::uint64_t{1} << (mag(rng) * 3));
        const std::uint64_t len = rng() % (std::uint64_t{1} << (mag(rng) * 3));
        t += gap;
        v.push_back({t, t + len, st(rng)});
        t += len;
    }
    return v;
}

}   // namespace viewer_test
