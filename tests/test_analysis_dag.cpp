// analysis/dag_bounds.hpp: work, span, parallelism and critical path of small pipeline DAGs whose
// answers are computed by hand, with and without throttling edges; and the same through a trace
// written and read back (the trace model builds the DAG).
#include <pipescope/analysis/dag_bounds.hpp>
#include <pipescope/analysis/report.hpp>
#include <pipescope/trace/trace_model.hpp>

#include "support/pipescope_run_builder.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

namespace an = pipescope::analysis;
namespace tr = pipescope::trace;

namespace {

// An SPS pipeline (seed 001 Fig. 1) of 3 iterations: w(i,0) = 1, w(i,1) = 10, 10, 12, w(i,2) = 1;
// stage 2 waits (cross edges), stage 0 is serial (the implicit control edges); throttle K.
tr::pipeline_dag sps(std::uint64_t K) {
    tr::pipeline_dag d;
    d.K = K;
    const std::uint64_t w1[3] = {10, 10, 12};
    std::uint64_t t = 0;
    for (std::uint64_t i = 0; i < 3; ++i) {
        for (std::uint64_t j = 0; j < 3; ++j) {
            tr::dag_node n;
            n.iteration = i;
            n.stage = j;
            n.start = t;
            n.end = t + (j == 1 ? w1[i] : 1);
            n.waited = j == 2 && i > 0;
            t = n.end + 100;   // times far apart: only the durations matter
            d.nodes.push_back(n);
        }
    }
    d.iterations = 3;
    auto idx = [](std::uint64_t i, std::uint64_t j) { return static_cast<std::uint32_t>(3 * i + j); };
    for (std::uint64_t i = 0; i < 3; ++i) {
        d.edges.push_back({idx(i, 0), idx(i, 1), tr::dag_edge_kind::stage});
        d.edges.push_back({idx(i, 1), idx(i, 2), tr::dag_edge_kind::stage});
        if (i > 0) d.edges.push_back({idx(i - 1, 2), idx(i, 2), tr::dag_edge_kind::cross});
        if (K && i >= K) d.edges.push_back({idx(i - K, 2), idx(i, 0), tr::dag_edge_kind::throttle});
    }
    return d;
}

using step = std::tuple<std::uint64_t, std::uint64_t, an::path_edge>;
std::vector<step> steps(const an::span_result& s) {
    std::vector<step> out;
    for (const auto& n : s.critical_path) out.emplace_back(n.iteration, n.stage, n.via);
    return out;
}

}   // namespace

TEST_CASE("dag bounds: SPS pipeline without throttling: span n + 1 + r along stage 0", "[analysis][dag]") {
    const tr::pipeline_dag d = sps(0);
    const an::span_result s = an::longest_path(d, true);
    // (0,0) (1,0) (2,0) by the control edges, then down iteration 2: 1 + 1 + 1 + 12 + 1.
    CHECK(s.span == 16);
    const std::vector<step> expected = {{0, 0, an::path_edge::start},
                                        {1, 0, an::path_edge::control},
                                        {2, 0, an::path_edge::control},
                                        {2, 1, an::path_edge::stage},
                                        {2, 2, an::path_edge::stage}};
    CHECK(steps(s) == expected);
    CHECK(s.throttle_edges_on_path == 0);
}

TEST_CASE("dag bounds: SPS pipeline with K = 2: the throttling edge lengthens the span", "[analysis][dag]") {
    const tr::pipeline_dag d = sps(2);
    const an::span_result with = an::longest_path(d, true);
    const an::span_result without = an::longest_path(d, false);
    // (0,0) (0,1) (0,2) -throttle-> (2,0) (2,1) (2,2): 1 + 10 + 1 + 1 + 12 + 1.
    CHECK(with.span == 26);
    CHECK(with.throttle_edges_on_path == 1);
    const std::vector<step> expected = {{0, 0, an::path_edge::start}, {0, 1, an::path_edge::stage},
                                        {0, 2, an::path_edge::stage}, {2, 0, an::path_edge::throttle},
                                        {2, 1, an::path_edge::stage}, {2, 2, an::path_edge::stage}};
    CHECK(steps(with) == expected);
    CHECK(without.span == 16);
}

TEST_CASE("dag bounds: K = 1 serializes the iterations: span = work", "[analysis][dag]") {
    const tr::pipeline_dag d = sps(1);
    std::uint64_t work = 0;
    for (const auto& n : d.nodes) work += n.end - n.start;
    CHECK(work == 38);
    CHECK(an::longest_path(d, true).span == 38);
    CHECK(an::longest_path(d, true).critical_path.size() == 9);
    CHECK(an::longest_path(d, false).span == 16);
}

