// Stage kinds as the program used them (pipescope issue 33, item 1): a pipe_while recorded by a
// trace_session with no declared stages has its run summary say how each stage was entered
// (stage_wait: serial; stage: parallel; both: mixed), and the analysis takes the kind from there,
// so a stage_wait merge is serial (c = 1) and bounds λmax. A trace without that record (older
// versions) gets the kind the DAG shows.
#include "support/pipescope_run_builder.hpp"
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

std::filesystem::path temp_trace(const std::string& name) {
    return std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".pftrace");
}

// Word count's shape: stage 0 reads (nothing to do), stage 1 counts (parallel, `stage`), stage 2
// merges (`stage_wait`, much longer than stage 0); stage 3 waits in odd iterations only.
tr::trace_model record_word_count_shape(tr::trace_detail detail) {
    const auto path = temp_trace("stage-kinds");
    std::filesystem::remove(path);
    scheduler sched({2});
    {
        trace_session rec(sched, path, {.name = "kinds", .detail = detail});
        int next = 0;
        pipe_while(
            sched, [&] { return next < 24; },
            [&](iteration& it) -> pipe_task {
                const int i = next++;
                co_await it.stage(1);
                spin_for(std::chrono::microseconds(300));
                co_await it.stage_wait(2);
                spin_for(std::chrono::microseconds(1000));
                if (i % 2) co_await it.stage_wait(3);
                else co_await it.stage(3);
            },
            {.name = "word count shape", .stage_names = {"read", "count", "merge", "tail"}});
    }
    tr::trace_model m = tr::load_trace_file(path);
    std::filesystem::remove(path);
    return m;
}

const an::stage_stats* stage(const an::run_report& r, std::uint64_t j) {
    for (const auto& s : r.stats.stages)
        if (s.index == j) return &s;
    return nullptr;
}

const an::stage_rate* rate(const an::run_report& r, std::uint64_t j) {
    for (const auto& s : r.queueing.stages)
        if (s.index == j) return &s;
    return nullptr;
}

}   // namespace

TEST_CASE("stage kinds: the run summary records how each stage was entered", "[stage_kinds][trace_session]") {
    const auto detail = GENERATE(tr::trace_detail::nodes, tr::trace_detail::folded);
    CAPTURE(tr::to_string(detail));
    const tr::trace_model m = record_word_count_shape(detail);
    REQUIRE(m.runs.size() == 1);
    const tr::run& run = m.runs[0];
    CHECK(tr::recorded_stage_kind(run, 0) == "serial");
    CHECK(tr::recorded_stage_kind(run, 1) == "parallel");
    CHECK(tr::recorded_stage_kind(run, 2) == "serial");
    CHECK(tr::recorded_stage_kind(run, 3) == "mixed");
    CHECK(tr::recorded_stage_kind(run, 4).empty());
    // The metadata written when the loop began could not know: it still says "on the fly".
    REQUIRE(run.stages.size() == 4);
    CHECK(run.stages[2].kind == "on the fly");

    const an::run_report r = an::analyze(an::scope_of(m, 0));
    const an::stage_stats* merge = stage(r, 2);
    REQUIRE(merge);
    CHECK(merge->serial);
    CHECK(merge->kind == "serial");
    CHECK(merge->kind_source == "recorded");
    const an::stage_stats* count = stage(r, 1);
    REQUIRE(count);
    CHECK_FALSE(count->serial);
    CHECK(count->kind_source == "recorded");
    const an::stage_stats* tail = stage(r, 3);
    REQUIRE(tail);
    CHECK_FALSE(tail->serial);   // some iterations pass it without waiting
    CHECK(tail->kind == "mixed");

    REQUIRE(r.queueing.available);
    const an::stage_rate* q = rate(r, 2);
    REQUIRE(q);
    CHECK(q->serial);
    CHECK(q->c_element == 1.0);
    CHECK(rate(r, 1)->c_element == 2.0);
    CHECK(r.queueing.critical_serial_stage == 2);   // the merge, not stage 0, limits the rate
    CHECK(an::to_json(r)["stages"][2]["kind_source"] == "recorded");
}

TEST_CASE("stage kinds: a trace without them gets the kind its DAG shows", "[stage_kinds]") {
    // An older trace_session's run: stages 1 and 2 "on the fly", no stage kinds in its summary.
    // Stage 2's nodes wait on their cross edge and follow one another; stage 1's overlap.
    pipescope::test::trace_builder b;
    pipescope::test::pipescope_run_builder rb{b, std::uint64_t{1} << 32, 1000, 3};
    rb.describe("old · piper · P=3",
                R"({"workload":"old","policy":"piper","workers":3,"program":{"kind":"pipeline","K":8,"stages":[)"
                R"({"index":0,"name":"stage 0 · read","kind":"serial"},)"
                R"({"index":1,"name":"stage 1 · count","kind":"on the fly"},)"
                R"({"index":2,"name":"stage 2 · merge","kind":"on the fly"}]}})");
    constexpr std::uint64_t us = 1000;
    for (std::uint64_t i = 0; i < 8; ++i) {
        rb.node(0, i, 0, i * us, (i + 1) * us);
        // Workers 1 and 2 take turns: 1.8 us each, so the nodes of i and i+1 overlap.
        rb.node(1 + static_cast<unsigned>(i % 2), i, 1, (i + 1) * us, (i + 1) * us + 1800);
        rb.node(0, i, 2, (10 * i + 10) * us, (10 * i + 20) * us, true);
    }
    rb.end_marker(100 * us);
    const tr::trace_model m = tr::load_trace(b.view());
    REQUIRE(m.runs.size() == 1);
    CHECK(tr::recorded_stage_kind(m.runs[0], 2).empty());
    CHECK(tr::inferred_stage_kind(m.runs[0], 2) == "serial");
    CHECK(tr::inferred_stage_kind(m.runs[0], 1) == "parallel");

    const an::run_report r = an::analyze(an::scope_of(m, 0));
    REQUIRE(stage(r, 2));
    CHECK(stage(r, 2)->serial);
    CHECK(stage(r, 2)->kind_source == "inferred");
    CHECK(stage(r, 2)->kind.empty());
    CHECK_FALSE(stage(r, 1)->serial);
    CHECK(stage(r, 0)->kind_source == "declared");
    REQUIRE(rate(r, 2));
    CHECK(rate(r, 2)->c_element == 1.0);
    CHECK(r.queueing.critical_serial_stage == 2);
}
