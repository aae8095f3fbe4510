// The breakdown and compare views' pure computations (viewer/model/breakdown.hpp, compare.hpp):
// exact numbers on a hand-built run, and invariants on the example traces.
#include <catch2/catch.hpp>

#include <model/breakdown.hpp>
#include <model/compare.hpp>
#include <model/document.hpp>

#include <fmt/core.h>

#include <filesystem>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

namespace {

namespace tm = pipescope::trace;

// One run over [0, 100 * scale] with two workers, a line and the live-iterations counter:
//
// worker 0: stage 0 [0,10)  gap [10,12)  idle [12,40) {failed_steals 3, parked [20,30) inside}
//           steal @39 (inside the idle, just before its end)  gap [40,43)
//           stage 1 [43,60) {task [45,50) inside}  nothing after 60 (untraced)
// worker 1: parked [0,5)  steal @5  gap [5,8)  stage 0 [8,20)  stage 0 [20,20) (empty)
//           stage 1 [20,30)  suspend @30  gap [30,31)  idle [31,31): the worker's last event, as
//           the writer closes an idle still open when the recording stops: it lasts until the end
// line 0:   running [0,15)  waiting at stage 1 [15,18)  running [18,35)  waiting at stage 1 [35,45)
// counter:  live iterations 1 @0, 2 @10, 1 @50
// process:  run @0, run summary @100
tm::trace_model make_model(std::uint64_t scale) {
    tm::trace_model m;
    m.strings = {"",
                 "stage 0",
                 "stage 1",
                 "idle",
                 "parked",
                 "task",
                 "steal",
                 "suspend",
                 "running",
                 "waiting at stage 1",
                 "failed_steals",
                 "live iterations",
                 "run",
                 "run summary"};
    enum : tm::string_id { s0 = 1, s1, idle, parked, task, steal, suspend, running, waiting, failed, live, run_s, summary };
    auto slice = [&](std::uint64_t b, std::uint64_t e, tm::string_id n, std::uint16_t depth = 0) {
        tm::slice s;
        s.begin = b * scale;
        s.end = e * scale;
        s.name = n;
        s.depth = depth;
        return s;
    };
    auto instant = [&](std::uint64_t ts, tm::string_id n) {
        tm::instant i;
        i.ts = ts * scale;
        i.name = n;
        return i;
    };
    auto track = [&](const char* name, tm::track_kind k) {
        tm::track t;
        t.name = name;
        t.kind = k;
        t.run = 0;
        return t;
    };
    tm::track proc = track("demo · piper · P=2", tm::track_kind::process);
    proc.instants = {instant(0, run_s), instant(100, summary)};

    tm::track w0 = track("worker 0", tm::track_kind::thread);
    w0.worker = 0;
    w0.slices = {slice(0, 10, s0), slice(12, 40, idle), slice(20, 30, parked, 1), slice(43, 60, s1), slice(45, 50, task, 1)};
    w0.slices[1].args_first = 0;
    w0.slices[1].args_count = 1;
    m.args.push_back({failed, tm::arg_kind::uint_value, 3});
    w0.max_depth = 1;
    w0.instants = {instant(39, steal)};

    tm::track w1 = track("worker 1", tm::track_kind::thread);
    w1.worker = 1;
    w1.slices = {slice(0, 5, parked), slice(8, 20, s0), slice(20, 20, s0), slice(20, 30, s1), slice(31, 31, idle)};
    w1.instants = {instant(5, steal), instant(30, suspend)};

    tm::track l0 = track("line 0", tm::track_kind::line);
    l0.line = 0;
    l0.slices = {slice(0, 15, running), slice(15, 18, waiting), slice(18, 35, running), slice(35, 45, waiting)};

    tm::track c = track("live iterations", tm::track_kind::counter);
    c.counters = {{0, 1}, {10 * scale, 2}, {50 * scale, 1}};

    m.tracks = {proc, w0, w1, l0, c};
    tm::run r;
    r.track = 0;
    r.name = proc.name;
    r.workers = {1, 2};
    r.lines = {3};
    r.tracks = {0, 1, 2, 3, 4};
    r.dag.K = 2;
    m.runs.push_back(r);
    return m;
}

std::uint64_t get(const time_split& t, time_category c) { return t[c]; }

}   // namespace

