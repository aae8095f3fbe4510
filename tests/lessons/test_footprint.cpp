// The footprint lesson (lessons/src/footprint.cpp, seed 004 §III-A, §IV, Table III): ray-1 under
// GRAMPS, breadth-first and task-stealing. Asserted from the traces (byte counters and instants, no
// timing): breadth-first's peak and mean footprints are at least 10× GRAMPS' (measured ~1000× and
// ~2500× at P = 2, small), GRAMPS' bounded queues never exceed their capacity, and backpressure
// stops GRAMPS' stages (thousands of times) but never breadth-first's. Task-stealing's footprint is
// reported against the paper's, not asserted (it depends on who steals what on a loaded machine).
#include "lesson_test.hpp"

TEST_CASE("footprint: breadth-first holds a whole stage's output, GRAMPS' backpressure bounds it", "[lesson]") {
    const auto r = lesson_test::run("footprint");
    REQUIRE(r.data.runs.size() == 3);
    CHECK(r.data.runs[0].spec.policy == "gramps");
    CHECK(r.data.runs[1].spec.policy == "breadth-first");

    const auto& peak = lesson_test::finding(r, "peak_ratio");
    CHECK(peak.value >= 10);
    CHECK(peak.holds);
    const auto& mean = lesson_test::finding(r, "mean_ratio");
    CHECK(mean.value >= 10);
    CHECK(mean.holds);

    const auto& fill = lesson_test::finding(r, "gramps_peak_fill");
    CHECK(fill.value > 0);
    CHECK(fill.value <= 1.0);
    CHECK(fill.holds);
    // The same from the report directly: no bounded queue of the GRAMPS run went over its capacity.
    for (const auto& q : r.data.run("gramps").report.graph.queues) CHECK_FALSE(q.over_capacity);

    const auto& backpressure = lesson_test::finding(r, "backpressure_events");
    CHECK(backpressure.value > 0);
    CHECK(backpressure.holds);
    CHECK(r.data.run("breadth-first").report.graph.blocked_full == 0);

    const auto& ts = lesson_test::finding(r, "task_stealing_peak_ratio");
    CHECK(ts.value > 0);
    if (!ts.holds) CHECK_FALSE(ts.why_not.empty());

    REQUIRE(r.told.steps.size() >= 4);
    CHECK(r.told.steps[0].title == "What to look at");
    CHECK(r.told.steps[0].move.view == "graph");
    REQUIRE(r.told.steps[0].move.cursor.has_value());
    CHECK(*r.told.steps[0].move.cursor >= 0.0);
    CHECK(*r.told.steps[0].move.cursor <= 1.0);
    CHECK(r.told.steps[1].title == "What the paper found");
    CHECK(r.told.steps[2].title == "What this run shows");
    CHECK(r.told.steps.back().title == "Try next");
}
