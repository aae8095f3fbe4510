// The imbalance lesson (lessons/src/imbalance.cpp, seed 000 §2.1, §4.1, Tables 1–2): ferret with a
// thread bound to each stage leaves most threads waiting; work stealing keeps its workers busy.
// Only waiting shares are asserted as `holds` (a preempted thread still counts as working, so a
// loaded machine cannot fake them); the speedup between the runs is not asserted. On 6 virtual
// cores, where no load reaches the runs, the efficiencies are.
#include "lesson_test.hpp"

#include <algorithm>

TEST_CASE("imbalance: bind-to-stage threads wait, work-stealing workers do not", "[lesson]") {
    const auto r = lesson_test::run("imbalance");
    REQUIRE(r.data.runs.size() == 5);

    const auto& bts_wait = lesson_test::finding(r, "bts_waiting_share");
    const auto& piper_wait = lesson_test::finding(r, "piper_waiting_share");
    const auto& tbb_wait = lesson_test::finding(r, "tbb_waiting_share");
    // Six threads, one carrying most of the work: the other five mostly wait (measured ~75 %).
    CHECK(bts_wait.value >= 0.40);
    CHECK(bts_wait.holds);
    // Two workers stealing: a few percent at the start and the end of the run (measured ~1-5 %).
    CHECK(piper_wait.value <= 0.20);
    CHECK(piper_wait.holds);
    CHECK(tbb_wait.value <= 0.20);
    CHECK(tbb_wait.holds);
    CHECK(bts_wait.value >= 2 * std::max(piper_wait.value, tbb_wait.value));

    const auto& bts_spread = lesson_test::finding(r, "bts_busy_spread");
    const auto& piper_spread = lesson_test::finding(r, "piper_busy_spread");
    CHECK(bts_spread.value >= 0.50);
    CHECK(bts_spread.holds);
    CHECK(piper_spread.value <= 0.20);
    CHECK(piper_spread.holds);

    // One parallel stage (segment on this input) carries most of the work per item.
    const auto& bottleneck = lesson_test::finding(r, "bottleneck_stage");
    CHECK(bottleneck.value >= 1);
    CHECK(bottleneck.value <= 4);
    CHECK(bottleneck.holds);

    // A ratio of two pipeline spans: on a loaded 2-core machine it ranged 0.78-1.7, so only that it
    // was measured (the waiting shares above carry the finding).
    const auto& speedup = lesson_test::finding(r, "speedup_ws_over_bts");
    CHECK(speedup.value > 0);
    if (!speedup.holds) CHECK_FALSE(speedup.why_not.empty());

    // On 6 virtual cores (no load there): one thread per stage keeps about a fifth of the cores busy,
    // as Table 1's 19.65 % (measured 21 %), while piper keeps most of them (measured 94 %).
    const auto& bts_virtual = lesson_test::finding(r, "bts_virtual_efficiency");
    const auto& piper_virtual = lesson_test::finding(r, "piper_virtual_efficiency");
    CHECK(bts_virtual.value > 0.10);
    CHECK(bts_virtual.value <= 0.35);
    CHECK(bts_virtual.holds);
    CHECK(piper_virtual.value >= 0.60);
    CHECK(piper_virtual.holds);
    CHECK(piper_virtual.value >= 2.5 * bts_virtual.value);

    // The story: look, the paper, this run, ..., try next; the numbers appear in "What this run shows".
    REQUIRE(r.told.steps.size() >= 4);
    CHECK(r.told.steps.front().title == "What to look at");
    CHECK(r.told.steps[1].title == "What the paper found");
    CHECK(r.told.steps[2].title == "What this run shows");
    CHECK(r.told.steps.back().title == "Try next");
    CHECK(r.told.steps[2].text.find(bts_wait.shown) != std::string::npos);
    const auto on_virtual = std::find_if(r.told.steps.begin(), r.told.steps.end(),
                                         [](const auto& s) { return s.title == "On 6 virtual cores"; });
    REQUIRE(on_virtual != r.told.steps.end());
    CHECK(on_virtual->text.find(bts_virtual.shown) != std::string::npos);
    CHECK(on_virtual->text.find(piper_virtual.shown) != std::string::npos);
}
