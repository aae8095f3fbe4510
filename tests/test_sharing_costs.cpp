// The costs of sharing between cores (issue 34; docs/virtual.md, "Costs of sharing"): a cache-line
// hand-off charged once per steal and once per queue slot taken on another virtual core, a thread
// preempted inside a queue push's critical section keeping the lock from the others, each one off
// at 0; and how `pipescope calibrate` reads its repetitions (median, spread, the noisy warning).
#include "../runtime/src/pipeline/policies/bind_to_stage/bind_to_stage_check.hpp"
#include "../runtime/src/virtual/virtual_executor.hpp"

#include <pipescope/recording/calibration_stats.hpp>
#include <pipescope/recording/cost_table.hpp>

#include "support/test_traces.hpp"
#include "support/virtual_loops.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace_session.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace pipescope;
using pipescope::detail::virtual_executor;

namespace {

// A deterministic fork-join program on virtual workers: 32 tasks of 20 µs each, forked from one,
// so that the other workers steal.
std::uint64_t forked_span(const virtual_costs& costs, std::uint64_t& steals) {
    scheduler_options o{.workers = 4, .virtual_time = true, .measure_jobs = false};
    o.costs = costs;
    scheduler s(o);
    task_group outer(s);
    outer.spawn([&s] {   // forked on a worker: the others steal from its deque
        task_group g(s);
        for (int k = 0; k < 32; ++k) g.spawn([] { virtual_work(20000); });
        g.sync();
    });
    outer.sync();
    steals = 0;
    for (unsigned w = 0; w < s.workers(); ++w) steals += s.counters(w).steals;
    const auto span = s.last_virtual_span();
    return span.end_ns - span.begin_ns;
}

struct check_installed {
    detail::bind_to_stage_check check;
    check_installed() { detail::set_bind_to_stage_check(&check); }
    ~check_installed() { detail::set_bind_to_stage_check(nullptr); }
};

// The three-stage loop under bind-to-stage (serial middle stage: three threads) on `cores` virtual
// cores with hand-off cost `handoff`, traced: the sum of its node slices, and what the queues counted.
struct bts_run {
    std::uint64_t node_ns = 0, handoffs = 0;
};
bts_run three_threads(unsigned cores, std::uint64_t handoff, const std::string& name) {
    const auto path = testing::checked_trace_path(name);
    std::filesystem::remove(path);
    check_installed installed;
    {
        scheduler_options o{.workers = cores, .virtual_time = true, .measure_jobs = false};
        o.costs.handoff_ns = handoff;
        scheduler s(o);
        trace_session rec(s, path, {.name = "bts", .detail = trace::trace_detail::nodes});
        testing::three_stage_loop(s,
                                  {.policy = "bind-to-stage",
                                   .declared_stages = {stage_kind::serial_in_order, stage_kind::serial_out_of_order,
                                                       stage_kind::serial_in_order}},
                                  64);
    }
    bts_run r;
    REQUIRE(installed.check.runs.size() == 1);
    r.handoffs = installed.check.runs[0].handoffs;
    const trace::trace_model m = trace::load_trace_file(path);
    for (const trace::track& t : m.tracks)
        for (const trace::slice& s : t.slices)
            if (m.uint_arg(s, trace::vocab::arg_key::iteration) && m.uint_arg(s, trace::vocab::arg_key::stage))
                r.node_ns += s.duration();
    return r;
}

using testing::run_threads;

}   // namespace