TEST_CASE("dag bounds: a parallel stage only: span is one iteration plus the stage-0 chain", "[analysis][dag]") {
    // 4 iterations, stage 0 of 2 ns, stage 1 of 5, 1, 7, 3 ns; no waits.
    tr::pipeline_dag d;
    const std::uint64_t w1[4] = {5, 1, 7, 3};
    for (std::uint64_t i = 0; i < 4; ++i) {
        d.nodes.push_back(
            {.iteration = i, .stage = 0, .last_stage = 0, .start = 100 * i, .end = 100 * i + 2, .worker = 0, .slice = {}});
        d.nodes.push_back({.iteration = i,
                           .stage = 1,
                           .last_stage = 1,
                           .start = 100 * i + 10,
                           .end = 100 * i + 10 + w1[i],
                           .worker = 0,
                           .slice = {}});
        d.edges.push_back(
            {static_cast<std::uint32_t>(2 * i), static_cast<std::uint32_t>(2 * i + 1), tr::dag_edge_kind::stage});
    }
    // Longest: (0,0) (1,0) (2,0) then (2,1): 2 + 2 + 2 + 7 = 13 (via iteration 3: 8 + 3 = 11).
    const auto s = an::longest_path(d, true);
    CHECK(s.span == 13);
    REQUIRE(s.critical_path.size() == 4);
    CHECK(s.critical_path.back().iteration == 2);
    CHECK(s.critical_path.back().stage == 1);
}

TEST_CASE("dag bounds: through a trace: work, span, parallelism, speedup bound", "[analysis][dag]") {
    // The SPS example above with K = 2, written as a pipescope run and read back.
    pipescope::test::trace_builder b;
    pipescope::test::pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe("sps · piper · P=2",
               R"({"workload":"sps","policy":"piper","workers":2,"program":{"kind":"pipeline","K":2,"stages":[)"
               R"({"index":0,"name":"stage 0 · in","kind":"serial"},{"index":1,"name":"stage 1 · work","kind":"parallel"},)"
               R"({"index":2,"name":"stage 2 · out","kind":"stage_wait"}]}})");
    // iteration 0 on worker 0, 1 on worker 1, 2 on worker 0 (after 0 retired: throttled)
    r.node(0, 0, 0, 0, 1);
    r.node(0, 0, 1, 1, 11);
    r.node(0, 0, 2, 11, 12);
    r.node(1, 1, 0, 1, 2);
    r.node(1, 1, 1, 2, 12);
    r.node(1, 1, 2, 12, 13, true);
    r.node(0, 2, 0, 12, 13);
    r.node(0, 2, 1, 13, 25);
    r.node(0, 2, 2, 25, 26, true);
    r.end_marker(26);
    const tr::trace_model m = tr::load_trace(b.view());
    REQUIRE(m.runs.size() == 1);
    const auto scope = an::scope_of(m, 0);
    const an::dag_bounds d = an::compute_dag_bounds(scope, 2, std::nullopt);
    REQUIRE(d.available);
    CHECK(d.work == 38);
    CHECK(d.with_throttle.span == 26);
    CHECK(d.without_throttle.span == 16);
    CHECK(d.parallelism == Approx(38.0 / 26));
    CHECK(d.parallelism_unthrottled == Approx(38.0 / 16));
    CHECK(d.speedup_bound == Approx(38.0 / 26));
    CHECK(d.makespan == 26);
    CHECK(d.observed_speedup == Approx(38.0 / 26));
    CHECK_FALSE(d.observed_from_reference);
    const an::dag_bounds with_ref = an::compute_dag_bounds(scope, 2, 52e-9);   // a 52 ns serial reference
    CHECK(with_ref.observed_from_reference);
    CHECK(with_ref.observed_speedup == Approx(2.0));

    // The full report names the throttle (span ratio 26/16 = 1.6 ≥ 1.2, parallelism 1.46 < 2P).
    const an::run_report rep = an::analyze(scope);
    bool throttle = false;
    for (const auto& v : rep.verdicts)
        if (v.rule == "throttle_limited") {
            throttle = true;
            CHECK(v.text.find("K = 2") != std::string::npos);
            CHECK(v.text.find("1.6") != std::string::npos);
            CHECK(v.where.iteration == 2);   // the node the throttling edge enters
            CHECK(v.where.stage == 0);
        }
    CHECK(throttle);
}
