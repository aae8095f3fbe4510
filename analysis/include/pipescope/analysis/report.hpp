// Everything the analysis says about one run, gathered: the time breakdown, per-stage statistics,
// DAG bounds, queueing bounds and verdicts; as JSON (stable field names, docs/analysis.md "JSON
// schema") and as text (`pipescope stats`).
//
//   for (const auto& scope : pipescope::analysis::scopes_of(model)) {
//       const auto rep = pipescope::analysis::analyze(scope);
//       std::cout << pipescope::analysis::to_text(rep);
//   }
#pragma once

#include <pipescope/analysis/breakdown.hpp>
#include <pipescope/analysis/dag_bounds.hpp>
#include <pipescope/analysis/graph_queues.hpp>
#include <pipescope/analysis/metadata.hpp>
#include <pipescope/analysis/queueing.hpp>
#include <pipescope/analysis/stages.hpp>
#include <pipescope/analysis/tasks.hpp>
#include <pipescope/analysis/verdicts.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace pipescope::analysis {

inline constexpr const char* report_format = "pipescope-stats/1";

struct run_report {
    std::string title;
    std::uint32_t run = tm::no_index;   // index into the model's runs (no_index: whole foreign trace)
    std::uint64_t start = 0, end = 0;   // absolute ns
    run_meta meta;
    run_breakdown breakdown;
    run_stats stats;
    dag_bounds dag;
    queueing_bounds queueing;
    graph_report graph;   // stage graphs; their runs have no pipeline DAG or queueing model
    task_stats tasks;     // fork-join tasks (a tasks run: instead of the DAG, queueing and stage table)
    std::vector<verdict> verdicts;
    std::uint64_t makespan() const { return end > start ? end - start : 0; }
    bool is_tasks() const { return meta.program_kind == vocab::tasks_program; }
};

run_report analyze(const run_scope& scope);
// Every run of the model (or the whole trace if it has no pipescope runs).
std::vector<run_report> analyze_all(const tm::trace_model& m);

nlohmann::json to_json(const run_report& r);
// The text `pipescope stats` prints. max_path: critical-path nodes listed (the rest are summarized).
std::string to_text(const run_report& r, std::size_t max_path = 12);

}   // namespace pipescope::analysis
