// analysis/stages.hpp, queueing.hpp, verdicts.hpp on hand-built runs with known answers: service
// time percentiles, busy fractions, steals per pair, queueing bounds; a run with one saturated
// serial stage gets that verdict, a balanced run does not; then each verdict rule alone, on
// hand-built analysis results, with the thresholds it tests and the text it writes.
#include <pipescope/analysis/report.hpp>
#include <pipescope/trace/trace_model.hpp>

#include "support/pipescope_run_builder.hpp"

#include <catch2/catch.hpp>

#include <optional>

#include <algorithm>
#include <string>
#include <vector>

namespace an = pipescope::analysis;
namespace tr = pipescope::trace;
using pipescope::test::pipescope_run_builder;
using pipescope::test::trace_builder;

namespace {

constexpr std::uint64_t us = 1000;

std::string sps_metadata(unsigned K) {
    std::string s = R"({"workload":"sps","policy":"piper","workers":2,"program":{"kind":"pipeline","K":)";
    s += std::to_string(K);
    s +=
        R"(,"stages":[{"index":0,"name":"stage 0 · load","kind":"serial"},)"
        R"({"index":1,"name":"stage 1 · work","kind":"parallel"},{"index":2,"name":"stage 2 · output","kind":"stage_wait"}]}})";
    return s;
}

// 10 iterations. Worker 1 runs stage 0 (1 us) and stage 1 (2 us) of iteration i at 10i us, then
// idles; worker 0 runs stage 2 "output" (10 us) of each iteration back to back from 3 us to
// 103 us. The output stage is busy 100 of 103 us.
tr::trace_model saturated_output() {
    trace_builder b;
    pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe("sps · piper · P=2", sps_metadata(16));
    r.state(0, "idle", 0, 3 * us);
    for (std::uint64_t i = 0; i < 10; ++i) {
        r.node(1, i, 0, 10 * i * us, (10 * i + 1) * us);
        r.node(1, i, 1, (10 * i + 1) * us, (10 * i + 3) * us);
        r.state(1, "idle", (10 * i + 3) * us, (10 * i + 10) * us);
        r.node(0, i, 2, (10 * i + 3) * us, (10 * i + 13) * us, i > 0);
    }
    r.mark(0, 3 * us - 10, "steal", {{"victim", 1}});
    r.end_marker(103 * us);
    tr::trace_model m = tr::load_trace(b.view());
    return m;
}

// 10 iterations, alternating workers, each 1 us of stage 0 and 9 us of stage 1: both workers busy
// from start to end.
tr::trace_model balanced(bool lost = false) {
    trace_builder b;
    pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe(
        "sp · piper · P=2",
        R"({"workload":"sp","policy":"piper","workers":2,"program":{"kind":"pipeline","K":8,"stages":[)"
        R"({"index":0,"name":"stage 0 · load","kind":"serial"},{"index":1,"name":"stage 1 · work","kind":"parallel"}]}})");
    for (std::uint64_t i = 0; i < 10; ++i) {
        const unsigned w = static_cast<unsigned>(i % 2);
        const std::uint64_t t = 10 * (i / 2) + w;
        r.node(w, i, 0, t * us, (t + 1) * us);
        r.node(w, i, 1, (t + 1) * us, (t + 10) * us);
    }
    if (lost) r.mark(1, 30 * us, "events lost", {{"dropped", 5}});
    r.end_marker(51 * us);
    return tr::load_trace(b.view());
}

const an::verdict* find(const std::vector<an::verdict>& v, const std::string& rule) {
    auto it = std::find_if(v.begin(), v.end(), [&](const an::verdict& x) { return x.rule == rule; });
    return it == v.end() ? nullptr : &*it;
}

}   // namespace