TEST_CASE("sharing costs: handoff and lock_hold are named costs that round-trip through a cost file", "[virtual][costs]") {
    std::vector<std::string> names;
    for (const virtual_cost_entry& e : virtual_cost_entries()) names.emplace_back(e.name);
    CHECK(std::find(names.begin(), names.end(), "handoff") != names.end());
    CHECK(std::find(names.begin(), names.end(), "lock_hold") != names.end());
    CHECK(virtual_costs{}.handoff_ns == 0);   // off until calibrated or set
    CHECK(virtual_costs{}.lock_hold_ns == 0);

    const auto dir = std::filesystem::temp_directory_path() / "pipescope-test-sharing-costs";
    std::filesystem::create_directories(dir);
    virtual_costs written;
    written.handoff_ns = 77;
    written.lock_hold_ns = 33;
    {
        std::ofstream out(dir / "costs.json");
        out << nlohmann::json{{"costs_ns", recording::costs_json(written)}}.dump(2);
    }
    virtual_costs read;
    (void)recording::read_cost_file(dir / "costs.json", read);
    CHECK(read.handoff_ns == 77);
    CHECK(read.lock_hold_ns == 33);
    std::vector<std::string> params = {"handoff_ns=0", "lock_hold_ns=5"};
    CHECK(recording::apply_cost_params(recording::take_cost_params(params), read) ==
          nlohmann::json{{"handoff", 0}, {"lock_hold", 5}});
    CHECK(read.handoff_ns == 0);
}

TEST_CASE("sharing costs: every steal pays one hand-off, and none at 0", "[virtual][costs]") {
    virtual_costs split, folded, off;
    split.steal_ns = 250;
    split.handoff_ns = 400;
    folded.steal_ns = 650;   // the same per steal, all of it as the steal's own cost
    folded.handoff_ns = 0;
    off.steal_ns = 250;
    std::uint64_t steals_split = 0, steals_folded = 0, steals_off = 0;
    const std::uint64_t a = forked_span(split, steals_split);
    const std::uint64_t b = forked_span(folded, steals_folded);
    const std::uint64_t c = forked_span(off, steals_off);
    REQUIRE(steals_split > 0);
    // Charged exactly steal_ns + handoff_ns per steal: the same schedule as a steal costing the sum.
    CHECK(a == b);
    CHECK(steals_split == steals_folded);
    CHECK(a != c);   // and it is charged at all
    std::uint64_t again = 0;
    CHECK(forked_span(off, again) == c);   // deterministic
}

TEST_CASE("sharing costs: a queue slot taken on another virtual core pays one hand-off", "[virtual][threads][costs]") {
    // Three threads on three cores keep a core each: every item crosses both queues (2 x 64
    // hand-offs), each charged to the node that follows the take. On one core nothing crosses.
    const bts_run off = three_threads(3, 0, "sharing-handoff-off.pftrace");
    const bts_run on = three_threads(3, 777, "sharing-handoff-on.pftrace");
    CHECK(off.handoffs == 128);
    CHECK(on.handoffs == 128);
    CHECK(on.node_ns - off.node_ns == 128 * 777);
    const bts_run one = three_threads(1, 777, "sharing-handoff-one-core.pftrace");
    CHECK(one.handoffs == 0);
}

TEST_CASE("sharing costs: a thread preempted inside a push keeps the queue's lock", "[virtual][threads][costs]") {
    // Two threads on one core, quantum 100, switch 10, wake 50. Thread 0's step of 120 ends with a
    // push under lock 1; thread 1 takes from that queue (home lock 1). At 100 thread 0 is preempted
    // with 20 to go: inside a critical section of 30, it keeps the lock. Thread 1 gets the core
    // (110), needs the lock, blocks; thread 0 runs again (120) and ends its step at 140, releasing
    // the lock; thread 1 is ready at 190 and runs after a switch, at 200. With a critical section of
    // 10 (or 0) the quantum ends outside it and thread 1 runs at 110.
    for (const std::uint64_t hold : {30u, 10u, 0u}) {
        INFO("lock_hold " << hold);
        virtual_executor ex(
            2, {.cores = 1, .quantum_ns = 100, .context_switch_ns = 10, .lock_hold_ns = hold, .lock_wake_ns = 50}, 0);
        ex.set_home_lock(1, 1);
        std::uint64_t done0 = 0, started1 = 0;
        run_threads(ex, [&](unsigned i, virtual_executor& x) {
            if (i == 0) {
                x.advance(0, 120, 1);
                done0 = x.clock(0);
            } else {
                started1 = x.clock(1);
            }
        });
        CHECK(done0 == 140);
        CHECK(started1 == (hold == 30 ? 200u : 110u));
        CHECK(ex.lock_holder_preemptions() == (hold == 30 ? 1u : 0u));
        CHECK(ex.lock_waits() == (hold == 30 ? 1u : 0u));
    }
}