TEST_CASE("breakdown of a hand-built run: exact times per worker and in total", "[viewer][breakdown]") {
    document d;
    d.add(prepare_file(make_model(1), "demo.pftrace"));
    REQUIRE(d.runs.size() == 1);
    const run_breakdown b = compute_breakdown(*d.files[0], d.runs[0]);
    CHECK(b.span == 100);
    CHECK(b.stall_derived);
    REQUIRE(b.workers.size() == 2);

    const auto& w0 = b.workers[0];
    CHECK(w0.name == "worker 0");
    CHECK(w0.time.span == 100);
    CHECK(get(w0.time, time_category::work) == 27);       // stage 0 10 + stage 1 17 (its task included)
    CHECK(get(w0.time, time_category::scheduler) == 2);   // [10,12)
    CHECK(get(w0.time, time_category::untraced) == 40);   // [60,100): after the worker's last event
    CHECK(get(w0.time, time_category::stealing) == 3);    // [40,43): the steal @39 falls in the idle just before
    CHECK(get(w0.time, time_category::parked) == 10);     // the parked nested in the idle
    CHECK(get(w0.time, time_category::stall) == 8);       // idle [12,20)+[30,40) against waiting [15,18)+[35,45)
    CHECK(get(w0.time, time_category::idle) == 10);
    CHECK(w0.time.sum() == 100);
    CHECK(w0.nodes == 2);
    CHECK(w0.steals == 1);
    CHECK(w0.failed_steals == 3);

    const auto& w1 = b.workers[1];
    CHECK(get(w1.time, time_category::parked) == 5);
    CHECK(get(w1.time, time_category::stealing) == 3);    // [5,8) after the steal @5
    CHECK(get(w1.time, time_category::work) == 22);       // [8,20) + [20,30); the empty node adds nothing
    CHECK(get(w1.time, time_category::scheduler) == 1);   // [30,31): a suspend is no steal
    CHECK(get(w1.time, time_category::stall) == 10);      // idle [31,100) against waiting [35,45)
    CHECK(get(w1.time, time_category::idle) == 59);
    CHECK(get(w1.time, time_category::untraced) == 0);
    CHECK(w1.time.sum() == 100);
    CHECK(w1.nodes == 3);

    const auto& t = b.total;
    CHECK(t.name == "total");
    CHECK(t.time.span == 200);
    CHECK(get(t.time, time_category::work) == 49);
    CHECK(get(t.time, time_category::scheduler) == 3);
    CHECK(get(t.time, time_category::untraced) == 40);
    CHECK(get(t.time, time_category::stealing) == 6);
    CHECK(get(t.time, time_category::idle) == 69);
    CHECK(get(t.time, time_category::stall) == 18);
    CHECK(get(t.time, time_category::parked) == 15);
    CHECK(t.time.sum() == 200);
    CHECK(t.time.fraction(time_category::work) == Approx(0.245));
    CHECK(t.steals == 2);
    CHECK(t.nodes == 5);
}

TEST_CASE("breakdown: an unterminated slice lasts until the run's end", "[viewer][breakdown]") {
    tm::trace_model m = make_model(1);
    tm::slice s;
    s.begin = s.end = 62;
    s.name = 5;   // task
    s.unterminated = true;
    m.tracks[1].slices.push_back(s);
    document d;
    d.add(prepare_file(std::move(m), "open.pftrace"));
    const run_breakdown b = compute_breakdown(*d.files[0], d.runs[0]);
    const auto& w0 = b.workers[0].time;
    CHECK(get(w0, time_category::untraced) == 0);
    CHECK(get(w0, time_category::scheduler) == 4);   // [10,12) + [60,62)
    CHECK(get(w0, time_category::work) == 27 + 38);
    CHECK(w0.sum() == 100);
}

TEST_CASE("breakdown without line tracks: no stall, idle stays idle", "[viewer][breakdown]") {
    tm::trace_model m = make_model(1);
    m.runs[0].lines.clear();
    m.runs[0].tracks = {0, 1, 2, 4};
    m.tracks[3].run = tm::no_index;
    document d;
    d.add(prepare_file(std::move(m), "nolines.pftrace"));
    const run_breakdown b = compute_breakdown(*d.files[0], d.runs[0]);
    CHECK_FALSE(b.stall_derived);
    CHECK(get(b.total.time, time_category::stall) == 0);
    CHECK(get(b.total.time, time_category::idle) == 87);
    CHECK(b.total.time.sum() == 200);
}

TEST_CASE("compare table of hand-built runs from two files", "[viewer][compare]") {
    document d;
    d.add(prepare_file(make_model(1), "a.pftrace"));
    d.add(prepare_file(make_model(2), "b.pftrace"));
    const std::vector<compare_row> rows = compute_compare(d);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].name.find("a.pftrace") != std::string::npos);
    CHECK(rows[1].name.find("b.pftrace") != std::string::npos);
    CHECK(rows[0].makespan == 100);
    CHECK(rows[1].makespan == 200);
    CHECK(rows[0].vs_first == Approx(1.0));
    CHECK(rows[1].vs_first == Approx(0.5));
    for (const auto& r : rows) {
        CHECK(r.workers == 2);
        CHECK(r.K == 2);
        CHECK(r.steals == 2);
        CHECK(r.suspensions == 1);
        REQUIRE(r.peak_live);
        CHECK(*r.peak_live == 2);
        CHECK(r.nodes == 5);        // no DAG: node slices
        CHECK_FALSE(r.serial_ns);   // not in the metadata yet
        CHECK_FALSE(r.speedup);
        CHECK(r.work_fraction == Approx(0.245));
        CHECK(r.threads == 2);
        CHECK(work_note(r).empty());
    }
}

