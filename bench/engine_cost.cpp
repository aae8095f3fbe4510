// bench_engine_cost — the runtime's own cost per step (see engine_cost.hpp). Nothing here judges
// the numbers; bench/results.md keeps them next to the targets they are measured against.
#include "engine_cost.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
// "gramps,danbi" -> {"gramps", "danbi"}; the graph section rejects names it does not know.
std::vector<std::string> split_names(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');) {
        if (item.empty()) throw std::invalid_argument("empty name in '" + text + "'");
        out.push_back(item);
    }
    return out;
}
}   // namespace

int main(int argc, char** argv) {
    bench::engine_cost_options o;
    bool graph = true, pipeline = true;
    const bool go = bench::parse_command_line(
        argc, argv,
        "The runtime's cost per step: stage-graph instances, pipe_while stage boundaries, bind-to-stage hand-offs.",
        {
            {"--runs", "measured runs per point (default 5)",
             [&](const std::string& v) { o.runs = static_cast<unsigned>(bench::parse_positive(v)); }},
            {"--workers", "comma-separated worker counts (default 1,2)",
             [&](const std::string& v) { o.workers = bench::parse_list(v); }},
            {"--quick", "smaller inputs (a smoke check, not a measurement)", [&](const std::string&) { o.quick = true; },
             false},
            {"--policies",
             "graph section: comma-separated graph policies (default: graph-serial,gramps,task-stealing,danbi)",
             [&](const std::string& v) { o.policies = split_names(v); }},
            {"--packets", "graph section: comma-separated elements per packet (default 1,16,64)",
             [&](const std::string& v) { o.packets = bench::parse_list(v); }},
            {"--only", "graph | pipeline: one section only",
             [&](const std::string& v) {
                 if (v != "graph" && v != "pipeline")
                     throw std::invalid_argument("expected graph or pipeline, got '" + v + "'");
                 graph = v == "graph";
                 pipeline = v == "pipeline";
             }},
        });
    if (!go) return 0;
    fmt::print("bench_engine_cost: the runtime's own cost per step\n");
    bench::print_machine();
    fmt::print("{} measured runs per point\n", o.runs);
    bench::print_conditions("at start", 2);
    try {
        if (graph) bench::print_graph_costs(o);
        if (pipeline) bench::print_pipeline_costs(o);
    } catch (const std::exception& e) {   // e.g. an unknown --policies name, refused by graph::run
        fmt::print(stderr, "bench_engine_cost: {}\n", e.what());
        return 2;
    }
    bench::print_conditions("at end", 2);
    return 0;
}
