// Area selection aggregates (viewer/model/area_selection.hpp): exact numbers on a hand-built run,
// and the K = 2 example against sums computed from the trace model another way.
#include <catch2/catch.hpp>

#include "area_reference.hpp"

#include <model/area_selection.hpp>
#include <model/view_state.hpp>

#include <filesystem>
#include <map>

using namespace pipescope::viewer;
namespace fs = std::filesystem;
namespace an = pipescope::analysis;

namespace {

int state(an::slice_kind k) { return static_cast<int>(k); }

// worker 0: stage 0 [0,10)  idle [12,40) {parked [20,30)}  stage 1 [43,60) {task [45,50)}
//           folded "stage 0–1" [60,80) (two nodes: stage 0 [60,70), stage 1 [70,80))
//           steal @39, suspend @41, events lost @50 (dropped 7)
// worker 1: stage 0 [5,25)  idle [25,100)
document hand_built() {
    tm::trace_model m;
    m.strings = {"",
                 "stage 0",
                 "stage 1",
                 "idle",
                 "parked",
                 "task",
                 "stage 0\xE2\x80\x93"
                 "1",
                 std::string(vocab::steal),
                 std::string(vocab::suspend),
                 std::string(vocab::events_lost),
                 std::string(vocab::key(vocab::arg_key::nodes)),
                 std::string(vocab::key(vocab::arg_key::last_stage)),
                 std::string(vocab::key(vocab::arg_key::stage)),
                 std::string(vocab::key(vocab::arg_key::dropped)),
                 "run"};
    enum : tm::string_id {
        s0 = 1,
        s1,
        idle,
        parked,
        task,
        fold,
        steal,
        suspend,
        lost,
        nodes,
        last_stage,
        stage,
        dropped,
        run_s
    };
    auto slice = [](std::uint64_t b, std::uint64_t e, tm::string_id n, std::uint16_t depth = 0) {
        tm::slice s;
        s.begin = b;
        s.end = e;
        s.name = n;
        s.depth = depth;
        return s;
    };
    auto instant = [](std::uint64_t ts, tm::string_id n) {
        tm::instant i;
        i.ts = ts;
        i.name = n;
        return i;
    };
    tm::track proc;
    proc.kind = tm::track_kind::process;
    proc.name = "demo";
    proc.run = 0;
    proc.instants = {instant(0, run_s)};
    tm::track w0;
    w0.kind = tm::track_kind::thread;
    w0.name = "worker 0";
    w0.run = 0;
    w0.worker = 0;
    w0.slices = {slice(0, 10, s0),  slice(12, 40, idle),    slice(20, 30, parked, 1),
                 slice(43, 60, s1), slice(45, 50, task, 1), slice(60, 80, fold)};
    w0.max_depth = 1;
    w0.slices[5].args_first = 0;
    w0.slices[5].args_count = 3;
    m.args = {{nodes, tm::arg_kind::uint_value, 2},
              {last_stage, tm::arg_kind::uint_value, 1},
              {stage, tm::arg_kind::uint_value, 0},
              {dropped, tm::arg_kind::uint_value, 7}};
    w0.instants = {instant(39, steal), instant(41, suspend), instant(50, lost)};
    w0.instants[2].args_first = 3;
    w0.instants[2].args_count = 1;
    tm::track w1 = w0;
    w1.name = "worker 1";
    w1.worker = 1;
    w1.max_depth = 0;
    w1.slices = {slice(5, 25, s0), slice(25, 100, idle)};
    w1.instants.clear();
    m.tracks = {proc, w0, w1};
    tm::run r;
    r.track = 0;
    r.workers = {1, 2};
    r.tracks = {0, 1, 2};
    m.runs.push_back(r);
    document d;
    d.add(prepare_file(std::move(m)));
    return d;
}

}   // namespace

TEST_CASE("area stage table: ties keep the stage order, both ways", "[viewer][area]") {
    std::vector<area_stage> st(4);
    for (std::uint32_t i = 0; i < 4; ++i) st[i].stage = 10 + i;
    st[0].ns = st[2].ns = 5;
    st[1].ns = 9;
    st[3].ns = 1;
    using rows = std::vector<std::uint32_t>;
    CHECK(sorted_stage_rows(st, {area_stage_column::time_in_area, true}) == rows{1, 0, 2, 3});
    CHECK(sorted_stage_rows(st, {area_stage_column::time_in_area, false}) == rows{3, 0, 2, 1});
    CHECK(sorted_stage_rows({}, {}).empty());
}

