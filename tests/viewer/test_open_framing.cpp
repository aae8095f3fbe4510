// What the axis shows when files are added (model/open_framing.hpp; issue 37, defects 1 and 2).
#include <catch2/catch.hpp>

#include <model/open_framing.hpp>

#include "support.hpp"

using namespace pipescope::viewer;
using viewer_test::make_file;

namespace {
// Adds a file of one slice [b, e) the way the shell does: note the axis, add, carry it over.
void open_file(document& d, view_state& st, std::uint64_t b, std::uint64_t e) {
    const axis_before_add before = note_axis_before_add(d, st);
    d.add(make_file({{b, e, 0}}));
    carry_axis_after_add(d, st, before);
}
// The timeline applies the request (update_viewport).
void lay_out(view_state& st) {
    if (st.frame_request) st.vp.frame(st.frame_request->first, st.frame_request->second, timeline_frame_margin);
    st.frame_request.reset();
}
}   // namespace

TEST_CASE("open framing: files frame everything until the user zooms, then keep the range", "[viewer][open]") {
    document d;
    view_state st;
    st.vp.width = 1000;
    open_file(d, st, 10'000, 20'000);   // nothing open: everything
    REQUIRE(st.frame_request);
    CHECK(*st.frame_request == frame_all_range(d, false));
    // A second file before the first frame was drawn (the request still pending): everything again.
    open_file(d, st, 20'000, 110'000);
    CHECK(*st.frame_request == std::pair<double, double>{0, 100'000});
    lay_out(st);
    CHECK(shows_everything(d, st));
    st.vp.resize(700);   // a resized window still shows everything
    CHECK(shows_everything(d, st));
    // Applied and untouched: a third, longer file frames the union (not limited by the last scale).
    open_file(d, st, 110'000, 1'010'000);
    CHECK(*st.frame_request == std::pair<double, double>{0, 1'000'000});
    lay_out(st);
    // Zoomed: a file starting before all others moves the document's start by 9000 ns; the view
    // keeps showing the same moments (display times shift by 9000), at the same scale.
    st.vp.zoom_at(350, 0.5);
    CHECK_FALSE(shows_everything(d, st));
    const double t0 = st.vp.t0, npp = st.vp.npp;
    st.cursor = 5000.0;
    open_file(d, st, 1000, 2000);
    CHECK_FALSE(st.frame_request);
    CHECK(st.vp.t0 == Approx(t0 + 9000));
    CHECK(st.vp.npp == npp);
    CHECK(*st.cursor == Approx(14'000));
    // Aligned runs: display times are per run, the first run's offset is its own start: no shift.
    st.align_runs = true;
    const double t0_aligned = st.vp.t0;
    open_file(d, st, 500, 600);
    CHECK(st.vp.t0 == t0_aligned);
    // Showing everything but with a selection: kept.
    st.request_frame_all(d);
    lay_out(st);
    st.sel = {0, tm::event_ref{0, 0, false}};
    CHECK_FALSE(shows_everything(d, st));
    open_file(d, st, 0, 5'000'000);
    CHECK_FALSE(st.frame_request);
}
