// The layout model behind "no text is cut off" (issue 22, item 5): eliding a label to its cell,
// wrapping a toolbar, the timeline's sizes at each UI scale, a resized time axis. The viewer's
// views lay out with these; viewer.script.no-clip-* check the whole window at 1000x700 and
// 2560x1440 through the layout audit.
#include <catch2/catch.hpp>

#include <model/layout_audit.hpp>
#include <model/line_flow.hpp>
#include <model/text_fit.hpp>
#include <model/timeline_metrics.hpp>
#include <model/viewport.hpp>

#include <string>

using namespace pipescope::viewer;

TEST_CASE("layout: a label elides to its width with an ellipsis", "[viewer][layout]") {
    // approx_text_width: 7 px per code point, the ellipsis one code point.
    const std::string header = "pipe-fib-256 · piper · P=2   1.52 ms, 2 workers, K = 2, 256 iterations";
    CHECK(elide_to_width(header, 1000, approx_text_width) == header);
    CHECK(elide_to_width(header, 147, approx_text_width) == "pipe-fib-256 · piper…");   // 21 code points
    CHECK(elide_to_width(header, 146, approx_text_width) == "pipe-fib-256 · pipe…");
    CHECK(elide_to_width(header, 112, approx_text_width) == "pipe-fib-256 ·…");   // the space before the cut dropped
    // Never between the bytes of a code point: "·" is two bytes.
    for (double w = 14; w < 200; w += 1) {
        const std::string e = elide_to_width(header, w, approx_text_width);
        CHECK(approx_text_width(e) <= w);
        CHECK(e.substr(e.size() - 3) == "\xE2\x80\xA6");
        CHECK((static_cast<unsigned char>(e[e.size() - 4]) & 0xC0) != 0xC0);   // no lead byte before the ellipsis
    }
    CHECK(elide_to_width(header, 6, approx_text_width).empty());   // not even "…" fits
    CHECK(elide_to_width("", 0, approx_text_width).empty());
}

TEST_CASE("layout: a toolbar wraps before the item that would cross the edge", "[viewer][layout]") {
    line_flow f(300);
    const flow_cell a = f.place(100, 8);
    CHECK((a.x == 0 && a.line == 0 && a.new_line && a.fits));
    const flow_cell b = f.place(100, 8);
    CHECK((b.x == 108 && b.line == 0 && !b.new_line));
    CHECK(f.room() == 92);
    const flow_cell c = f.place(84, 8);   // ends at 300: still fits
    CHECK((c.x == 216 && c.line == 0 && c.fits));
    const flow_cell d = f.place(1, 8);   // 301 > 300: a new line
    CHECK((d.x == 0 && d.line == 1 && d.new_line));
    const flow_cell e = f.place(400, 8);   // wider than a line: a line of its own, reported as not fitting
    CHECK((e.x == 0 && e.line == 2 && !e.fits));
    const flow_cell g = f.place(10, 8);
    CHECK((g.line == 3 && g.x == 0));
    CHECK(f.lines() == 4);
    CHECK(line_flow(100).lines() == 0);
    CHECK(line_flow(100).room() == 100);
}

TEST_CASE("layout: the audit lists the labels wider than their cells", "[viewer][layout]") {
    layout_audit a;
    a.check("toolbar", "Fit", 30, 30.4);   // within half a pixel: rounding
    a.check("toolbar", "legend", 80, 60);
    a.check("header", "run", 10, 400);
    REQUIRE(a.labels().size() == 3);
    const auto clipped = a.clipped();
    REQUIRE(clipped.size() == 1);
    CHECK(clipped[0].text == "legend");
    a.clear();
    CHECK(a.labels().empty());
}

TEST_CASE("layout: the timeline's sizes follow the font size", "[viewer][layout]") {
    const timeline_metrics one = timeline_metrics_for(15);   // UI scale 1
    CHECK(one.row_h == 18);
    CHECK(one.label_w == 168);
    CHECK(one.header_h == 24);
    CHECK(one.instant_h == 10);
    CHECK(one.line_h == 14);
    CHECK(one.counter_h == 40);
    CHECK(one.ruler_h == 36);
    const timeline_metrics two = timeline_metrics_for(30);   // UI scale 2
    CHECK(two.row_h == 36);
    CHECK(two.label_w == 336);
    CHECK(two.header_h == 48);
    CHECK(two.counter_h == 80);
    const timeline_metrics s15 = timeline_metrics_for(23);   // 1.5: the font is rounded to 23 px
    CHECK(s15.row_h == 28);                                  // round(18 * 23 / 15) = round(27.6)
    CHECK(s15.row_h > s15.line_h);
    CHECK(s15.row_h >= 23);   // a row holds a line of text
}

TEST_CASE("viewport: a resize keeps the visible time range", "[viewer][viewport]") {
    viewport vp;
    vp.width = 1400;
    vp.frame(0, 7e6, 0.02);   // fitted
    const double t0 = vp.t0, t1 = vp.t1();
    vp.resize(600);   // the window made narrower
    CHECK(vp.width == 600);
    CHECK(vp.t0 == Approx(t0));
    CHECK(vp.t1() == Approx(t1));
    vp.resize(2300);   // wider
    CHECK(vp.t1() == Approx(t1));
    CHECK(vp.to_px(7e6) == Approx(2300 * 0.98).epsilon(1e-9));   // the run still ends 2 % before the right edge
    vp.resize(0);                                                // no time area: nothing changes
    CHECK(vp.width == 2300);
}
