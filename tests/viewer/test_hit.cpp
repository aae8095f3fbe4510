#include "support.hpp"

#include <catch2/catch.hpp>
#include <model/lod.hpp>

using namespace pipescope::viewer;
using viewer_test::make_file;

TEST_CASE("hit testing picks the slice under the cursor, else the nearest within tolerance", "[viewer][hit]") {
    const auto f = make_file({{100, 200, 0}, {250, 260, 1}, {400, 1000, 2}});
    const row_view row = f->row(0, 0);
    CHECK(hit_row(row, 150, 0) == 0);
    CHECK(hit_row(row, 100, 0) == 0);
    CHECK(hit_row(row, 200, 0) == 0);
    CHECK(hit_row(row, 255, 0) == 1);
    CHECK(hit_row(row, 999, 5) == 2);
    CHECK(hit_row(row, 230, 5) == npos);   // 30 from the first, 20 from the second
    CHECK(hit_row(row, 230, 25) == 1);     // nearest: the second
    CHECK(hit_row(row, 210, 25) == 0);     // nearest: the first
    CHECK(hit_row(row, 50, 10) == npos);
    CHECK(hit_row(row, 1005, 10) == 2);
    CHECK(hit_row(row, 2000, 10) == npos);
    CHECK(hit_row(row_view{}, 5, 100) == npos);
}

TEST_CASE("hit testing on nested slices uses the row of the depth", "[viewer][hit]") {
    tm::trace_model m;
    m.strings = {"", "outer", "inner"};
    tm::track t;
    t.kind = tm::track_kind::thread;
    t.name = "worker 0";
    t.slices = {{0, 1000, 1, 0, 0, 0, false},
                {100, 200, 2, 0, 0, 1, false},
                {500, 900, 2, 0, 0, 1, false},
                {2000, 3000, 1, 0, 0, 0, false}};
    t.max_depth = 1;
    t.instants = {{150, 1, 0, 0, 0}, {700, 2, 0, 0, 0}};
    m.tracks.push_back(t);
    const auto f = prepare_file(std::move(m));
    const row_view r0 = f->row(0, 0), r1 = f->row(0, 1);
    REQUIRE(r0.size == 2);
    REQUIRE(r1.size == 2);
    CHECK(r0.slice_index(hit_row(r0, 600, 0)) == 0);
    CHECK(r1.slice_index(hit_row(r1, 600, 0)) == 2);
    CHECK(r1.slice_index(hit_row(r1, 150, 0)) == 1);
    CHECK(hit_row(r1, 2500, 10) == npos);
    CHECK(r0.slice_index(hit_row(r0, 2500, 10)) == 3);
    CHECK(f->row(0, 2).size == 0);
    CHECK(hit_instant(f->model.tracks[0].instants, 160, 20) == 0);
    CHECK(hit_instant(f->model.tracks[0].instants, 400, 20) == npos);
    CHECK(hit_instant(f->model.tracks[0].instants, 690, 20) == 1);
}