TEST_CASE("breakdown and compare of the example traces", "[viewer][breakdown][compare]") {
    const fs::path dir = fs::path(PIPESCOPE_SOURCE_DIR) / "traces";
    document d;
    d.add(load_file(dir / "pipe-fib-256-piper.pftrace"));
    d.add(load_file(dir / "pipe-fib-256-piper-K2.pftrace"));
    REQUIRE(d.runs.size() == 2);
    for (const auto& rr : d.runs) {
        const run_breakdown b = compute_breakdown(*d.files[rr.file], rr);
        INFO(rr.title);
        CHECK(b.stall_derived);
        REQUIRE(b.workers.size() == 2);
        for (const auto& w : b.workers) {
            CHECK(w.time.span == b.span);
            CHECK(w.time.sum() == w.time.span);
        }
        CHECK(b.total.time.sum() == 2 * b.span);
        CHECK(b.total.time[time_category::work] > 0);
        CHECK(b.total.time[time_category::scheduler] > 0);
        CHECK(b.total.time[time_category::stealing] > 0);
        CHECK(b.total.steals > 0);
    }
    const auto rows = compute_compare(d);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].K == 8);
    CHECK(rows[1].K == 2);
    for (const auto& r : rows) {
        INFO(r.name);
        CHECK(r.makespan > 0);
        CHECK(r.steals > 0);
        CHECK(r.nodes > 1000);
        REQUIRE(r.peak_live);
        CHECK(*r.peak_live >= 1);
        CHECK(*r.peak_live <= static_cast<double>(r.K) + 1);
    }
    CHECK(rows[1].suspensions > 0);
}

// Issue 37, defect 5: six threads on one core, busy 147 % of the core's time in nodes — shown as
// "work 147.0 %" before. Work is now the share of the threads' time, and a note says why.
TEST_CASE("compare table: more threads than cores, work as the threads' share", "[viewer][compare]") {
    tm::trace_model m = make_model(1);
    m.runs[0].declared_workers = 1;
    for (std::uint32_t copy = 1; copy < 3; ++copy)
        for (std::uint32_t w : {1u, 2u}) {
            tm::track t = m.tracks[w];
            t.worker = static_cast<std::uint32_t>(m.runs[0].workers.size());
            t.name = "worker " + std::to_string(t.worker);
            m.runs[0].workers.push_back(static_cast<std::uint32_t>(m.tracks.size()));
            m.runs[0].tracks.push_back(static_cast<std::uint32_t>(m.tracks.size()));
            m.tracks.push_back(t);
        }
    document d;
    d.add(prepare_file(std::move(m), "six.pftrace"));
    const auto rows = compute_compare(d);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].workers == 1);
    CHECK(rows[0].threads == 6);
    CHECK(rows[0].work_fraction == Approx(147.0 / 600));   // 3 x (27 + 22) of 6 x 100
    CHECK(rows[0].busy_threads == Approx(1.47));
    CHECK(work_note(rows[0]) == "6 threads on 1 core: work is the share of the threads' time in nodes; on average 1.47 of "
                                "them were in a node at once, more than the 1 core: a thread in a node also waited for a "
                                "core");
}

TEST_CASE("compare table: a bind-to-stage run's P is its workers, not its threads' tracks", "[viewer][compare]") {
    // Recorded by `pipescope scale` on 2 virtual cores: the pool's 2 workers and ferret's stage
    // threads (c = P = 2 per parallel stage: 4 x 2 + 2), 12 tracks.
    const fs::path file = fs::path(PIPESCOPE_SOURCE_DIR) / "tests/data/scale-ferret-tiny/ferret-bind-to-stage-P2.pftrace";
    document d;
    d.add(load_file(file));
    REQUIRE(d.runs.size() == 1);
    CHECK(d.runs[0].workers.size() == 12);
    const auto rows = compute_compare(d);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].workers == 2);
    // Work is the share of the 12 threads' time (issue 37, defect 5: over the 2 cores it read as more
    // than 100 %), and a note says so, with how many threads were in a node at once.
    const run_breakdown b = compute_breakdown(*d.files[0], d.runs[0]);
    const double work = static_cast<double>(b.total.time[time_category::work]);
    CHECK(rows[0].threads == 12);
    CHECK(rows[0].oversubscribed());
    CHECK(rows[0].work_fraction == Approx(work / (12.0 * static_cast<double>(rows[0].makespan))));
    CHECK(rows[0].work_fraction <= 1);
    CHECK(rows[0].busy_threads == Approx(work / static_cast<double>(rows[0].makespan)));
    INFO(rows[0].busy_threads);
    CHECK(rows[0].busy_threads < 2);   // on 2 virtual cores: never more threads in a node than cores
    CHECK(work_note(rows[0]) == fmt::format("12 threads on 2 cores: work is the share of the threads' time in nodes; on "
                                            "average {:.2f} of them were in a node at once, of the 2 cores",
                                            rows[0].busy_threads));
}
