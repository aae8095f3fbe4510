// bench_engine_cost: what the runtime itself costs per step, so that it stays visible (issue
// "No parallel run slower than serial"). Each section measures one kind of step against the same
// work done without the runtime and prints ns per step at P = 1 and P = 2, medians with spreads.
#pragma once

#include "bench_common.hpp"

#include <string>
#include <vector>

namespace bench {

struct engine_cost_options {
    unsigned runs = 5;                        // measured runs per point (median and spread)
    std::vector<unsigned> workers = {1, 2};   // P
    int settle_ms = 20;                       // pause between runs (idle workers go to sleep)
    bool quick = false;                       // smaller inputs, for a smoke check
    // Graph section only: which policies and packet sizes (elements per packet) to run; empty: all.
    std::vector<std::string> policies;
    std::vector<unsigned> packets;
};

// The stage-graph engine: ns per graph instance / serial-stage resumption (engine_cost_graph.cpp).
void print_graph_costs(const engine_cost_options& o);
// pipe_while: ns per stage boundary (node), and bind-to-stage: ns per queue hand-off
// (engine_cost_pipeline.cpp).
void print_pipeline_costs(const engine_cost_options& o);

}   // namespace bench
