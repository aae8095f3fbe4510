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
#include <string>
#include <utility>
#include <vector>

namespace pipescope::analysis {

// retire is never on a path (retirement is the chain R_i, see above); kept for the edge kinds' names.
enum class path_edge : std::uint8_t { start, stage, cross, retire, throttle, control };
const char* to_string(path_edge e);

struct path_node {
    std::uint32_t node = 0;   // index into pipeline_dag::nodes
    std::uint64_t iteration = 0, stage = 0;
    std::uint64_t last_stage = 0;       // a folded block: its last stage (== stage for a node)
    std::uint64_t nodes = 1;            // a folded block: the nodes it holds
    std::uint64_t begin = 0, end = 0;   // absolute ns
    int worker = -1;
    path_edge via = path_edge::start;   // the edge that leads into it on the path
};

struct span_result {
    std::uint64_t span = 0;                 // ns: weight of the longest path
    std::vector<path_node> critical_path;   // from its first node to its last
    std::uint64_t throttle_edges_on_path = 0;
};

// Folded traces (trace_model.hpp, pipeline_dag): the DAG's nodes are blocks, a folded block
// holding a run of one iteration's consecutive nodes. T1 over blocks is exact (a block's duration is
// its nodes' work, the stage boundaries between them included); the longest path over blocks is an
// upper bound of the span over nodes (a block starts only once everything any of its nodes waits
// for is done), so T∞ is an upper bound and T1/T∞ a lower bound, and the critical path's time per
// stage gives each node of a block an equal share.
struct dag_bounds {
    bool available = false;            // the run has a pipeline DAG with nodes
    std::uint64_t nodes = 0;           // nodes, those inside folded blocks included
    std::uint64_t blocks = 0;          // DAG nodes: nodes and folded blocks (== nodes unless folded)
    std::uint64_t folded_blocks = 0;   // blocks holding more than one node
    std::uint64_t edges = 0, iterations = 0, K = 0;
    bool approximate = false;             // folded blocks: the span is an upper bound (above)
    std::string approximate_reason;       // why, in words ("" when exact)
    std::uint64_t work = 0;               // T1 = sum of node (block) durations (ns)
    span_result with_throttle;            // T∞ over all edges
    span_result without_throttle;         // T∞ of the unthrottled DAG (seed 001 §11)
    double parallelism = 0;               // T1 / T∞ (with throttling edges)
    double parallelism_unthrottled = 0;   // T1 / T∞ without them
    unsigned workers = 0;                 // P
    double speedup_bound = 0;             // min(P, T1/T∞)
    std::uint64_t makespan = 0;
    // reference / makespan if recorded (and the run is real: a virtual run's is always T1 /
    // makespan, report.cpp), else T1 / makespan, never above the bound then (makespan >= span).
    double observed_speedup = 0;
    bool observed_from_reference = false;
};

// Time of a critical path per stage, most first (ties: lower stage first); a folded block's time is
// shared equally among its stages.
std::vector<std::pair<std::uint64_t, std::uint64_t>> path_time_by_stage(const span_result& path);
// Nodes on a path (those inside its folded blocks included).
std::uint64_t path_nodes(const span_result& path);

// Longest path of dag with node weight = duration; skips throttling edges unless with_throttle.
span_result longest_path(const tm::pipeline_dag& dag, bool with_throttle);

dag_bounds compute_dag_bounds(const run_scope& scope, unsigned workers, std::optional<double> reference_seconds);

}   // namespace pipescope::analysis
