// The executions of each stage of a run, collected slice by slice and summarized stage by stage
// (stages.cpp). A folded slice over stages [first, last] (scope.hpp, node_extent) is one range
// entry, not one entry per node: a folded pipe-fib trace holds 10^8 nodes in 10^4 slices, and
// its stages are summarized by a sweep over the stage numbers that keeps the ranges covering the
// current stage in an order-statistics tree (a Fenwick tree over the distinct durations). So the
// cost is O((slices + stages) log slices), whatever the nodes, and the summary is the one a list
// of every node's duration would give (count, total, mean, nearest-rank p50 / p95, max).
#pragma once

#include <pipescope/analysis/stages.hpp>

#include <cstdint>
#include <vector>

namespace pipescope::analysis::detail {

struct run_place {
    std::uint64_t begin = 0, end = 0;   // the slice
    int worker = -1;
    long long iteration = -1;
    std::uint32_t track = tm::no_index;
};

class stage_runs {
public:
    // `count` executions of `stage`, `duration` ns each (shares of a folded slice when `share`).
    void add(std::uint64_t stage, double duration, std::uint64_t count, bool share, const run_place& where);
    // One execution of each stage of [first, last], `duration` ns each: the shares of a folded slice.
    void add_range(std::uint64_t first, std::uint64_t last, double duration, const run_place& where);

    struct result {
        std::uint64_t stage = 0;
        service_stats service;      // total rounded to whole ns, percentiles and max too
        std::uint64_t shares = 0;   // executions that are shares of folded slices
        run_place longest;          // the slice of its longest execution (the first added among equals)
    };
    // Every stage with an execution, ascending.
    std::vector<result> summarize() const;

private:
    class sweep;   // summarize's sweep over the stage numbers (stage_runs.cpp)
    struct single {
        std::uint64_t stage;
        double duration;
        std::uint64_t count;
        bool share;
        std::uint32_t place;
    };
    struct range {
        std::uint64_t first, last;
        double duration;
        std::uint32_t place;
    };
    std::vector<single> singles_;
    std::vector<range> ranges_;
    std::vector<run_place> places_;
};

}   // namespace pipescope::analysis::detail
