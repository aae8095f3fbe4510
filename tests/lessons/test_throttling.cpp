// Lesson "throttling" (seed 001 §1, §11): K = 1 serializes the pipeline DAG, a larger K brings the
// span back toward the unthrottled one. Asserted from the traces' DAG bounds and breakdowns with
// margins for a loaded 2-core machine: the structural facts exactly (K = 1 is one chain, a critical
// path holds at most n/K throttling edges), the measured ones as orderings with room to spare.
#include "lesson_test.hpp"

using lesson_test::finding;

TEST_CASE("lesson throttling: K = 1 starves the pipeline, 4P brings the span back", "[lesson][throttling]") {
    const auto r = lesson_test::run("throttling");
    const unsigned p = 2;

    {   // the story goes look, paper, this run, try next
        REQUIRE(r.told.steps.size() >= 4);
        CHECK(r.told.steps.front().title == "What to look at");
        CHECK(r.told.steps.back().title == "Try next");
    }

    {   // ferret at K = 1: the DAG is one chain through every throttling edge
        const auto& dag = r.data.run("ferret-K1").report.dag;
        REQUIRE(dag.available);
        CHECK(dag.K == 1);
        CHECK(finding(r, "parallelism_k1").value < 1.1);
        CHECK(finding(r, "parallelism_k1").holds);
        CHECK(finding(r, "throttle_edges_k1").value + 1 >= static_cast<double>(dag.iterations));
        CHECK(finding(r, "throttle_edges_k1").holds);
        // Without the throttling edges the same DAG has far more parallelism (measured 11-15).
        CHECK(finding(r, "unthrottled_parallelism_k1").value > 2.0);
    }

    {   // ferret: the span ratio falls from K = 1 to K = 4P, and so do the edges on the path
        const double r1 = finding(r, "span_ratio_k1").value;
        const double r4 = finding(r, "span_ratio_k4p").value;
        CHECK(r1 > 2.0);
        CHECK(r4 >= 1.0);   // adding edges can only lengthen the longest path
        CHECK(r4 < r1);
        const auto& dag4 = r.data.run("ferret-K4P").report.dag;
        CHECK(dag4.K == 4 * p);
        const double e4 = finding(r, "throttle_edges_k4p").value;
        CHECK(e4 <= static_cast<double>(dag4.iterations) / dag4.K + 1);   // q < n/K (§11)
        CHECK(e4 * 2 < finding(r, "throttle_edges_k1").value);
        const auto& dag10 = r.data.run("ferret-K10P").report.dag;
        CHECK(dag10.K == 10 * p);
        CHECK(finding(r, "throttle_edges_k10p").value <= static_cast<double>(dag10.iterations) / dag10.K + 1);
    }

    {   // ferret: at K = 1 one worker of two has nothing to do, at 4P both work
        const double idle1 = finding(r, "idle_k1").value;
        const double idle4 = finding(r, "idle_k4p").value;
        CHECK(idle1 > 0.3);
        CHECK(finding(r, "idle_k1").holds);
        CHECK(idle1 > idle4 + 0.1);
    }

    {   // pipe-fib: K = 1 is a chain, and at 4P the path still holds at most n/K throttling edges
        CHECK(finding(r, "pipefib_parallelism_k1").value < 1.1);
        CHECK(finding(r, "pipefib_parallelism_k1").holds);
        const auto& dag4 = r.data.run("pipe-fib-K4P").report.dag;
        REQUIRE(dag4.available);
        CHECK(dag4.K == 4 * p);
        const double e4 = finding(r, "pipefib_throttle_edges_k4p").value;
        CHECK(e4 <= static_cast<double>(dag4.iterations) / dag4.K + 1);
        CHECK(e4 > 0);   // W ≫ K·S: throttling edges stay on pipe-fib's critical path
        // W ≫ K·S: the parallelism follows K (measured 1.97-1.98 at K = 2, 6.9-7.5 at K = 8, with
        // nodes counted at most 20 µs so that a preempted node cannot decide it).
        CHECK(finding(r, "pipefib_parallelism_k2").value > 1.5);
        CHECK(finding(r, "pipefib_parallelism_k4p").value > 3.0);
        CHECK(finding(r, "pipefib_parallelism_k4p").value > finding(r, "pipefib_parallelism_k2").value);
    }

    {   // every finding says what the paper found
        for (const auto& f : r.told.findings) {
            INFO(f.name);
            CHECK(!f.paper.empty());
            CHECK(!f.shown.empty());
            CHECK(f.paper.find("§") != std::string::npos);
        }
    }
}
