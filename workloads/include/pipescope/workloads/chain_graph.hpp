// A linear pipeline written as a chain stage graph (issue 6), so that the pipe_while workloads
// ferret and dedup also run under the graph policies (GRAMPS, DANBI, ...).
//
// The chain: a serial source stage (the pipeline's stage 0) pushes one element per item; one
// stage per later pipeline stage, parallel where the pipeline's stage is parallel and serial (a
// coroutine) where it is serial; queues between consecutive stages. The elements are small
// handles (an index or a pointer) to the item's state, which the workload keeps in per-run arrays:
// queue elements are raw bytes (trivially copyable), while an item's state holds vectors (pixels,
// compressed bytes). Only one stage holds a given handle at a time, and the queue's reserve/commit
// (under its lock) orders one stage's writes to the item before the next stage's reads.
//
// Order. The pipeline's last stage is serial and in order (stage_wait): item i is written after
// item i-1. In the chain every queue is ordered (DANBI's tickets, seed 002 §II; GRAMPS' ordered
// queues, seed 004 §II-C): a parallel stage reserves its input and its output together, in input
// order, so its output tickets follow its input order — but only if that input was in order too.
// One unordered queue anywhere before the output stage would let items overtake each other, so
// the whole chain is ordered, and the output stage sees items exactly in the source's order.
#pragma once

#include <pipescope/graph/program.hpp>
#include <pipescope/workloads/graph_workload.hpp>
#include <pipescope/workloads/workload.hpp>

#include <cstddef>
#include <string>

namespace pipescope::workloads {

// The chain's queues. One item per packet is closest to the pipeline (one item per node, as many
// items in flight as the queues hold); more items per packet make fewer, longer instances, which
// costs scheduling overhead less but parallelism more when there are few items (ferret tiny has 12).
// One item is already far more than a scheduler step's cost (issue 17, measured at size large,
// docs/runtime.md "Packet sizes of the graph workloads"): a ferret query is about 0.85 ms through the
// stages (segment alone 0.7 ms), a dedup fine chunk about 60 µs (compress dominates), and packets of
// 4 or 16 items ran no faster; so the default stays one item per packet.
struct chain_shape {
    std::size_t packet = 1;        // items per packet
    std::size_t capacity = 8;      // packets per queue as built: the application's (GRAMPS' rule), or N
    bool capacity_given = false;   // --param capacity=N: N overrides every policy's rule
};

// The chain's sizing for run_graph_workload and describe_graph: N if given, else the policy's rule.
queue_sizing chain_sizing(const chain_shape& shape);

// The chain's own parameters (packet, capacity), as workload::parameters() lines.
std::string chain_parameters();

// Takes the chain's parameters (packet, capacity) and refuses what does not fit the request's
// policy, naming the key: under a graph policy, the pipe_while parameters (K, lazy, folding, c,
// queue: they mean nothing to a stage graph); under a pipe_while policy, packet and capacity.
// Returns the chain's shape (the defaults under a pipe_while policy).
chain_shape take_chain_parameters(const run_request& request, param_set& params, const std::string& workload);

// Every queue of the chain: `shape.packet` elements per packet, `shape.capacity` packets, ordered.
graph::queue_shape chain_queue(const chain_shape& shape);

// Rejects any key that neither the graph policies nor the workload (which took its own already)
// know, before the workload spends time on set-up (run_graph_workload checks again, later).
void reject_unknown_for_graph(const run_request& request, const param_set& params, const std::string& workload);

}   // namespace pipescope::workloads