TEST_CASE("area selection of a hand-built run: exact aggregates", "[viewer][area]") {
    const document d = hand_built();
    REQUIRE(d.start == 0);
    area_selection a{15, 75, {{0, 1}}};
    area_stats s = compute_area_stats(d, a, false);
    CHECK(s.length == 60);
    CHECK(s.tracks_with_slices == 1);
    CHECK(s.state_ns[state(an::slice_kind::idle)] == 15);   // [15,20) [30,40)
    CHECK(s.state_ns[state(an::slice_kind::parked)] == 10);
    CHECK(s.state_ns[area_between_slices] == 3);            // [40,43)
    CHECK(s.state_ns[state(an::slice_kind::node)] == 27);   // [43,45) [50,60) [60,75)
    CHECK(s.state_ns[state(an::slice_kind::task)] == 5);
    REQUIRE(s.stages.size() == 2);
    CHECK(s.stages[0].stage == 0);
    CHECK(s.stages[0].ns == 10);   // the fold's first node
    CHECK(s.stages[0].nodes.count == 1);
    CHECK(s.stages[1].stage == 1);
    CHECK(s.stages[1].ns == 17 + 5);   // stage 1 [43,60), the fold's [70,75)
    CHECK(s.stages[1].nodes.count == 2);
    CHECK(s.stages[1].nodes.max == 17);
    // The stage table measures inside the area (issue 37, 6): the fold's node [70,80) counts its
    // 5 ns inside [15,75), so the mean is 11, not the whole nodes' 13.5.
    CHECK(s.stages[1].nodes.mean == Approx(13.5));
    CHECK(s.stages[1].inside.count == 2);
    CHECK(s.stages[1].inside.mean == Approx(11));
    CHECK(s.stages[1].inside.max == 17);
    CHECK(s.stages[0].inside.mean == Approx(10));
    using col = area_stage_column;
    using rows = std::vector<std::uint32_t>;
    CHECK(sorted_stage_rows(s.stages, {}) == rows{0, 1});
    CHECK(sorted_stage_rows(s.stages, {col::stage, true}) == rows{1, 0});
    CHECK(sorted_stage_rows(s.stages, {col::time_in_area, true}) == rows{1, 0});
    CHECK(sorted_stage_rows(s.stages, {col::nodes, false}) == rows{0, 1});
    CHECK(sorted_stage_rows(s.stages, {col::mean_in_area, true}) == rows{1, 0});
    CHECK(sorted_stage_rows(s.stages, {col::p95_in_area, false}) == rows{0, 1});
    CHECK(std::string(area_stage_column_name(col::time_in_area)) == "in area");
    CHECK(s.nodes.count == 3);
    CHECK(s.nodes.mean == Approx(37.0 / 3));
    CHECK(s.nodes.p95 == 17);
    CHECK(s.steals == 1);
    CHECK(s.suspensions == 1);
    CHECK(s.events_lost == 7);

    // Both workers over the whole run: the states of each add up to the range.
    a = {0, 100, {{0, 1}, {0, 2}}};
    s = compute_area_stats(d, a, false);
    std::uint64_t sum = 0;
    for (auto v : s.state_ns) sum += v;
    CHECK(sum == 200);
    CHECK(s.state_ns[state(an::slice_kind::idle)] == 18 + 75);
    CHECK(s.state_ns[area_between_slices] == 2 + 3 + 20 + 5);   // worker 0: [10,12) [40,43) [80,100); worker 1: [0,5)
    CHECK(s.nodes.count == 5);

    // An empty range, a range outside the run, a track that is not there: nothing, no crash.
    s = compute_area_stats(d, {30, 30, {{0, 1}}}, false);
    CHECK(s.nodes.count == 0);
    s = compute_area_stats(d, {-50, -10, {{0, 1}, {3, 0}, {0, 99}}}, false);
    CHECK(s.state_ns[area_between_slices] == 0);
    CHECK(s.tracks_with_slices == 1);
}

TEST_CASE("area selection on the K = 2 example against the trace model", "[viewer][area]") {
    document d;
    d.add(load_file(fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace"));
    const tm::trace_model& m = d.files[0]->model;
    const run_ref& run = d.runs[0];
    const double len = static_cast<double>(run.end - run.start);
    area_selection a;
    a.t0 = std::floor(len * 0.3);
    a.t1 = std::floor(len * 0.6);
    for (auto w : run.workers) a.tracks.push_back({0, w});
    const area_stats s = compute_area_stats(d, a, true);
    const std::uint64_t lo = run.start + static_cast<std::uint64_t>(a.t0), hi = run.start + static_cast<std::uint64_t>(a.t1);
    const viewer_test::area_reference expect = viewer_test::reference_area(m, run.workers, lo, hi);
    CHECK(s.tracks_with_slices == run.workers.size());
    for (int k = 0; k < area_state_count; ++k) {
        INFO(area_state_name(k));
        CHECK(s.state_ns[k] == expect.state_ns[k]);
    }
    CHECK(s.nodes.count == expect.nodes);
    CHECK(expect.nodes > 20);
    CHECK(s.steals == expect.steals);
    auto stage_ns = expect.stage_ns;
    std::uint64_t stage_total = 0;
    for (const auto& st : s.stages) {
        CHECK(st.ns == stage_ns[static_cast<long>(st.stage)]);
        stage_total += st.ns;
    }
    std::uint64_t expect_total = 0;
    for (auto& [j, ns] : stage_ns) expect_total += ns;
    CHECK(stage_total == expect_total);
}
