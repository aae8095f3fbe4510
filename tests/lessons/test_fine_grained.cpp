// Lesson "fine-grained" (seed 001 §9, §10, Fig. 14): coarsening lowers the work per bit, dependency
// folding removes most loads of the predecessor's stage counter, lazy enabling takes check-right off
// every node boundary. The synchronization counts are read (replayed) from the traces' DAGs; the
// work per bit is a ratio of two runs of this lesson, asserted with a wide margin. The one finding
// that needs adjacent iterations on different cores (T1 without / with folding) is not asserted.
// On 16 virtual workers: T1/T16 of pipe-fib and pipe-fib-256, ratios of virtual makespans.
#include "lesson_test.hpp"

using lesson_test::finding;

TEST_CASE("lesson fine-grained: coarsening, folding and lazy enabling cut the synchronization", "[lesson][fine-grained]") {
    const auto r = lesson_test::run("fine-grained");

    {   // the story goes look, paper, this run, try next
        REQUIRE(r.told.steps.size() >= 4);
        CHECK(r.told.steps.front().title == "What to look at");
        CHECK(r.told.steps.front().move.view == "timeline");
        CHECK(r.told.steps.front().move.range.has_value());
        CHECK(r.told.steps.back().title == "Try next");
    }

    {   // the runs are what the lesson says: one node per bit, and the optimizations switched as asked
        const auto& fine = r.data.run("pipe-fib").report;
        const auto& coarse = r.data.run("pipe-fib-256").report;
        REQUIRE(fine.dag.available);
        REQUIRE(coarse.dag.available);
        CHECK(fine.meta.params.at("n") == "1500");
        CHECK(r.data.run("pipe-fib-no-folding").report.meta.params.at("folding") == "off");
        CHECK(r.data.run("pipe-fib-eager").report.meta.params.at("lazy") == "off");
        // pipe-fib-256 runs 8× the n, yet has far fewer nodes per iteration
        CHECK(static_cast<double>(coarse.dag.nodes) / static_cast<double>(coarse.dag.iterations) <
              static_cast<double>(fine.dag.nodes) / static_cast<double>(fine.dag.iterations));
    }

    {   // coarsening: less work per bit (measured ~10×), and lower serial overhead
        CHECK(finding(r, "work_per_bit_fine").value > 0);
        CHECK(finding(r, "work_per_bit_coarse").value > 0);
        CHECK(finding(r, "coarsening_gain").value > 2.0);
        CHECK(finding(r, "coarsening_gain").holds);
        CHECK(finding(r, "serial_overhead_fine").value > 2 * finding(r, "serial_overhead_coarse").value);
    }

    {   // dependency folding: most loads of i-1's counter disappear (structural: at most one load per
        // boundary without folding, and with it the cache covers every stage i-1 had already passed)
        const double ratio = finding(r, "folding_read_ratio").value;
        CHECK(ratio > 10);
        CHECK(finding(r, "folding_read_ratio").holds);
        CHECK(finding(r, "coarse_folding_read_ratio").value >= 1.0);
        CHECK(finding(r, "bits_per_read_folded").value > 1.0);
    }

    {   // lazy enabling: check-right once per iteration instead of once per node
        CHECK(finding(r, "check_right_ratio").value > 10);
        CHECK(finding(r, "check_right_ratio").holds);
    }

    {   // the folded trace: pipe-fib at the workload's own size in folded runs, every node counted
        const auto& folded = r.data.run("pipe-fib-folded-trace");
        CHECK(folded.report.meta.params.at("n") == "20000");
        const auto& dag = folded.model->runs[folded.report.run].dag;
        CHECK(dag.folded_blocks > 0);
        CHECK(dag.node_count > 10 * dag.nodes.size());   // 139 M nodes in about 20 k slices here
        CHECK(dag.node_count == folded.report.dag.nodes);
        CHECK(finding(r, "folded_nodes_per_slice").value >= 10);
        CHECK(finding(r, "folded_nodes_per_slice").holds);
    }

    {   // on 16 virtual workers (docs/virtual.md): T1/T16 from the virtual makespans, Fig. 14's
        // scalability. Measured on a quiet machine: pipe-fib 3.8-4.9x, pipe-fib-256 at n = 24 000
        // 2.0-2.3x (bounded by its DAG, parallelism 20-25); on a loaded one 7.8-10.9x and 3.4-4.5x (a
        // node's measured CPU time grows with the load, the scheduler's priced steps do not). So only
        // that 16 virtual workers beat one is asserted, and that a finding says why when it does not hold.
        const auto& v16 = r.data.run("pipe-fib-virtual-16");
        CHECK(v16.spec.virtual_time);
        CHECK(v16.spec.workers == 16);
        CHECK(r.data.run("pipe-fib-256-virtual-1").spec.workers == 1);
        CHECK(v16.report.meta.params.at("n") == "1500");
        CHECK(r.data.run("pipe-fib-256-virtual-16").report.meta.params.at("n") == "24000");
        const auto& fine = finding(r, "virtual_scalability_fine");
        CHECK(fine.value > 1.5);
        CHECK(fine.value <= 16.5);
        if (!fine.holds) CHECK_FALSE(fine.why_not.empty());
        const auto& coarse = finding(r, "virtual_scalability_coarse");
        CHECK(coarse.value > 1.5);
        CHECK(coarse.value <= 16.5);
        if (!coarse.holds) CHECK(coarse.why_not.find("parallelism") != std::string::npos);
        bool step = false;
        for (const auto& s : r.told.steps)
            if (s.title == "On 16 virtual workers") step = s.text.find("virtual 16 cores") != std::string::npos;
        CHECK(step);
    }

    {   // measured but not asserted: T1 without / with folding depends on whether iterations overlapped
        CHECK(finding(r, "work_ratio_folding").value > 0);
        if (!finding(r, "work_ratio_folding").holds) CHECK(!finding(r, "work_ratio_folding").why_not.empty());
    }

    for (const auto& f : r.told.findings) {
        INFO(f.name);
        CHECK((f.paper.find("Fig. 14") != std::string::npos || f.paper.find("§") != std::string::npos));
        CHECK(!f.shown.empty());
    }
}
