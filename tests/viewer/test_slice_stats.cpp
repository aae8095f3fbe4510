// The statistics view's model (viewer/model/slice_stats.hpp): per slice name and per stage over a run
// and over an area, checked exactly against the trace model counted another way (every slice read
// directly into a map and analysis::summarize, and the area selection's own node statistics).
#include <model/slice_stats.hpp>

#include <pipescope/analysis/stages.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

using namespace pipescope::viewer;
namespace fs = std::filesystem;
namespace an = pipescope::analysis;
namespace pt = pipescope::trace;

namespace {

document k2_document() {
    document d;
    d.add(load_file(fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace"));
    return d;
}

std::vector<std::uint32_t> run_slice_tracks(const run_ref& r) {
    std::vector<std::uint32_t> v(r.workers);
    v.insert(v.end(), r.lines.begin(), r.lines.end());
    v.insert(v.end(), r.others.begin(), r.others.end());
    return v;
}

// The expected rows: every slice of `tracks` passing `keep`, by name, summarized by the analysis.
std::map<std::string, std::vector<std::uint64_t>> by_name(const pt::trace_model& m, const std::vector<std::uint32_t>& tracks,
                                                          std::uint64_t lo, std::uint64_t hi) {
    std::map<std::string, std::vector<std::uint64_t>> out;
    for (auto ti : tracks)
        for (const pt::slice& s : m.tracks[ti].slices)
            if (s.begin < hi && (s.end > lo || (s.begin == s.end && s.begin >= lo)))
                out[m.str(s.name)].push_back(s.duration());
    return out;
}

void check_rows(const stats_table& t, const std::map<std::string, std::vector<std::uint64_t>>& expect) {
    REQUIRE(t.rows.size() == expect.size());
    std::size_t i = 0, slices = 0;
    for (const auto& [name, d] : expect) {   // both in byte order of the names
        const stats_row& r = t.rows[i];
        INFO(name);
        CHECK(r.name == name);
        const an::service_stats s = an::summarize(d);
        CHECK(r.count == s.count);
        CHECK(r.total == s.total);
        CHECK(r.mean == s.mean);
        CHECK(r.median == s.p50);
        CHECK(r.p95 == s.p95);
        CHECK(r.max == s.max);
        CHECK(r.min == *std::min_element(d.begin(), d.end()));
        CHECK(t.durations[i].size() == d.size());
        slices += d.size();
        ++i;
    }
    CHECK(t.slices == slices);
}

}   // namespace

TEST_CASE("slice statistics by name over the K = 2 example's run", "[viewer][stats]") {
    const document d = k2_document();
    REQUIRE(d.runs.size() == 1);
    const pt::trace_model& m = d.files[0]->model;
    const auto tracks = run_slice_tracks(d.runs[0]);
    const auto expect = by_name(m, tracks, 0, ~std::uint64_t{0});
    const stats_table t = compute_slice_stats(d, 0, stats_group::name, nullptr, false);
    check_rows(t, expect);
    CHECK(t.rows.size() >= 3);   // idle, the stages, line states
    std::size_t all = 0;
    for (auto ti : tracks) all += m.tracks[ti].slices.size();
    CHECK(t.slices == all);   // every slice of the run in exactly one row
}

TEST_CASE("slice statistics by stage agree with the area selection's nodes", "[viewer][stats]") {
    const document d = k2_document();
    const run_ref& run = d.runs[0];
    area_selection whole;   // the whole run over all its tracks: the area panel's per-stage nodes
    whole.t0 = -1;
    whole.t1 = static_cast<double>(run.end - run.start) + 1;
    for (auto ti : run_slice_tracks(run)) whole.tracks.push_back({0, ti});
    std::sort(whole.tracks.begin(), whole.tracks.end());
    const area_stats ref = compute_area_stats(d, whole, true);
    for (const area_selection* area : std::initializer_list<const area_selection*>{nullptr, &whole}) {
        const stats_table t = compute_slice_stats(d, 0, stats_group::stage, area, true);
        REQUIRE(t.rows.size() == ref.stages.size());
        for (std::size_t i = 0; i < t.rows.size(); ++i) {
            const stats_row& r = t.rows[i];
            const an::service_stats& n = ref.stages[i].nodes;
            INFO(r.name);
            CHECK(r.stage == ref.stages[i].stage);
            CHECK(r.name == "stage " + std::to_string(r.stage));
            CHECK(r.count == n.count);
            CHECK(r.total == n.total);
            CHECK(r.median == n.p50);
            CHECK(r.p95 == n.p95);
            CHECK(r.max == n.max);
        }
        CHECK(t.slices == ref.nodes.count);
    }
}

TEST_CASE("slice statistics restricted to an area: overlapping slices, whole durations", "[viewer][stats]") {
    const document d = k2_document();
    const pt::trace_model& m = d.files[0]->model;
    const run_ref& run = d.runs[0];
    REQUIRE(run.workers.size() >= 2);
    const double len = static_cast<double>(run.end - run.start);
    area_selection a;
    a.t0 = std::floor(len * 0.3);
    a.t1 = std::floor(len * 0.6);
    a.tracks = {{0, run.workers[0]}, {0, run.workers[1]}};
    std::sort(a.tracks.begin(), a.tracks.end());
    // Aligned: display time is since the run's start.
    const std::uint64_t lo = run.start + static_cast<std::uint64_t>(a.t0), hi = run.start + static_cast<std::uint64_t>(a.t1);
    const auto expect = by_name(m, {run.workers[0], run.workers[1]}, lo, hi);
    const stats_table t = compute_slice_stats(d, 0, stats_group::name, &a, true);
    check_rows(t, expect);
    CHECK(t.slices > 20);
    // Whole durations: some slice is longer than its part inside the area (it crosses an edge).
    const stats_table whole = compute_slice_stats(d, 0, stats_group::name, nullptr, true);
    CHECK(t.slices < whole.slices);
    // By stage, the same nodes as the area panel's.
    const area_stats ref = compute_area_stats(d, a, true);
    const stats_table st = compute_slice_stats(d, 0, stats_group::stage, &a, true);
    REQUIRE(st.rows.size() == ref.stages.size());
    for (std::size_t i = 0; i < st.rows.size(); ++i) {
        CHECK(st.rows[i].count == ref.stages[i].nodes.count);
        CHECK(st.rows[i].total == ref.stages[i].nodes.total);
        CHECK(st.rows[i].p95 == ref.stages[i].nodes.p95);
    }
    // An area over tracks of no run counts nothing.
    area_selection none = a;
    none.tracks = {{0, 999999}};
    CHECK(compute_slice_stats(d, 0, stats_group::name, &none, true).rows.empty());
}

TEST_CASE("slice statistics: two runs joined and sorted with ratios, the histogram, the cache", "[viewer][stats]") {
    document d = k2_document();
    d.add(load_file(fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace"));
    REQUIRE(d.runs.size() == 2);
    const stats_table a = compute_slice_stats(d, 0, stats_group::name, nullptr, false);
    const stats_table b = compute_slice_stats(d, 1, stats_group::name, nullptr, false);
    stats_sort by_count{false, stats_measure::count, stats_side::a, true};
    const auto rows = join_and_sort(a, &b, by_count);
    REQUIRE(rows.size() == a.rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        REQUIRE(rows[i].a);
        REQUIRE(rows[i].b);
        CHECK(stats_ratio(rows[i], stats_measure::total) == 1.0);   // the same file twice
        if (i) CHECK(rows[i - 1].a->count >= rows[i].a->count);
    }
    // A name only in B sorts last, whatever the direction; its ratio is missing.
    stats_table b2 = b;
    stats_row only_b;
    only_b.name = "zzz only in B";
    only_b.count = 5, only_b.total = 50, only_b.min = only_b.max = only_b.median = only_b.p95 = 10, only_b.mean = 10;
    b2.rows.push_back(only_b);
    for (bool desc : {true, false}) {
        const auto r2 = join_and_sort(a, &b2, {false, stats_measure::total, stats_side::a, desc});
        CHECK(r2.back().name == "zzz only in B");
        CHECK(!r2.back().a);
        CHECK(!stats_ratio(r2.back(), stats_measure::total));
    }
    const auto by_name_desc = join_and_sort(a, nullptr, {true, stats_measure::count, stats_side::a, true});
    CHECK(by_name_desc.front().name > by_name_desc.back().name);

    // The histogram holds every duration, in log bins whose edges grow; a range over all of them counts all.
    const std::size_t big =
        std::max_element(a.rows.begin(), a.rows.end(), [](auto& x, auto& y) { return x.count < y.count; }) - a.rows.begin();
    const stats_histogram h = make_histogram(a.durations[big], 64);
    std::uint64_t n = 0;
    for (auto c : h.bins) n += c;
    CHECK(n == a.rows[big].count);
    CHECK(std::abs(h.edge(1) / h.edge(0) - h.edge(64) / h.edge(63)) < 1e-9);
    const range_count all = count_in_range(a.durations[big], 0, 1e30);
    CHECK(all.count == a.rows[big].count);
    CHECK(all.total == a.rows[big].total);

    // The cache computes once per input change, not per call.
    slice_stats_cache c;
    c.run_b = 1;
    std::optional<area_selection> area;
    CHECK(c.update(d, area, false));
    CHECK(!c.update(d, area, false));
    CHECK(c.computations == 1);
    area = area_selection{0, 1e6, {{0, d.runs[0].workers[0]}}};
    CHECK(!c.update(d, area, false));   // scope "run": an area changes nothing
    c.scope = stats_scope::area;
    CHECK(c.update(d, area, false));
    CHECK(c.computations == 2);
    c.sort.descending = false;
    CHECK(!c.current(d, area, false));
    c.update(d, area, false);
    CHECK(c.computations == 2);   // a new order, no new computation
    CHECK(c.current(d, area, false));
}
