// Advice phrased for how the run was recorded (pipescope issue 33, item 4): the same folded trace
// tells a trace_session user to set trace_session_options::detail, a PIPESCOPE_TRACE user
// PIPESCOPE_TRACE_DETAIL=nodes, and a `pipescope run` user (or an older trace, which says nothing)
// --trace-detail nodes. A folded trace of coarse nodes says how much time its per-stage totals may
// misplace and that folding only blurred it (docs/analysis.md, "Folded traces").
#include "support/spin.hpp"

#include <pipescope/analysis/report.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace pipescope;
using pipescope::testing::spin_for;
namespace an = pipescope::analysis;
namespace tr = pipescope::trace;

namespace {

// Three stages per iteration on one worker, recorded folded: with one worker nothing is stolen, so
// each iteration's stages 0-2 fold into one slice, 1 µs + 200 µs + 5 µs of work (stage 1 spends it).
an::run_report record_folded(const std::string& recorded_by) {
    const auto path = std::filesystem::temp_directory_path() / ("advice-" + std::to_string(::getpid()) + ".pftrace");
    std::filesystem::remove(path);
    scheduler sched({1});
    {
        trace_session_options o{.name = "advice", .detail = tr::trace_detail::folded};
        o.recorded_by = recorded_by;
        trace_session rec(sched, path, o);
        int next = 0;
        pipe_while(
            sched, [&] { return next < 40; },
            [&](iteration& it) -> pipe_task {
                ++next;
                spin_for(std::chrono::microseconds(1));
                co_await it.stage(1);
                spin_for(std::chrono::microseconds(200));
                co_await it.stage(2);
                spin_for(std::chrono::microseconds(5));
            },
            {.name = "folded", .stage_names = {"read", "work", "write"}});
    }
    const tr::trace_model m = tr::load_trace_file(path.string());
    std::filesystem::remove(path);
    std::vector<an::run_report> reports = an::analyze_all(m);
    REQUIRE(reports.size() == 1);
    return std::move(reports.front());
}

const an::verdict* find_rule(const an::run_report& r, const std::string& rule) {
    for (const an::verdict& v : r.verdicts)
        if (v.rule == rule) return &v;
    return nullptr;
}

}   // namespace

TEST_CASE("advice: a folded trace's suggestion names the setting of how it was recorded", "[advice][folded]") {
    const std::pair<const char*, const char*> cases[] = {
        {"trace_session", "record again with trace_session_options::detail = pipescope::trace::trace_detail::nodes"},
        {"PIPESCOPE_TRACE", "record again with PIPESCOPE_TRACE_DETAIL=nodes"},
        {"pipescope run", "record again with --trace-detail nodes"},
        {"", "record again with --trace-detail nodes"},   // an older trace: its tool's options
    };
    for (const auto& [by, expected] : cases) {
        CAPTURE(by);
        const an::run_report r = record_folded(by);
        CHECK(r.meta.recorded_by == by);
        const an::verdict* v = find_rule(r, "folded_trace");
        REQUIRE(v);
        CHECK_THAT(v->suggestion, Catch::Matchers::StartsWith(expected));
    }
}

TEST_CASE("advice: a folded trace says how much its per-stage times may misplace", "[advice][folded]") {
    const an::run_report r = record_folded("trace_session");
    // Every iteration is one folded slice of three nodes: two thirds of each may sit in the wrong stage.
    REQUIRE(r.stats.folded_runs == 40);
    CHECK(r.stats.folded_misplaceable_ns == Approx(r.stats.folded_ns * 2.0 / 3.0).epsilon(1e-6));
    const an::verdict* v = find_rule(r, "folded_trace");
    REQUIRE(v);
    CHECK_THAT(v->text, Catch::Matchers::Contains("may be counted in another stage than the one that spent it"));
    // 70 µs a node on average, far above the 2 µs below which folding pays.
    CHECK_THAT(v->text, Catch::Matchers::Contains("far above the 2.00 µs below which folding saves recording cost"));
}
