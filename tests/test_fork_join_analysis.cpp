// Fork-join runs (docs/analysis.md, "Fork-join runs"): a recorded task_group fib is a "tasks" run
// whose report names its tasks, their work, the span of the spawn tree and its parallelism, and
// gives no pipeline verdict (no throttle, no "raise K").
#include "support/pipescope_run_builder.hpp"

#include <pipescope/analysis/report.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>

using namespace pipescope;
namespace an = pipescope::analysis;
namespace tr = pipescope::trace;

namespace {

int fib(scheduler& s, int n) {
    if (n < 2) return n;
    int a = 0;
    task_group g(s);
    g.spawn([&] { a = fib(s, n - 1); });
    const int b = fib(s, n - 2);
    g.sync();
    return a + b;
}

// Tasks fib(n) spawns: one per call with n >= 2, S(n) = 1 + S(n-1) + S(n-2) = fib(n+1) - 1.
int spawns(int n) { return n < 2 ? 0 : 1 + spawns(n - 1) + spawns(n - 2); }

tr::trace_model record_fib(int n, int& result) {
    const auto path = std::filesystem::temp_directory_path() / ("fork-join-" + std::to_string(::getpid()) + ".pftrace");
    std::filesystem::remove(path);
    scheduler sched({2});
    {
        trace_session rec(sched, path, {.name = "fib tasks"});
        result = fib(sched, n);
    }
    tr::trace_model m = tr::load_trace_file(path);
    std::filesystem::remove(path);
    return m;
}

}   // namespace

TEST_CASE("fork-join analysis: a task_group fib reports its tasks, work, span and parallelism", "[fork_join][analysis]") {
    constexpr int n = 15;
    int result = 0;
    const tr::trace_model m = record_fib(n, result);
    REQUIRE(result == 610);
    const auto reports = an::analyze_all(m);
    REQUIRE(reports.size() == 1);
    const an::run_report& r = reports[0];
    REQUIRE(r.meta.program_kind == "tasks");
    REQUIRE(r.stats.events_lost == 0);

    const an::task_stats& t = r.tasks;
    CHECK(t.tasks == static_cast<std::uint64_t>(spawns(n)));   // 986
    // The calling thread is no task: what it spawns on its inline chain fib(15), fib(13), ... fib(3) are roots.
    CHECK(t.roots == 7);
    CHECK(t.spawn_tree);
    CHECK(t.depth == n - 1);   // fib(14) spawns fib(13) ... spawns fib(1)
    CHECK(t.work_ns > 0);
    CHECK(t.span_ns > 0);
    CHECK(t.span_ns <= t.work_ns);
    CHECK(t.parallelism() == Approx(static_cast<double>(t.work_ns) / static_cast<double>(t.span_ns)));
    CHECK(t.own_p50_ns <= t.own_p95_ns);
    CHECK(t.own_p95_ns <= t.own_max_ns);
    CHECK(t.own_mean_ns * static_cast<double>(t.tasks) == Approx(static_cast<double>(t.work_ns)));

    // Fork-join verdicts only: none of the pipeline's.
    for (const auto& v : r.verdicts) {
        INFO(v.rule << ": " << v.text << " -> " << v.suggestion);
        CHECK((v.rule == "task_parallelism" || v.rule == "fine_tasks" || v.rule == "no_single_limit" ||
               v.rule == "busy_machine" || v.rule == "events_lost"));
        CHECK(v.suggestion.find("raise K") == std::string::npos);
        CHECK(v.text.find("throttl") == std::string::npos);
    }

    const std::string text = an::to_text(r);
    INFO(text);
    CHECK(text.find("986 tasks") != std::string::npos);
    CHECK(text.find("work T1") != std::string::npos);
    CHECK(text.find("parallelism T1/T") != std::string::npos);
    CHECK(text.find("peak live") == std::string::npos);
    CHECK(text.find("raise K") == std::string::npos);

    const auto j = an::to_json(r);
    CHECK(j["tasks"]["tasks"] == spawns(n));
    CHECK(j["tasks"]["work_ns"] == t.work_ns);
    CHECK(j["tasks"]["span_ns"] == t.span_ns);
}

TEST_CASE("fork-join analysis: span of a hand-built spawn tree", "[fork_join][analysis]") {
    // Task 1 (worker 0, 0..100) spawns task 2 at 10 and task 3 at 20; it waits idle 30..55 and
    // runs task 3 itself 60..80 while it syncs; task 2 runs on worker 1, 15..55.
    pipescope::test::trace_builder b;
    pipescope::test::pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe("tasks · P=2", R"({"workload":"tasks","policy":"piper","workers":2,"program":{"kind":"tasks"}})");
    const auto task = [&](unsigned w, std::uint64_t id, std::uint64_t parent, std::uint64_t spawned, std::uint64_t begin,
                          std::uint64_t end) {
        b.slice_begin(begin, r.worker(w), "task", {{"task", id}, {"parent", parent}, {"spawn_delay", begin - spawned}},
                      r.worker_seq(w));
        b.slice_end(end, r.worker(w), r.worker_seq(w));
    };
    b.slice_begin(0, r.worker(0), "task", {{"task", 1}, {"parent", 0}}, r.worker_seq(0));
    r.state(0, "idle", 30, 55);
    task(0, 3, 1, 20, 60, 80);
    b.slice_end(100, r.worker(0), r.worker_seq(0));
    task(1, 2, 1, 10, 15, 55);
    r.end_marker(110);
    const tr::trace_model m = tr::load_trace(b.view());
    REQUIRE(m.runs.size() == 1);
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    const an::task_stats& t = rep.tasks;
    CHECK(t.tasks == 3);
    CHECK(t.roots == 1);
    CHECK(t.depth == 2);
    CHECK(t.work_ns == 55 + 40 + 20);   // task 1's own time: 100 less idle 25 less task 3's 20
    // Through task 2: 10 before its spawn + 40 + task 1's own time after 55 (25) = 75; through
    // task 3: 20 + 20 + 20 = 60; task 1 alone: 55.
    CHECK(t.span_ns == 75);
    CHECK(t.own_max_ns == 55);
    CHECK(t.own_p50_ns == 40);
}

TEST_CASE("fork-join analysis: task slices without parents (an older trace) give work but no span",
          "[fork_join][analysis]") {
    pipescope::test::trace_builder b;
    pipescope::test::pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe("tasks · P=2", R"({"workload":"tasks","policy":"piper","workers":2,"program":{"kind":"tasks"}})");
    b.slice_begin(0, r.worker(0), "task", {{"task", 1}}, r.worker_seq(0));
    b.slice_end(30, r.worker(0), r.worker_seq(0));
    b.slice_begin(5, r.worker(1), "task", {{"task", 2}}, r.worker_seq(1));
    b.slice_end(15, r.worker(1), r.worker_seq(1));
    r.end_marker(40);
    const tr::trace_model m = tr::load_trace(b.view());
    REQUIRE(m.runs.size() == 1);
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    CHECK(rep.tasks.tasks == 2);
    CHECK(rep.tasks.work_ns == 40);
    CHECK_FALSE(rep.tasks.spawn_tree);
    CHECK(rep.tasks.span_ns == 0);
    const auto j = an::to_json(rep);
    CHECK(j["tasks"]["span_ns"].is_null());
    CHECK(j["tasks"]["parallelism"].is_null());
    CHECK(an::to_text(rep).find("span unknown") != std::string::npos);
    for (const auto& v : rep.verdicts) CHECK(v.rule != "task_parallelism");
}
