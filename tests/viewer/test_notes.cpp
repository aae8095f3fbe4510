// What the viewer says instead of showing nothing or a bare contradiction (issue 22, item 9): a
// stage-graph box clicked before its stage started, a speedup above its bound, a file without runs.
#include <catch2/catch.hpp>

#include <model/document.hpp>
#include <model/speedup_note.hpp>
#include <model/stage_graph.hpp>

using namespace pipescope::viewer;

TEST_CASE("a stage clicked before it started says when it starts", "[viewer][notes]") {
    run_graph g;
    g.node_starts = {{1000, 2000}, {5000}, {}};
    g.nodes_by_start = {{0, 1}, {2}, {}};
    CHECK(nothing_started_note(g, 0, 1500, 0, "stage 0").empty());   // a node to select
    CHECK(nothing_started_note(g, 1, 5000, 0, "stage 1").empty());   // started exactly at the cursor
    CHECK(
        nothing_started_note(g, 1, 3000, 1000, "stage 1") ==
        "stage 1 has not started at the cursor (2 \xC2\xB5s): its first node starts at 4 \xC2\xB5s; move the cursor past it to select one");
    CHECK(nothing_started_note(g, 2, 3000, 0, "stage 2 \xC2\xB7 sink") ==
          "stage 2 \xC2\xB7 sink ran no node in this run: nothing to select");
    CHECK(nothing_started_note(g, 7, 3000, 0, "stage 7") == "stage 7 ran no node in this run: nothing to select");
}

TEST_CASE("an observed speedup above its bound is explained in words", "[viewer][notes]") {
    CHECK(speedup_above_bound_note({.observed = 1.9, .bound = 2.0, .from_reference = true}).empty());
    CHECK(speedup_above_bound_note({.observed = 2.01, .bound = 2.0, .from_reference = true}).empty());   // within 1 %
    CHECK(speedup_above_bound_note({.observed = 2.42, .bound = 0, .from_reference = true}).empty());     // no bound
    const std::string ref = speedup_above_bound_note({.observed = 2.42, .bound = 2.0, .from_reference = true});
    CHECK(ref.starts_with("The observed speedup 2.42 is above the bound 2.00. The bound limits this run's own work T1"));
    CHECK(ref.find("The serial program took 1.21\xC3\x97 longer than the work this run did") != std::string::npos);
    const std::string folded =
        speedup_above_bound_note({.observed = 2.42, .bound = 2.0, .from_reference = true, .approximate = true});
    CHECK(folded.find("This trace is folded") != std::string::npos);
    const std::string own = speedup_above_bound_note({.observed = 2.42, .bound = 2.0});
    CHECK(own.find("overlap in time on one worker") != std::string::npos);
}

TEST_CASE("a trace without events says there are no runs in it", "[viewer][notes]") {
    pipescope::trace::trace_model m;
    m.packets = 3;
    const auto f = prepare_file(std::move(m), "descriptors-only.pftrace");
    CHECK(no_runs_note(*f) == "descriptors-only.pftrace: no runs in this file (3 packets, no track event)");
    pipescope::trace::trace_model with_events;
    with_events.events = 1;
    CHECK(no_runs_note(*prepare_file(std::move(with_events), "x.pftrace")).empty());
}