TEST_CASE("stages: service-time percentiles by nearest rank, exact", "[analysis][stages]") {
    std::vector<std::uint64_t> d;
    for (std::uint64_t v = 20; v >= 1; --v) d.push_back(v * 10);   // 200, 190, ..., 10 (unsorted input)
    const an::service_stats s = an::summarize(d);
    CHECK(s.count == 20);
    CHECK(s.total == 2100);
    CHECK(s.mean == Approx(105.0));
    CHECK(s.p50 == 100);   // the 10th smallest
    CHECK(s.p95 == 190);   // the 19th smallest
    CHECK(s.max == 200);
    const an::service_stats one = an::summarize({7});
    CHECK(one.p50 == 7);
    CHECK(one.p95 == 7);
    CHECK(an::summarize({}).count == 0);
    const an::service_stats three = an::summarize({5, 1, 9});
    CHECK(three.p50 == 5);   // ceil(1.5) = 2nd
    CHECK(three.p95 == 9);   // ceil(2.85) = 3rd
}

TEST_CASE("stages: executions, service times, busy fraction, steals per pair", "[analysis][stages]") {
    const tr::trace_model m = saturated_output();
    REQUIRE(m.runs.size() == 1);
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    CHECK(rep.makespan() == 103 * us);
    CHECK(rep.stats.iterations == 10);
    REQUIRE(rep.stats.stages.size() == 3);
    const auto& out = rep.stats.stages[2];
    CHECK(out.index == 2);
    CHECK(out.name == "stage 2 · output");
    CHECK(out.kind == "stage_wait");
    CHECK(out.serial);
    CHECK(out.service.count == 10);
    CHECK(out.service.p50 == 10 * us);
    CHECK(out.service.total == 100 * us);
    CHECK(out.busy_fraction == Approx(100.0 / 103));
    CHECK_FALSE(rep.stats.stages[1].serial);
    CHECK(rep.stats.stages[1].service.p95 == 2 * us);
    REQUIRE(rep.stats.steal_pairs.size() == 1);
    CHECK(rep.stats.steal_pairs[0].thief == 0);
    CHECK(rep.stats.steal_pairs[0].victim == 1);
    CHECK(rep.stats.steal_pairs[0].made == 1);
    CHECK(rep.stats.steals_made == 1);
}

TEST_CASE("queueing: lambda_max from the slowest serial stage, bounds per model", "[analysis][queueing]") {
    const tr::trace_model m = saturated_output();
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    const an::queueing_bounds& q = rep.queueing;
    REQUIRE(q.available);
    CHECK(q.critical_serial_stage == 2);
    CHECK(q.lambda_max == Approx(1e5));        // 1 / 10 us
    CHECK(q.work_per_item == Approx(13e-6));   // 1 + 2 + 10 us
    CHECK(q.bound_element == Approx(1e5));     // min(2 / 13 us, 1 / 10 us)
    // bind-to-stage: serial stages one thread each, the parallel stage c = P = 2 threads (1 M/s).
    CHECK(q.bound_stage == Approx(1e5));
    CHECK(q.bottleneck_stage == 2);
    CHECK(q.model == "bind-to-element");
    CHECK(q.observed == Approx(10 / 103e-6));
    CHECK(q.efficiency == Approx((10 / 103e-6) / 1e5));
}

TEST_CASE("verdicts: one saturated serial stage is named the bottleneck", "[analysis][verdicts]") {
    const tr::trace_model m = saturated_output();
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    REQUIRE_FALSE(rep.verdicts.empty());
    CHECK(rep.verdicts.front().rule == "serial_bottleneck");   // the most severe
    const an::verdict* v = find(rep.verdicts, "serial_bottleneck");
    REQUIRE(v);
    INFO(v->text);
    CHECK(v->limiting);
    CHECK(v->text.find("'stage 2 · output'") != std::string::npos);
    CHECK(v->text.find("97 %") != std::string::npos);
    CHECK(v->text.find("100000 items/s") != std::string::npos);   // 1/T2
    CHECK(v->text.find("observed 97087 items/s") != std::string::npos);
    CHECK_FALSE(v->suggestion.empty());
    CHECK(v->where.stage == 2);
    CHECK(v->where.begin == 0);
    CHECK(v->where.end == 103 * us);
    CHECK_FALSE(find(rep.verdicts, "balanced"));
}

