// Work, span and parallelism of a run's recorded pipeline DAG (seed 001 §1, §11), node weight =
// the node's measured duration; with and without the throttling edges; the speedup bound
// min(P, T1/T∞) against the observed speedup; the critical path (a longest path, computed in
// topological order in O(V + E)).
//
// Retirement: iteration i retires (a zero-work implicit final stage) once its last node is done and
// i-1 has retired; throttling edges leave from that retirement (seed 001 §1), so the trace model's
// retire edges are used as this chain, not as edges into the last node.
// Edges: the DAG's stage, cross and throttle edges (trace_model.hpp), plus one implicit
// edge per iteration, first node of i-1 -> first node of i, when both are stage 0: stage 0 is
// always serial (the pipe_while control runs it in iteration order; seed 001 §1), which the trace
// model leaves implicit.
#pragma once

#include <pipescope/analysis/scope.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace pipescope::analysis {

// retire is never on a path (retirement is the chain R_i, see above); kept for the edge kinds' names.
enum class path_edge : std::uint8_t { start, stage, cross, retire, throttle, control };
const char* to_string(path_edge e);

struct path_node {
    std::uint32_t node = 0;              // index into pipeline_dag::nodes
    std::uint64_t iteration = 0, stage = 0;
    std::uint64_t begin = 0, end = 0;    // absolute ns
    int worker = -1;
    path_edge via = path_edge::start;    // the edge that leads into it on the path
};

struct span_result {
    std::uint64_t span = 0;              // ns: weight of the longest path
    std::vector<path_node> critical_path;   // from its first node to its last
    std::uint64_t throttle_edges_on_path = 0;
};

struct dag_bounds {
    bool available = false;              // the run has a pipeline DAG with nodes
    std::uint64_t nodes = 0, edges = 0, iterations = 0, K = 0;
    std::uint64_t work = 0;              // T1 = sum of node durations (ns)
    span_result with_throttle;           // T∞ over all edges
    span_result without_throttle;        // T∞ of the unthrottled DAG (seed 001 §11)
    double parallelism = 0;              // T1 / T∞ (with throttling edges)
    double parallelism_unthrottled = 0;  // T1 / T∞ without them
    unsigned workers = 0;                // P
    double speedup_bound = 0;            // min(P, T1/T∞)
    std::uint64_t makespan = 0;
    double observed_speedup = 0;         // reference / makespan if recorded, else T1 / makespan
    bool observed_from_reference = false;
};

// Longest path of dag with node weight = duration; skips throttling edges unless with_throttle.
span_result longest_path(const tm::pipeline_dag& dag, bool with_throttle);

dag_bounds compute_dag_bounds(const run_scope& scope, unsigned workers, std::optional<double> reference_seconds);

}  // namespace pipescope::analysis
