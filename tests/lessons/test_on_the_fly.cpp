// Lesson "on-the-fly" (seed 001 §3, §10): the x264-like encoder's recorded DAG has the shape its
// frame types imply, and tbb refuses the program with the reason. The counts are structural — the
// synthetic video at size small (seed 1) always gives the same frame types — so they are asserted
// exactly; only the parallelism, a ratio of measured durations, gets a margin.
#include "lesson_test.hpp"

using lesson_test::finding;

TEST_CASE("lesson on-the-fly: x264's DAG is shaped by its frame types, tbb refuses it", "[lesson][on-the-fly]") {
    const auto r = lesson_test::run("on-the-fly");

    REQUIRE(r.told.steps.size() >= 4);
    CHECK(r.told.steps.front().title == "What to look at");
    CHECK(r.told.steps.back().title == "Try next");
    CHECK(r.told.steps.front().move.view == "dag");
    CHECK(r.told.steps.front().move.select.has_value());   // a P-frame row with its cross edge

    // 30 frames, keyint 24, IBBP with a scene cut: 11 iterations, 9 of them P-frames, 2 I-frames.
    CHECK(finding(r, "iterations").value == 11);
    CHECK(finding(r, "iterations").holds);
    // I-frame without B-frames (11 nodes), P-frame with B-frames (12), I-frame with B-frames and its gate (13).
    CHECK(finding(r, "iteration_shapes").value == 3);
    CHECK(finding(r, "iteration_shapes").holds);
    // 9 P-frames × 9 rows + 1 I-frame gate + 10 in-order outputs; only P-frame rows wait.
    CHECK(finding(r, "cross_edges").value == 92);
    CHECK(finding(r, "cross_edges").holds);
    // Each P-frame's last row waits for row 9 of a 9-row frame: a null node.
    CHECK(finding(r, "null_node_edges").value == 9);
    CHECK(finding(r, "null_node_edges").holds);
    // w = 1: iteration i skips i stages, 1 + 2 + ... + 10.
    CHECK(finding(r, "skipped_stages").value == 55);
    CHECK(finding(r, "skipped_stages").holds);
    // Measured 4.4: the DAG has more parallelism than 2 workers use (margin for preempted nodes).
    CHECK(finding(r, "parallelism").value > 1.5);

    REQUIRE(r.data.refusals.size() == 1);
    const auto& refusal = r.data.refusals.front();
    CHECK(refusal.spec.policy == "tbb");
    CHECK_THAT(refusal.reason, Catch::Contains("on the fly"));
    CHECK(finding(r, "tbb_refuses").value == 1);
    CHECK(finding(r, "tbb_refuses").holds);
}
