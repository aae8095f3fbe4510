// Checks how the timeline's axis moved between state dumps written by a script (docs/viewer.md,
// "Scripted input"), where the relation is a ratio that `expect` cannot state:
//   pipescope_viewer_dumps_check held-zoom DIR   the dumps of scripts/held-zoom.txt: W and S taps
//                                                zoom one step, holds 64 frames apart differ by one
//                                                second's zoom, always about the view's centre
//   pipescope_viewer_dumps_check same-range A.json B.json   both show the same time range
// Exit 0 if every relation holds, 1 naming the one that does not, 2 on a usage error.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

using json = nlohmann::json;

namespace {

struct axis {
    double start, end, npp;
};

axis read_axis(const std::string& path) {
    std::ifstream in(path);
    const json j = json::parse(in);
    const json& v = j.at("visible");
    return {v.at("start").get<double>(), v.at("end").get<double>(), v.at("ns_per_px").get<double>()};
}

int failures = 0;

void expect_near(const char* what, double got, double want, double rel) {
    const bool ok = std::fabs(got - want) <= rel * std::fabs(want);
    std::printf("%s %s: %.9g (expected %.9g)\n", ok ? "ok  " : "FAIL", what, got, want);
    failures += !ok;
}

void expect_less(const char* what, double got, double bound) {
    const bool ok = got < bound;
    std::printf("%s %s: %.9g (expected < %.9g)\n", ok ? "ok  " : "FAIL", what, got, bound);
    failures += !ok;
}

// The timeline's keys (views/timeline_view.cpp): a tap's step, and a held key's zoom per second.
constexpr double tap_in = 0.78, held_in_per_s = 0.05;
// held-zoom.txt's long hold lasts 64 frames longer than its short one: 1 s at 1/64 s per frame.
constexpr double long_minus_short_s = 1.0;

void held_zoom(const std::string& dir) {
    auto at = [&](const char* name) { return read_axis(dir + "/" + name + ".json"); };
    const axis before = at("before"), w_tap = at("w-tap"), w_short = at("w-held-short"), w_long = at("w-held-long");
    const axis s_tap = at("s-tap"), s_short = at("s-held-short"), s_long = at("s-held-long");
    const double centre = (before.start + before.end) / 2, span = before.end - before.start;
    expect_near("W tap: ns per px after / before", w_tap.npp / before.npp, tap_in, 1e-9);
    // A hold is a tap and then, past 0.25 s, held_in_per_s per second: longer than the tap alone.
    const double w_short_ratio = w_short.npp / w_tap.npp, w_long_ratio = w_long.npp / w_short.npp;
    expect_less("W held 20 frames: ns per px after / before", w_short_ratio, tap_in);
    expect_near("W held: (long hold's zoom) / (short hold's zoom)", w_long_ratio / w_short_ratio,
                std::pow(held_in_per_s, long_minus_short_s), 1e-6);
    expect_near("S tap: ns per px after / before", s_tap.npp / w_long.npp, 1 / tap_in, 1e-9);
    const double s_short_ratio = s_short.npp / s_tap.npp, s_long_ratio = s_long.npp / s_short.npp;
    expect_near("S held: (long hold's zoom) / (short hold's zoom)", s_long_ratio / s_short_ratio,
                std::pow(1 / held_in_per_s, long_minus_short_s), 1e-6);
    // W and S are inverse: the same taps and holds of each come back to the first scale.
    expect_near("W then S: ns per px at the end / at the start", s_long.npp / before.npp, 1, 1e-6);
    // Without the pointer over the tracks, both zoom about the view's centre.
    for (const axis* a : {&w_tap, &w_long, &s_tap, &s_long})
        expect_near("centre of the view (ns)", (a->start + a->end) / 2, centre, 1e-7 * span / std::fabs(centre));
}

void same_range(const std::string& a_path, const std::string& b_path) {
    const axis a = read_axis(a_path), b = read_axis(b_path);
    expect_near("start", b.start, a.start, 1e-9);
    expect_near("end", b.end, a.end, 1e-9);
}

}   // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "held-zoom" && argc == 3) held_zoom(argv[2]);
    else if (mode == "same-range" && argc == 4) same_range(argv[2], argv[3]);
    else {
        std::fprintf(stderr, "usage: pipescope_viewer_dumps_check held-zoom DIR | same-range A.json B.json\n");
        return 2;
    }
    return failures ? 1 : 0;
}