TEST_CASE("calibration: the median is the cost, the spread is printed, a noisy cost is named", "[calibrate]") {
    std::vector<double> steady(21);
    for (std::size_t k = 0; k < steady.size(); ++k) steady[k] = 5000 + 10.0 * static_cast<double>(k);
    const recording::sample_spread s = recording::spread_of(steady);
    CHECK(s.median == 5100);
    CHECK(s.min == 5000);
    CHECK(s.max == 5200);
    CHECK(s.p10 == Approx(5020));
    CHECK(s.p90 == Approx(5180));
    CHECK(s.samples == 21);
    CHECK_FALSE(recording::noise_warning("wake", s));

    // A VM's wake-ups: 57 µs most of the time, 788 µs a third of it, 20 ms once.
    std::vector<double> noisy(13, 57000);
    noisy.insert(noisy.end(), 7, 788000);
    noisy.push_back(20e6);
    const auto w = recording::noise_warning("wake", recording::spread_of(noisy));
    REQUIRE(w);
    CHECK_THAT(*w, Catch::StartsWith("wake varied 14x between repetitions (57.0 us to 788.0 us"));
    CHECK_THAT(*w, Catch::Contains("rerun `pipescope calibrate` on a quiet machine, or pass --param wake_ns=V"));

    // A few ns read as 0 or 40: the timer, not the machine (under the floor of 100 ns).
    std::vector<double> tiny = {0, 0, 0, 2, 5, 5, 5, 5, 6, 40, 40};
    CHECK_FALSE(recording::noise_warning("failed_steal", recording::spread_of(tiny)));
    CHECK_THROWS(recording::spread_of({}));
}

TEST_CASE("sharing costs: an idle worker's 16 yields before it parks cost 16 x yield_ns, none at 0", "[virtual][costs]") {
    // A task forking children of 1 ms and 10 ms on two virtual workers: the other worker, woken for
    // them, steals the 1 ms one, runs it, then searches (failed steals), yields 16 times
    // (scheduler.cpp, run_until) and parks. The time from its idle slice's start to the parked
    // slice inside it grows by exactly 16 yields per park.
    auto idle_and_parks = [](std::uint64_t yield, const std::string& name) {
        const auto path = testing::checked_trace_path(name);
        std::filesystem::remove(path);
        {
            scheduler_options o{.workers = 2, .virtual_time = true, .measure_jobs = false};
            o.costs.yield_ns = yield;
            scheduler s(o);
            trace_session rec(s, path, {.name = "idle", .detail = trace::trace_detail::nodes});
            task_group g(s);
            g.spawn([&s] {   // its child wakes the parked worker, which takes it and is idle again
                task_group inner(s);
                inner.spawn([] { virtual_work(1'000'000); });    // stolen (the deque's oldest)
                inner.spawn([] { virtual_work(10'000'000); });   // run here by the sync
                inner.sync();
            });
            g.sync();
        }
        const trace::trace_model m = trace::load_trace_file(path);
        std::pair<std::uint64_t, std::uint64_t> r{0, 0};
        for (const trace::track& t : m.tracks)
            for (std::size_t k = 0; k < t.slices.size(); ++k) {
                const std::string& what = m.str(t.slices[k].name);
                if (what == trace::vocab::idle && k + 1 < t.slices.size() &&
                    m.str(t.slices[k + 1].name) == trace::vocab::parked) {
                    r.first += t.slices[k + 1].begin - t.slices[k].begin;   // parked is nested in idle
                    ++r.second;
                }
            }
        return r;
    };
    const auto off = idle_and_parks(0, "sharing-yield-off.pftrace");
    const auto on = idle_and_parks(700, "sharing-yield-on.pftrace");
    REQUIRE(off.second > 0);
    CHECK(on.second == off.second);
    CHECK(on.first - off.first == off.second * 16 * 700);
}
