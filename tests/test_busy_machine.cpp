// Descheduled time (pipescope issue 33, item 2): the run summary records what CPU time each worker
// thread got and how long it was runnable but waiting for a CPU; the breakdown shows it, and a run
// whose workers got less than busy_machine_core_share of a core gets the busy_machine caution and no
// "more workers" advice. A real run pinned to one CPU with busy threads beside it gets it; a run
// whose workers got their cores (hand-built) does not.
#include "support/pipescope_run_builder.hpp"
#include "support/spin.hpp"

#include <pipescope/analysis/report.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <catch2/catch.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace pipescope;
using pipescope::testing::spin_for;
namespace an = pipescope::analysis;
namespace tr = pipescope::trace;

namespace {

bool kernel_keeps_schedstat() { return std::ifstream("/proc/thread-self/schedstat").good(); }

// A loop of 40 iterations with a 2 ms parallel stage, recorded on P workers; returns the trace.
tr::trace_model record_loop(unsigned workers, const std::string& name) {
    const auto path = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".pftrace");
    std::filesystem::remove(path);
    {
        scheduler sched({workers});
        trace_session rec(sched, path, {.name = name});
        int next = 0;
        pipe_while(
            sched, [&] { return next < 40; },
            [&](iteration& it) -> pipe_task {
                ++next;
                co_await it.stage(1);
                spin_for(std::chrono::microseconds(2000));
            });
    }
    tr::trace_model m = tr::load_trace_file(path);
    std::filesystem::remove(path);
    return m;
}

const an::verdict* find(const std::vector<an::verdict>& v, const std::string& rule) {
    auto it = std::find_if(v.begin(), v.end(), [&](const an::verdict& x) { return x.rule == rule; });
    return it == v.end() ? nullptr : &*it;
}

bool advises_more_workers(const std::vector<an::verdict>& v) {
    return std::any_of(v.begin(), v.end(),
                       [](const an::verdict& x) { return x.suggestion.find("more workers") != std::string::npos; });
}

// Two workers each running 1 s of nodes; the run summary says what the machine gave them.
tr::trace_model balanced_with_cpu(std::uint64_t cpu_ns, std::uint64_t descheduled_ns) {
    pipescope::test::trace_builder b;
    pipescope::test::pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe(
        "sp · piper · P=2",
        R"({"workload":"sp","policy":"piper","workers":2,"program":{"kind":"pipeline","K":8,"stages":[)"
        R"({"index":0,"name":"stage 0 · load","kind":"serial"},{"index":1,"name":"stage 1 · work","kind":"parallel"}]}})");
    constexpr std::uint64_t ms = 1000000;
    for (std::uint64_t i = 0; i < 10; ++i) {
        const unsigned w = static_cast<unsigned>(i % 2);
        const std::uint64_t t = 200 * (i / 2) * ms;
        r.node(w, i, 0, t, t + 10 * ms);
        r.node(w, i, 1, t + 10 * ms, t + 200 * ms);
    }
    const std::string one =
        R"("cpu_ns":)" + std::to_string(cpu_ns) + R"(,"descheduled_ns":)" + std::to_string(descheduled_ns);
    r.end_marker(1000 * ms, R"({"workers":[{"worker":0,)" + one + R"(,"timeslices":10},{"worker":1,)" + one + "}]}");
    return tr::load_trace(b.view());
}

}   // namespace