TEST_CASE("verdicts: a balanced run gets no limiting verdict", "[analysis][verdicts]") {
    const tr::trace_model m = balanced();
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    CHECK(rep.makespan() == 51 * us);
    CHECK(rep.breakdown.total.time.fraction(an::time_category::work) == Approx(100.0 / 102));
    REQUIRE(rep.verdicts.size() == 1);
    CHECK(rep.verdicts[0].rule == "balanced");
    CHECK_FALSE(rep.verdicts[0].limiting);
    CHECK_FALSE(find(rep.verdicts, "serial_bottleneck"));
    // Its DAG: T1 = 100 us; span = stage-0 chain (10 us) + the last stage 1 (9 us), and with K = 8
    // the throttling edge (0,1) -> (8,0) makes it 1 + 9 + 1 + 1 + 9 = 21 us.
    CHECK(rep.dag.work == 100 * us);
    CHECK(rep.dag.without_throttle.span == 19 * us);
    CHECK(rep.dag.with_throttle.span == 21 * us);
}

TEST_CASE("verdicts: the thresholds are what the docs say", "[analysis][verdicts]") {
    CHECK(an::threshold::serial_busy == 0.75);
    CHECK(an::threshold::throttle_span_ratio == 1.2);
    CHECK(an::threshold::parallel_slack == 2.0);
    CHECK(an::threshold::stall == 0.20);
    CHECK(an::threshold::idle == 0.25);
    CHECK(an::threshold::parked == 0.25);
    CHECK(an::threshold::scheduler == 0.15);
    CHECK(an::threshold::busy_enough == 0.90);
}

TEST_CASE("report: JSON has the documented fields", "[analysis][report]") {
    const tr::trace_model m = saturated_output();
    const nlohmann::json j = an::to_json(an::analyze(an::scope_of(m, 0)));
    CHECK(j.at("format") == "pipescope-stats/1");
    for (const char* k : {"run", "breakdown", "stages", "steals", "events", "limits", "dag", "queueing", "verdicts"})
        CHECK(j.contains(k));
    CHECK(j.at("run").at("makespan_ns") == 103 * us);
    CHECK(j.at("stages").at(2).at("service_ns").at("p50") == 10 * us);
    CHECK(j.at("breakdown").at("total").contains("stall_ns"));
    CHECK(j.at("dag").at("critical_path").at(0).contains("via"));
    CHECK(j.at("verdicts").at(0).at("rule") == "serial_bottleneck");
    CHECK(j.at("verdicts").at(0).at("where").at("stage") == 2);
    CHECK(j.at("limits").at("K") == 16);
    const std::string text = an::to_text(an::analyze(an::scope_of(m, 0)));
    CHECK(text.find("verdicts") != std::string::npos);
    CHECK(text.find("serial stage 2 'stage 2 · output' was busy 97 %") != std::string::npos);
}

TEST_CASE("verdicts: lost events are a caution listed first, not a limit", "[analysis][verdicts]") {
    const tr::trace_model m = balanced(true);
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    CHECK(rep.stats.events_lost == 5);
    REQUIRE(rep.verdicts.size() == 2);
    CHECK(rep.verdicts[0].rule == "events_lost");
    CHECK_FALSE(rep.verdicts[0].limiting);
    CHECK(rep.verdicts[0].where.begin == 30 * us);
    CHECK(rep.verdicts[0].where.worker == 1);
    CHECK(rep.verdicts[1].rule == "balanced");
}

TEST_CASE("verdicts: a bind-to-stage thread blocked on a full queue", "[analysis][verdicts]") {
    trace_builder b;
    pipescope_run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe(
        "p · bind-to-stage · P=2",
        R"({"workload":"p","policy":"bind-to-stage","workers":2,"params":["c=1"],"program":{"kind":"pipeline","stages":[)"
        R"({"index":0,"name":"stage 0 · in","kind":"serial"},{"index":1,"name":"stage 1 · work","kind":"parallel"}]}})");
    const std::uint64_t queue = (std::uint64_t{1} << 32) | 6;
    b.counter_track(queue, r.process(), "queue 1 fill");
    r.node(0, 0, 0, 0, 10 * us);
    r.state(0, "blocked: queue 1 full", 10 * us, 60 * us);
    r.node(1, 0, 1, 10 * us, 100 * us);
    b.count(10 * us, queue, 20, r.run_seq());
    r.end_marker(100 * us);
    const tr::trace_model m = tr::load_trace(b.view());
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    CHECK(rep.breakdown.workers.at(0).time[an::time_category::stall] == 50 * us);
    const an::verdict* v = find(rep.verdicts, "blocked_heavy");
    REQUIRE(v);
    INFO(v->text);
    CHECK(v->text.find("'worker 0' was blocked 50 %") != std::string::npos);
    CHECK(v->text.find("peak fill was 20 of 20") != std::string::npos);   // bind-to-stage's default capacity
    CHECK(v->where.begin == 10 * us);
    CHECK(v->where.end == 60 * us);
    // c = 1 from the params: stage 1 has one thread under bind-to-stage.
    REQUIRE(rep.queueing.stages.size() == 2);
    CHECK(rep.queueing.stages[1].c_stage == 1.0);
    CHECK(rep.queueing.model == "bind-to-stage");
}

