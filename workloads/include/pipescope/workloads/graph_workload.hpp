// What every stage-graph workload shares: options from the request, the program's description for
// the trace metadata, the refusal of pipe_while policies, and the run itself (serial reference,
// then the measured graph run).
#pragma once

#include <pipescope/graph/program.hpp>
#include <pipescope/workloads/workload.hpp>

#include <functional>
#include <string>

namespace pipescope::workloads {

// The graph run options of a request: policy, seed, cancel, and the graph policies' parameters
// present in `params` (any key one of graph::policies() declares; the policy rejects what it does
// not take, naming the key).
graph::run_options graph_options_from(const run_request& request, param_set& params);

// The graph policies' parameters as workload::parameters() lines.
std::string graph_policy_parameters();

// Why a stage graph cannot run under `policy` (a pipe_while policy), or "" for a graph policy.
std::string graph_only(const std::string& policy);

// The program's structure for the trace metadata: stages, queues (with boundedness under the
// request's policy) and the counter tracks' names.
program_info describe_graph(const graph::program& g, const run_request& request, std::string shape,
                            const std::vector<std::string>& stage_notes = {});

// Runs a graph workload: takes the graph policies' parameters from `params` and rejects whatever is
// left (naming `workload`; take the workload's own keys before calling), times `reference` (the serial
// computation), calls `reset` (if any), on_measured_start, runs `g` under the request's policy, and
// fills the report (seconds, graph stats). The caller compares outputs and writes description and
// matches_reference.
void run_graph_workload(const std::string& workload, scheduler& s, run_request& request, param_set& params,
                        const graph::program& g, const std::function<void()>& reference, const std::function<void()>& reset,
                        run_report& report);

}   // namespace pipescope::workloads
