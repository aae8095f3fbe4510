// Internal: the `static` graph policy's stage-to-worker partition (seed 004 §IV-C) and the costs it
// is computed from. Pure functions, so that the tests can check the partition the policy follows.
//
// The paper profiles the program under GRAMPS, then runs METIS "to compute a graph partitioning that
// minimizes the communication to computation ratio, while balancing the computational load in each
// partition". Our own partitioner stands in for METIS (docs/runtime.md "Graph policies: static"):
//
// 1. Balance: longest processing time first — stages by cost, largest first, each to the worker
//    with the least load so far (ties: fewer stages, then the lower index). Its maximum load M is
//    within 4/3 of the best possible (Graham's bound for LPT).
// 2. Communication: a refinement pass in the manner of Kernighan–Lin moves a stage to the worker of
//    one of its producers or consumers, or swaps it with a stage there, whenever that strictly
//    lowers the number of cut queue edges (producer and consumer on different workers) and keeps
//    every worker's load within M × (1 + imbalance). Passes repeat until no move helps.
//
// So it minimises the maximum load first, then the number of producer-consumer edges that cross
// workers, without letting the maximum load grow by more than `imbalance` (10 %) over step 1.
//
// The data-parallel split (place_stages): a stream scheduler splits a stateless, data-parallel
// filter across cores ("filter fusion and fission [15]", seed 004 §II-C), which is how Static gets
// near-linear speedups on the regular data-parallel applications (§V-C: pca, lr). A parallel
// (Shader) stage whose cost exceeds the mean load per worker, total / workers, is cut into
// k = ceil(cost / mean) equal pieces (at most one per worker), each piece an item of the partition
// above; a serial (Thread) stage is always one item. The stage then has one replica per piece, on
// that piece's worker, and replica r runs the instances i with i mod k == r: a fixed round-robin
// deal of the input packets, as a stream compiler's round-robin splitter feeds the fissed copies.
// A stage whose pieces all land on one worker (the refinement may join them to a neighbour's
// worker) is not split after all. With more workers than items some workers get none.
#pragma once

#include <pipescope/graph/program.hpp>

#include <string>
#include <vector>

namespace pipescope::graph::detail {

// One producer -> consumer edge per (producing stage, queue).
struct stage_edge {
    stage_id producer = 0;
    stage_id consumer = 0;
};
std::vector<stage_edge> stage_edges(const program& g);

inline constexpr double partition_imbalance = 0.10;

// The worker (0 .. workers-1) of each stage. costs: one per stage, finite and >= 0; a stage measured
// at zero (it never ran in the profile) is counted at 1 % of the mean cost, and all-zero costs count
// as equal. Throws std::invalid_argument on a negative or non-finite cost, no stages, workers == 0,
// or an edge naming a stage that does not exist.
std::vector<unsigned> partition_stages(const std::vector<double>& costs, const std::vector<stage_edge>& edges,
                                       unsigned workers, double imbalance = partition_imbalance);

// Step 1 alone (longest processing time first), for comparison: partition_stages never has a larger
// cut than this, nor a maximum load more than `imbalance` above its maximum load.
std::vector<unsigned> balance_stages(const std::vector<double>& costs, unsigned workers);

// The data-parallel split: each stage's workers, one per replica, in turn order (instance i of a
// split stage runs on the (i mod k)-th; an unsplit stage has one). `parallel[s]`: stage s may be
// split. Same costs and errors as partition_stages, and a `parallel` of another length is refused.
std::vector<std::vector<unsigned>> place_stages(const std::vector<double>& costs, const std::vector<bool>& parallel,
                                                const std::vector<stage_edge>& edges, unsigned workers,
                                                double imbalance = partition_imbalance);
// How many pieces place_stages cuts each stage into (1 unless split).
std::vector<unsigned> replica_counts(const std::vector<double>& costs, const std::vector<bool>& parallel, unsigned workers);
// Which stages of g are parallel (may be split).
std::vector<bool> parallel_stages(const program& g);

// The costs partition_stages actually balances (the floor above applied).
std::vector<double> effective_costs(const std::vector<double>& costs);
// Edges whose producer and consumer are on different workers.
std::size_t cut_edges(const std::vector<unsigned>& assignment, const std::vector<stage_edge>& edges);
// Sum of effective costs per worker.
std::vector<double> worker_loads(const std::vector<double>& costs, const std::vector<unsigned>& assignment,
                                 unsigned workers);

// Per-stage cost from a trace recorded earlier (the "previous trace" of seed 004 §IV-C): the total
// duration of the node slices ("stage j", `stage` annotation j) of each stage, in ns, on the worker
// tracks of one run. The run is the last one whose recorded program has this program's stage names;
// a trace whose runs carry no program metadata uses its last run. Throws std::invalid_argument
// naming the file and what is wrong: unreadable, malformed, no run, a run of another program, no node
// slices, a stage index beyond the program's stages.
std::vector<double> profile_stage_costs(const std::string& path, const program& g);

// "c0,c1,...": one non-negative number per stage, in declaration order. Throws
// std::invalid_argument naming the entry that is not a number.
std::vector<double> parse_stage_costs(const std::string& text);

}   // namespace pipescope::graph::detail