// --- each rule alone, on hand-built analysis results ----------------------------------------------

namespace {

// The analysis results of a 100 us run of P = 2 workers with no trace behind them (the rules that
// read the trace itself, blocked_heavy and stall_heavy's place, are tested on traces above); a test
// sets what its rule reads.
struct rule_inputs {
    tr::trace_model model;
    an::run_scope scope;
    an::run_meta meta;
    an::run_breakdown breakdown;
    an::run_stats stats;
    an::dag_bounds dag;
    an::queueing_bounds queueing;

    rule_inputs() {
        scope.model = &model;
        scope.end = 100 * us;
        meta.policy = "piper";
        dag.workers = 2;
        breakdown.total.time.span = 200 * us;   // two workers' time
        breakdown.total.time[an::time_category::work] = 200 * us;
    }
    // Moves `fraction` of all workers' time from work to `c`.
    void spend(an::time_category c, double fraction) {
        const auto ns = static_cast<std::uint64_t>(fraction * 200 * us);
        breakdown.total.time[c] += ns;
        breakdown.total.time[an::time_category::work] -= ns;
    }
    // A DAG of work T1 with the given spans (ns) with and without the throttling edges.
    void pipeline_dag(std::uint64_t work, std::uint64_t span, std::uint64_t span_unthrottled, std::uint64_t K) {
        dag.available = true;
        dag.K = K;
        dag.work = work;
        dag.with_throttle.span = span;
        dag.without_throttle.span = span_unthrottled;
        dag.parallelism = static_cast<double>(work) / static_cast<double>(span);
        dag.parallelism_unthrottled = static_cast<double>(work) / static_cast<double>(span_unthrottled);
    }
    std::vector<an::verdict> run(std::string_view rule) const {
        const an::verdict_rule* r = an::find_verdict_rule(rule);
        REQUIRE(r);
        return r->find(an::verdict_inputs{scope, meta, breakdown, stats, dag, queueing});
    }
};

an::stage_rate stage_rate(std::uint64_t index, std::string name, double tser, double rate_stage) {
    an::stage_rate r;
    r.index = index;
    r.name = std::move(name);
    r.tser = tser;
    r.rate_stage = rate_stage;
    return r;
}

an::stage_stats serial_stage(std::uint64_t index, std::string name, double busy) {
    an::stage_stats s;
    s.index = index;
    s.name = std::move(name);
    s.serial = true;
    s.service.count = 10;
    s.busy_fraction = busy;
    return s;
}

}   // namespace

TEST_CASE("verdict rules: every rule is in a table, once", "[analysis][verdicts]") {
    std::vector<std::string_view> ids;
    for (auto table : {an::limit_rules(), an::caution_rules()})
        for (const an::verdict_rule& r : table) ids.push_back(r.id);
    const std::vector<std::string_view> expected = {"serial_bottleneck", "throttle_limited", "low_parallelism",
                                                    "stall_heavy",       "blocked_heavy",    "input_starved",
                                                    "steal_heavy",       "parked_heavy",     "scheduler_heavy",
                                                    "busy_machine",      "events_lost",      "folded_trace"};
    CHECK(ids == expected);
    CHECK_FALSE(an::find_verdict_rule("balanced"));   // not a rule: what is said when none fires
}

