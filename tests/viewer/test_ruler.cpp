#include <catch2/catch.hpp>

#include <model/ruler.hpp>

#include <cmath>
#include <string>

using namespace pipescope::viewer;

namespace {

// What every ruler must keep: labels inside [0, width], in order, `gap` apart; majors on the grid
// base + k * step; at least two labels on a ruler of 600 px or more, one on a narrower one.
void check_layout(const ruler_layout& r, double t0, double t1, double width, double base) {
    INFO("view [" << t0 << ", " << t1 << "] base " << base << " step " << r.step);
    REQUIRE(r.step > 0);
    double prev_end = -1e300;
    int labels = 0;
    for (const ruler_tick& t : r.ticks) {
        CHECK(t.t >= t0 - r.minor * 1e-6);
        CHECK(t.t <= t1 + r.minor * 1e-6);
        CHECK(t.x == Approx((t.t - t0) / (t1 - t0) * width).margin(1e-6));
        if (t.major) {
            const double k = (t.t - base) / r.step;
            CHECK(std::fabs(k - std::round(k)) < 1e-6);
        }
        if (t.label.empty()) continue;
        INFO("label " << t.label << " at " << t.label_x);
        CHECK(t.major);
        CHECK(t.label_x >= 0);
        CHECK(t.label_x + t.label_w <= width + 1e-9);
        CHECK(t.label_x >= prev_end + 10 - 1e-9);
        CHECK(t.label_w == approx_text_width(t.label));
        prev_end = t.label_x + t.label_w;
        ++labels;
    }
    CHECK(labels >= (width >= 600 ? 2 : 1));
}

std::vector<std::string> labels_of(const ruler_layout& r) {
    std::vector<std::string> v;
    for (const auto& t : r.ticks)
        if (!t.label.empty()) v.push_back(t.label);
    return v;
}

}   // namespace

TEST_CASE("ruler: no overlaps, nothing past the edge, at every zoom", "[viewer][ruler]") {
    // From a whole 3 s run down to a few ns, at several places and widths, from the run's start
    // and from a marked range's start.
    for (double width : {300.0, 1000.0, 1432.0, 2400.0})
        for (double span : {3e9, 4.1e7, 1.25e6, 5e4, 3300.0, 120.0, 7.0})
            for (double t0 : {0.0, 1234.5, 41.5e6, 1.2000005e9})
                for (double base : {0.0, 41.5e6 + 777}) {
                    const ruler_layout r = ruler_ticks(t0, t0 + span, width, base);
                    check_layout(r, t0, t0 + span, width, base);
                }
}

TEST_CASE("ruler: offsets from the base in one unit", "[viewer][ruler]") {
    const auto minus = std::string("\xE2\x88\x92");
    // A 5 ms view of a run: ms, no decimals needed for 1 ms steps.
    auto r = ruler_ticks(0, 5e6, 1000, 0);
    CHECK(r.step == 5e5);
    CHECK(labels_of(r) == std::vector<std::string>{"0", "+0.5 ms", "+1.0 ms", "+1.5 ms", "+2.0 ms", "+2.5 ms", "+3.0 ms",
                                                   "+3.5 ms", "+4.0 ms", "+4.5 ms"});
    // The label of the last tick would cross the right edge: it goes left of its tick.
    r = ruler_ticks(0, 4.02e6, 1000, 0);
    CHECK(r.ticks.back().label == "+4.0 ms");
    CHECK(r.ticks.back().label_x + r.ticks.back().label_w < r.ticks.back().x);
    // Zoomed in at 41.5 ms: "+41.5010 ms" (6 digits) still reads as an offset from the start.
    r = ruler_ticks(41.5e6, 41.5e6 + 5000, 1000, 0);
    CHECK(r.step == 500);
    CHECK(labels_of(r).front() == "+41.5000 ms");
    CHECK(labels_of(r)[2] == "+41.5010 ms");
    // Before the base (a marked range starting later): negative offsets.
    r = ruler_ticks(0, 2e6, 1000, 1e6);
    CHECK(labels_of(r).front() == minus + "1.0 ms");
}

TEST_CASE("ruler: zoomed far in, labels count from an anchor tick", "[viewer][ruler]") {
    // 5 µs at 1.2 s: "+1.2000005 s" needs 8 digits, so the first label is the anchor's full
    // offset and the others say how far they are from it.
    const auto r = ruler_ticks(1.2e9, 1.2e9 + 5000, 1000, 0);
    const auto l = labels_of(r);
    REQUIRE(l.size() >= 3);
    CHECK(l[0] == "+1.2000000 s");
    CHECK(r.origin == 1.2e9);
    CHECK(l[1] == "+0.5 \xC2\xB5s");
    CHECK(l[2] == "+1.0 \xC2\xB5s");
    int anchors = 0;
    for (const auto& t : r.ticks) anchors += t.anchor;
    CHECK(anchors == 1);
}

TEST_CASE("ruler: degenerate views draw nothing", "[viewer][ruler]") {
    CHECK(ruler_ticks(5, 5, 1000, 0).ticks.empty());
    CHECK(ruler_ticks(5, 4, 1000, 0).ticks.empty());
    CHECK(ruler_ticks(0, 1e6, 0, 0).ticks.empty());
    CHECK(ruler_ticks(0, NAN, 1000, 0).ticks.empty());
    CHECK(ruler_ticks(0, 1e6, 1000, INFINITY).ticks.empty());
}

TEST_CASE("ruler: the hover readout resolves a pixel", "[viewer][ruler]") {
    CHECK(cursor_readout(41.50012e6, 0, 10) == "+41.50012 ms");
    CHECK(cursor_readout(41.50012e6, 0, 1e4) == "+41.50 ms");
    CHECK(cursor_readout(250, 1000, 1) == "\xE2\x88\x92"
                                          "750 ns");
    CHECK(cursor_readout(1000, 1000, 50) == "0");
    CHECK(cursor_readout(2.5e9, 0, 1e6) == "+2.500 s");
    CHECK(format_offset(1250e3, 5e6, 3) == "+1.250 ms");
    CHECK(format_offset(-500, 500, 0) == "\xE2\x88\x92"
                                         "500 ns");
}
