// bench_engine_cost — the runtime's own cost per step (see engine_cost.hpp). Nothing here judges
// the numbers; bench/results.md keeps them next to the targets they are measured against.
#include "engine_cost.hpp"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    bench::engine_cost_options o;
    bool graph = true, pipeline = true;
    const bool go = bench::parse_command_line(
        argc, argv, "The runtime's cost per step: stage-graph instances, pipe_while stage boundaries, bind-to-stage hand-offs.",
        {
            {"--runs", "measured runs per point (default 5)", [&](const std::string& v) { o.runs = static_cast<unsigned>(bench::parse_positive(v)); }},
            {"--workers", "comma-separated worker counts (default 1,2)", [&](const std::string& v) { o.workers = bench::parse_list(v); }},
            {"--quick", "smaller inputs (a smoke check, not a measurement)", [&](const std::string&) { o.quick = true; }, false},
            {"--only", "graph | pipeline: one section only", [&](const std::string& v) {
                 if (v != "graph" && v != "pipeline") throw std::invalid_argument("expected graph or pipeline, got '" + v + "'");
                 graph = v == "graph";
                 pipeline = v == "pipeline";
             }},
        });
    if (!go) return 0;
    std::printf("bench_engine_cost: the runtime's own cost per step\n");
    bench::print_machine();
    std::printf("%u measured runs per point\n", o.runs);
    bench::print_conditions("at start", 2);
    if (graph) bench::print_graph_costs(o);
    if (pipeline) bench::print_pipeline_costs(o);
    bench::print_conditions("at end", 2);
    return 0;
}