TEST_CASE("verdict rule serial_bottleneck: one verdict per saturated serial stage", "[analysis][verdicts]") {
    rule_inputs in;
    in.stats.stages = {serial_stage(0, "in", 0.80), serial_stage(1, "", 0.74), serial_stage(2, "out", 0.95)};
    in.stats.stages.push_back(serial_stage(3, "parallel", 0.99));
    in.stats.stages.back().serial = false;
    const auto v = in.run("serial_bottleneck");
    REQUIRE(v.size() == 2);   // 0.74 is under the threshold, stage 3 is parallel
    CHECK(v[0].text == "serial stage 0 'in' was busy 80 % of the run");
    CHECK(v[0].severity == 0.80);
    CHECK(v[1].where.stage == 2);
    in.queueing.available = true;
    in.queueing.observed = 12.5;
    in.queueing.stages.push_back(stage_rate(2, "", 1e-3, 0));
    CHECK(
        in.run("serial_bottleneck")[1].text ==
        "serial stage 2 'out' was busy 95 % of the run; it bounds throughput at 1/T2 = 1000 items/s; observed 12.5 items/s");
}

TEST_CASE("verdict rule throttle_limited: the span stretched by throttling edges, workers not busy",
          "[analysis][verdicts]") {
    rule_inputs in;
    in.pipeline_dag(300 * us, 200 * us, 100 * us, 2);   // span ratio 2, parallelism 1.5 < 2 P
    CHECK(in.run("throttle_limited").empty());          // workers worked all the time: T_P = T1/P anyway
    in.spend(an::time_category::stall, 0.5);
    const auto v = in.run("throttle_limited");
    REQUIRE(v.size() == 1);
    CHECK(v[0].severity == Approx(0.5));
    CHECK(v[0].text == "throttle K = 2 limited parallelism: span with throttling edges is 2.0\xC3\x97 the span without "
                       "(parallelism 1.50 instead of 3.00; 0 throttling edges on the critical path)");
    CHECK(v[0].suggestion == "raise K (--param K=...)");
    in.pipeline_dag(300 * us, 110 * us, 100 * us, 2);   // ratio 1.1: under the threshold
    CHECK(in.run("throttle_limited").empty());
    in.pipeline_dag(300 * us, 200 * us, 100 * us, 2);
    in.dag.approximate = true;   // a folded trace: the span is only a bound
    CHECK(in.run("throttle_limited").empty());
}

TEST_CASE("verdict rule low_parallelism: T1/Tinf below P, unless the throttle alone is to blame", "[analysis][verdicts]") {
    rule_inputs in;
    in.pipeline_dag(150 * us, 100 * us, 100 * us, 8);   // parallelism 1.5 < P = 2
    const auto v = in.run("low_parallelism");
    REQUIRE(v.size() == 1);
    CHECK(v[0].severity == Approx(0.25));
    CHECK(v[0].text == "the pipeline DAG has parallelism T1/Tinf = 1.50 < P = 2: no scheduler can run it more than "
                       "1.50\xC3\x97 faster than its work");
    in.pipeline_dag(300 * us, 100 * us, 100 * us, 8);   // parallelism 3 >= P
    CHECK(in.run("low_parallelism").empty());
    in.pipeline_dag(150 * us, 100 * us, 50 * us, 2);   // throttled: unthrottled parallelism 3 >= P
    in.spend(an::time_category::stall, 0.5);
    CHECK(in.run("low_parallelism").empty());
    CHECK(in.run("throttle_limited").size() == 1);
}

TEST_CASE("verdict rule stall_heavy: names the stage_wait, the throttle or the retire order", "[analysis][verdicts]") {
    rule_inputs in;
    in.spend(an::time_category::stall, 0.19);
    CHECK(in.run("stall_heavy").empty());
    in.spend(an::time_category::stall, 0.11);
    in.meta.K = 4;
    in.stats.throttled_ns = 5 * us;
    auto v = in.run("stall_heavy");
    REQUIRE(v.size() == 1);
    CHECK(v[0].text == "workers idled 30 % while the loop was throttled at K = 4");
    in.stats.stages = {serial_stage(3, "", 0.1)};
    in.stats.stages[0].wait_ns = 9 * us;
    in.stats.stages[0].waits = 7;
    v = in.run("stall_heavy");
    CHECK(v[0].text == "workers idled 30 % waiting at stage_wait(3) (7 waits)");
    CHECK(v[0].suggestion.starts_with("the cross edge into stage 3 serializes iterations"));
    in.stats.retire_wait_ns = 10 * us;
    CHECK(in.run("stall_heavy")[0].text == "workers idled 30 % while iterations waited to retire in order");
}

