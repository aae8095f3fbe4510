// What every stage-graph workload shares: options from the request, the program's description for
// the trace metadata, the refusal of pipe_while policies, and the run itself (serial reference,
// then the measured graph run).
#pragma once

#include <pipescope/graph/program.hpp>
#include <pipescope/workloads/workload.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::workloads {

// The graph run options of a request: policy, seed, cancel, and the graph policies' parameters
// present in `params` (any key one of graph::policies() declares; the policy rejects what it does
// not take, naming the key).
graph::run_options graph_options_from(const run_request& request, param_set& params);

// The graph policies' parameters as workload::parameters() lines.
std::string graph_policy_parameters();

// Why a stage graph cannot run under `policy` (a pipe_while policy), or "" for a graph policy.
std::string graph_only(const std::string& policy);

// How a graph workload's queues are sized (docs/virtual.md, "Queue capacities"). The program is
// built with the application's capacities (GRAMPS' rule); then every queue gets `capacity` if the
// user gave one, else what the request's policy's rule says (graph::capacity_rule: DANBI's
// max(P·T, C·T) with T the run's workers), and at least its floor.
struct queue_sizing {
    std::optional<std::size_t> capacity;   // --param capacity=N: every queue holds N packets
    // By queue id: the least the program needs there whatever N or the rule says (bounds that
    // depend on the input, e.g. mergesort's feedback queues); a queue past the end has none.
    std::vector<std::size_t> floors;
};

// --param capacity, 1 to `max` packets; nullopt when absent (the policy's rule decides).
std::optional<std::size_t> take_capacity(param_set& params, std::size_t max = 65536);

// The capacity parameter's line for workload::parameters(): the default rule of each graph policy
// (DANBI's per thread, the others the application's, `application` saying what that is here), then
// the workload's own bounds (`bounds`, e.g. "at least 3"); N is 1 to `max`.
std::string capacity_parameter(const std::string& application, const std::string& bounds, std::size_t max = 65536);

// The request's worker count (run_request::workers; 0: the hardware threads).
unsigned request_workers(const run_request& request);

// `g` with its queues sized for `policy` on `workers` workers (above). A capacity N smaller than
// what one of a queue's stages reserves at once is refused naming the queue and the stage
// (std::invalid_argument); a rule never gives less.
graph::program sized_program(const graph::program& g, const std::string& policy, unsigned workers,
                             const queue_sizing& sizing);

// The program's structure for the trace metadata: stages, queues (sized as the run sizes them, on
// request_workers(request), with their boundedness under the request's policy) and the counter
// tracks' names.
program_info describe_graph(const graph::program& g, const run_request& request, std::string shape,
                            const std::vector<std::string>& stage_notes = {}, const queue_sizing& sizing = {});

// Runs a graph workload: takes the graph policies' parameters from `params` and rejects whatever is
// left (naming `workload`; take the workload's own keys before calling), times `reference` (the serial
// computation), calls `reset` (if any), on_measured_start, runs `g` under the request's policy with
// its queues sized by `sizing` for s's workers (request.workers is set to them), and fills the
// report (seconds, graph stats: the capacities used). The caller compares outputs and writes
// description and matches_reference.
void run_graph_workload(const std::string& workload, scheduler& s, run_request& request, param_set& params,
                        const graph::program& g, const std::function<void()>& reference, const std::function<void()>& reset,
                        run_report& report, const queue_sizing& sizing = {});

}   // namespace pipescope::workloads
