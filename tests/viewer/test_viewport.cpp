#include <catch2/catch.hpp>

#include <model/viewport.hpp>

#include <cmath>

using namespace pipescope::viewer;

TEST_CASE("viewport: ns <-> pixels round trip", "[viewer][viewport]") {
    viewport vp;
    vp.t0 = 123456.75;
    vp.npp = 37.5;
    vp.width = 1200;
    for (double px : {0.0, 1.0, 599.5, 1199.0, -20.0}) CHECK(vp.to_px(vp.to_ns(px)) == Approx(px).margin(1e-9));
    for (double t : {123456.75, 200000.0, 1e9}) CHECK(vp.to_ns(vp.to_px(t)) == Approx(t).epsilon(1e-12));
    CHECK(vp.t1() == Approx(123456.75 + 1200 * 37.5));
}

TEST_CASE("viewport: zoom keeps the time under the cursor", "[viewer][viewport]") {
    viewport vp;
    vp.t0 = 5e6;
    vp.npp = 1000;
    vp.width = 800;
    for (double px : {0.0, 123.0, 799.0}) {
        for (double f : {0.5, 0.8, 1.25, 3.0}) {
            viewport v = vp;
            const double t = v.to_ns(px);
            v.zoom_at(px, f);
            CHECK(v.npp == Approx(vp.npp * f));
            CHECK(v.to_ns(px) == Approx(t).epsilon(1e-12));
            v.zoom_at(px, 1 / f);   // and back
            CHECK(v.t0 == Approx(vp.t0).epsilon(1e-12));
            CHECK(v.npp == Approx(vp.npp).epsilon(1e-12));
        }
    }
}

TEST_CASE("viewport: zoom limits, pan, frame and clamp", "[viewer][viewport]") {
    viewport vp;
    vp.width = 1000;
    vp.npp = 1;
    vp.zoom_at(0, 1e-9);
    CHECK(vp.npp == vp.min_npp);
    vp.npp = 10;
    vp.t0 = 0;
    vp.pan_px(100);   // dragging right shows earlier time
    CHECK(vp.t0 == Approx(-1000));
    vp.frame(2000, 12000, 0.0);
    CHECK(vp.to_px(2000) == Approx(0));
    CHECK(vp.to_px(12000) == Approx(1000));
    vp.frame(2000, 12000, 0.05);
    CHECK(vp.to_px(2000) == Approx(50));
    CHECK(vp.to_px(12000) == Approx(950));
    vp.frame(5000, 5000);   // a zero-length selection is centred
    CHECK(vp.to_px(5000) == Approx(500));
    vp.t0 = -1e12;
    vp.npp = 1e12;
    vp.clamp(0, 1e6);
    CHECK(vp.npp <= 1e6 * 1.5 / 1000 + 1e-9);
    CHECK(vp.t1() > 0);
    CHECK(vp.t0 < 1e6);
}

TEST_CASE("ruler: nice steps and units", "[viewer][viewport]") {
    for (double npp : {0.01, 0.3, 1.0, 7.0, 123.0, 5e4, 9e6, 3e9}) {
        const double s = nice_step(npp, 100);
        CHECK(s >= npp * 100);
        CHECK(s < npp * 100 * 5.01);
        const double m = s / std::pow(10.0, std::floor(std::log10(s) + 1e-9));
        CHECK((std::fabs(m - 1) < 1e-6 || std::fabs(m - 2) < 1e-6 || std::fabs(m - 5) < 1e-6));
    }
    CHECK(format_duration(512) == "512 ns");
    CHECK(format_duration(1500) == "1.5 \xC2\xB5s");
    CHECK(format_duration(2.25e6) == "2.25 ms");
    CHECK(format_duration(3e9) == "3 s");
    CHECK(format_tick(2.5e6, 5e5) == "2500 \xC2\xB5s");   // the unit follows the step
    CHECK(format_tick(2e6, 1e6) == "2 ms");
    CHECK(format_tick(1500, 500) == "1500 ns");
    CHECK(format_tick(0, 2e9) == "0 s");
    CHECK(format_tick(1.25e3, 250) == "1250 ns");
    CHECK(format_tick(1.2e3, 200) == "1200 ns");
}

// Issue 37, defect 1: a file opened after the view was clamped to a shorter document opened on a
// window 1.5 times the shorter one wide (the last clamp's max_npp held back frame()).
TEST_CASE("viewport: framing a range longer than the last clamp allowed shows it whole", "[viewer][viewport]") {
    viewport vp;
    vp.width = 1000;
    vp.frame(0, 1.5e6, 0.02);
    vp.clamp(0, 1.5e6);         // a 1.5 ms document
    vp.frame(0, 9.8e6, 0.02);   // a 9.8 ms run opened since
    CHECK(vp.to_px(0) == Approx(20));
    CHECK(vp.to_px(9.8e6) == Approx(980));
    vp.clamp(0, 9.8e6);   // the view's next clamp, against the document with the new run
    CHECK(vp.to_px(0) == Approx(20));
    CHECK(vp.to_px(9.8e6) == Approx(980));
}