TEST_CASE("verdict rules input_starved and steal_heavy: looking for work, by policy family", "[analysis][verdicts]") {
    rule_inputs in;
    in.spend(an::time_category::idle, 0.20);
    in.spend(an::time_category::stealing, 0.10);
    in.stats.steals_made = 3;
    in.stats.steals_failed = 40;
    auto v = in.run("steal_heavy");
    REQUIRE(v.size() == 1);
    CHECK(v[0].text == "workers spent 30 % of their time looking for work (3 steals made, 40 failed attempts recorded)");
    CHECK(in.run("input_starved").empty());
    in.meta.policy = "bind-to-stage";
    CHECK(in.run("steal_heavy").empty());
    in.queueing.stages.push_back(stage_rate(1, "stage 1 · work", 0, 50));
    in.queueing.stages.push_back(stage_rate(2, "", 0, 2000));
    v = in.run("input_starved");
    REQUIRE(v.size() == 1);
    CHECK(v[0].text == "threads spent 30 % of their time waiting for input (empty queues); the slowest stage is "
                       "stage 1 'stage 1 · work' at c/Tser = 50 items/s");
    CHECK(v[0].where.stage == 1);
}

TEST_CASE("verdict rule parked_heavy", "[analysis][verdicts]") {
    rule_inputs in;
    in.spend(an::time_category::parked, 0.24);
    CHECK(in.run("parked_heavy").empty());
    in.spend(an::time_category::parked, 0.01);
    in.stats.wakeups = 12;
    const auto v = in.run("parked_heavy");
    REQUIRE(v.size() == 1);
    CHECK(v[0].text == "workers slept (parked) 25 % of their time; 12 wake-ups");
}

TEST_CASE("verdict rule scheduler_heavy: scheduler and queue time, with the mean node", "[analysis][verdicts]") {
    rule_inputs in;
    in.spend(an::time_category::scheduler, 0.10);
    in.spend(an::time_category::queue, 0.05);
    in.breakdown.total.nodes = 340;   // 170 us of work: 0.5 us each
    const auto v = in.run("scheduler_heavy");
    REQUIRE(v.size() == 1);
    CHECK(v[0].severity == Approx(0.15));
    CHECK(v[0].text == "scheduling overhead took 15 % of worker time; nodes ran 0.50 \xC2\xB5s on average");
}

TEST_CASE("verdict rules events_lost and folded_trace: cautions, not limits", "[analysis][verdicts]") {
    rule_inputs in;
    CHECK(in.run("events_lost").empty());
    CHECK(in.run("folded_trace").empty());
    in.stats.events_lost = 7;
    in.stats.first_loss.begin = 30 * us;
    auto v = in.run("events_lost");
    REQUIRE(v.size() == 1);
    CHECK_FALSE(v[0].limiting);
    CHECK(v[0].text.starts_with("7 events were lost while recording"));
    CHECK(v[0].where.begin == 30 * us);
    in.pipeline_dag(300 * us, 100 * us, 100 * us, 8);
    in.dag.approximate = true;
    in.stats.folded_runs = 2;
    in.stats.folded_nodes = 40;
    in.stats.nodes = 50;
    v = in.run("folded_trace");
    REQUIRE(v.size() == 1);
    CHECK_FALSE(v[0].limiting);
    CHECK(v[0].text.starts_with("folded trace: 2 folded runs hold 40 of the 50 nodes, so the DAG's span is only bounded "
                                "from above (T1/Tinf >= 3.00)"));
}

