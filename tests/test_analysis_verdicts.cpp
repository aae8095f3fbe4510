// analysis/stages.hpp, queueing.hpp, verdicts.hpp on hand-built runs with known answers: service
// time percentiles, busy fractions, steals per pair, queueing bounds; a run with one saturated
// serial stage gets that verdict, a balanced run does not.
#include <pipescope/analysis/report.hpp>
#include <pipescope/trace/trace_model.hpp>

#include "support/pipescope_run_builder.hpp"

#include <catch2/catch.hpp>

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
    s += R"(,"stages":[{"index":0,"name":"stage 0 · load","kind":"serial"},)"
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
    r.describe("sp · piper · P=2",
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

}  // namespace

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
    CHECK(q.lambda_max == Approx(1e5));                  // 1 / 10 us
    CHECK(q.work_per_item == Approx(13e-6));             // 1 + 2 + 10 us
    CHECK(q.bound_element == Approx(1e5));               // min(2 / 13 us, 1 / 10 us)
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
    r.describe("p · bind-to-stage · P=2",
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