TEST_CASE("busy machine: workers sharing one CPU with busy threads get the verdict, not more workers",
          "[busy_machine][trace_session]") {
    if (!kernel_keeps_schedstat()) {
        WARN("this kernel keeps no /proc/thread-self/schedstat: nothing to test");
        return;
    }
    // This thread, the workers it starts and the busy threads on one CPU it may use.
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
    REQUIRE(cpu < CPU_SETSIZE);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (int k = 0; k < 3; ++k)
        busy.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed)) {
            }
        });
    tr::trace_model m;
    try {
        m = record_loop(2, "busy");
    } catch (...) {
        stop = true;
        for (auto& t : busy) t.join();
        sched_setaffinity(0, sizeof allowed, &allowed);
        throw;
    }
    stop = true;
    for (auto& t : busy) t.join();
    REQUIRE(sched_setaffinity(0, sizeof allowed, &allowed) == 0);

    REQUIRE(m.runs.size() == 1);
    REQUIRE(m.runs[0].worker_times.size() == 2);
    const an::run_report r = an::analyze(an::scope_of(m, 0));
    REQUIRE(r.breakdown.total.descheduled_ns);
    CHECK(*r.breakdown.total.descheduled_ns > 0);
    const an::verdict* v = find(r.verdicts, "busy_machine");
    REQUIRE(v);
    CHECK_FALSE(v->limiting);
    CHECK(v->text.find("of a core each: the machine was busy") != std::string::npos);
    CHECK(v->text.find("this run says nothing about more workers") != std::string::npos);
    CHECK(r.verdicts.front().rule == "busy_machine");   // a caution: listed first
    CHECK_FALSE(advises_more_workers(r.verdicts));
    const std::string text = an::to_text(r);
    CHECK(text.find("descheduled (runnable, waiting for a CPU") != std::string::npos);
}

TEST_CASE("busy machine: a recorded run says what each worker got", "[busy_machine][trace_session]") {
    if (!kernel_keeps_schedstat()) {
        WARN("this kernel keeps no /proc/thread-self/schedstat: nothing to test");
        return;
    }
    const tr::trace_model m = record_loop(1, "quiet");
    REQUIRE(m.runs.size() == 1);
    REQUIRE(m.runs[0].worker_times.size() == 1);
    CHECK(m.runs[0].worker_times[0].worker == 0);
    CHECK(m.runs[0].worker_times[0].cpu_ns > 0);
    CHECK(m.runs[0].worker_times[0].timeslices > 0);
    const an::run_report r = an::analyze(an::scope_of(m, 0));
    REQUIRE(r.breakdown.workers.size() == 1);
    REQUIRE(r.breakdown.workers[0].cpu_ns);
    CHECK(*r.breakdown.workers[0].cpu_ns == m.runs[0].worker_times[0].cpu_ns);
    // Whether this machine let the worker have its core is not the test's to decide (CI boxes are
    // shared): the verdict must agree with what was recorded.
    const auto share = r.breakdown.total.core_share();
    REQUIRE(share);
    CHECK((find(r.verdicts, "busy_machine") != nullptr) == (*share < an::threshold::busy_machine_core_share));
    const auto j = an::to_json(r);
    CHECK(j["breakdown"]["total"]["cpu_ns"] == *r.breakdown.total.cpu_ns);
    CHECK(j["breakdown"]["total"].contains("descheduled"));
}

TEST_CASE("busy machine: workers that got their cores get no busy verdict, those that did not, no more-workers advice",
          "[busy_machine][analysis][verdicts]") {
    constexpr std::uint64_t ms = 1000000;
    const tr::trace_model quiet = balanced_with_cpu(990 * ms, 10 * ms);
    const an::run_report q = an::analyze(an::scope_of(quiet, 0));
    REQUIRE(q.breakdown.total.core_share());
    CHECK(*q.breakdown.total.core_share() == Approx(0.99));
    CHECK(q.breakdown.total.descheduled_fraction() == Approx(0.01));
    CHECK_FALSE(find(q.verdicts, "busy_machine"));
    REQUIRE(find(q.verdicts, "balanced"));
    CHECK(advises_more_workers(q.verdicts));

    const tr::trace_model busy = balanced_with_cpu(520 * ms, 480 * ms);
    const an::run_report b = an::analyze(an::scope_of(busy, 0));
    const an::verdict* v = find(b.verdicts, "busy_machine");
    REQUIRE(v);
    CHECK(v->text.rfind("workers got 52 % of a core each: the machine was busy", 0) == 0);
    CHECK(b.breakdown.total.descheduled_fraction() == Approx(0.48));
    REQUIRE(find(b.verdicts, "balanced"));   // still balanced in wall-clock terms, but no advice on that basis
    CHECK_FALSE(advises_more_workers(b.verdicts));

    // The threshold the docs give.
    CHECK(an::threshold::busy_machine_core_share == 0.70);
}