TEST_CASE("verdicts: nothing limiting is balanced or no single limit, by the work share", "[analysis][verdicts]") {
    rule_inputs in;
    const an::verdict_inputs inputs{in.scope, in.meta, in.breakdown, in.stats, in.dag, in.queueing};
    CHECK(an::nothing_limiting(inputs).rule == "balanced");
    CHECK(an::nothing_limiting(inputs).text == "balanced: workers worked 100 % of their time");
    in.spend(an::time_category::idle, 0.3);
    in.pipeline_dag(300 * us, 100 * us, 100 * us, 8);
    in.dag.observed_speedup = 1.4;
    in.dag.speedup_bound = 2;
    const an::verdict v = an::nothing_limiting(inputs);
    CHECK(v.rule == "no_single_limit");
    CHECK_FALSE(v.limiting);
    CHECK(v.text == "no single limit: workers worked 70 % of their time; observed speedup 1.40 against a bound of 2.00");
}

TEST_CASE("verdicts: cautions first, then limits by severity, and no balanced verdict next to a limit",
          "[analysis][verdicts]") {
    rule_inputs in;
    in.stats.events_lost = 1;
    in.spend(an::time_category::parked, 0.3);
    in.stats.stages = {serial_stage(0, "", 0.8)};
    const auto v = an::compute_verdicts(in.scope, in.meta, in.breakdown, in.stats, in.dag, in.queueing);
    std::vector<std::string> rules;
    for (const auto& x : v) rules.push_back(x.rule);
    CHECK(rules == std::vector<std::string>{"events_lost", "serial_bottleneck", "parked_heavy"});
}

TEST_CASE("a stage graph's peak footprint is the peak of its footprint bytes counter", "[analysis][stages]") {
    // ray-1 under gramps, recorded with the footprint counters (traces/README.md): packets and bytes.
    const tr::trace_model m = tr::load_trace_file(std::string(PIPESCOPE_SOURCE_DIR) + "/traces/ray-1-gramps.pftrace");
    REQUIRE(!m.runs.empty());
    const an::run_report rep = an::analyze(an::scope_of(m, 0));
    std::optional<double> bytes, packets;
    for (const auto& c : rep.stats.counters) {
        if (c.name == "footprint bytes") bytes = c.peak;
        if (c.name == "footprint packets") packets = c.peak;
    }
    REQUIRE(bytes);
    REQUIRE(packets);
    REQUIRE(rep.stats.peak_footprint);
    CHECK(*rep.stats.peak_footprint == *bytes);
    CHECK(*bytes > *packets);   // a packet is more than a byte: the two are told apart
}

// The stage numbers of the metadata's stage names, read by the one reader the analysis and the viewer
// share (analysis::stage_number_of_name): a plain number, a power, a sum, a "j ≥ N" range; a formula
// naming many stages (x264's rows) keeps the index the metadata gives it, not its leading term.
TEST_CASE("metadata: stage names give their stage numbers, a formula keeps its index", "[analysis][metadata]") {
    tr::trace_model m;
    m.strings = {""};
    tr::track process;
    process.kind = tr::track_kind::process;
    m.tracks.push_back(process);
    tr::run r;
    r.track = 0;
    r.stages = {{0, "stage 0 \xC2\xB7 read", "serial"},
                {5, "stage 1 + w\xC2\xB7i + r \xC2\xB7 encode row r", "stage_wait"},
                {6, "stage 2^40 + 1 \xC2\xB7 write", "serial"},
                {7, "stage j \xE2\x89\xA5 4 \xC2\xB7 add bit block j", "stage_wait"}};
    m.runs.push_back(r);
    tr::type_slices(m);
    const an::run_meta meta = an::read_meta(an::scope_of(m, 0));
    REQUIRE(meta.stages.size() == 4);
    CHECK(meta.stages[0].index == 0);
    CHECK(meta.stages[1].index == 5);   // the formula's leading 1 is not the stage it describes
    CHECK(meta.stages[2].index == (std::uint64_t{1} << 40) + 1);
    CHECK(meta.stages[3].index == 4);
    CHECK(meta.stages[3].all_from);
    CHECK_FALSE(meta.stages[2].all_from);
    CHECK(an::is_serial_kind(meta.stages[1].kind));
    CHECK_FALSE(an::is_serial_kind("parallel"));
}
