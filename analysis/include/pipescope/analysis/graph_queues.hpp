// Stage-graph runs (program.kind "graph"): each queue's fill against its capacity and the run's
// footprint — the average and maximum footprints of seed 004 Table III — and how often stages were
// stopped by their queues (backpressure, empty inputs, commit order: seed 002 §III-A2), all read
// from the trace: the queues' counter tracks, the footprint counters and the stage-state instants.
#pragma once

#include <pipescope/analysis/metadata.hpp>
#include <pipescope/analysis/scope.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pipescope::analysis {

struct queue_fill {
    std::string name;
    double capacity_packets = 0;   // 0: not recorded
    bool unbounded = false, ordered = false, backward = false;
    double peak_packets = 0, mean_packets = 0;   // time-weighted mean over the run
    std::uint64_t samples = 0;
    bool over_capacity = false;   // a bounded queue held more than its capacity (a runtime bug)
};

struct graph_report {
    bool available = false;   // a graph run with its footprint counters
    std::vector<queue_fill> queues;
    double peak_packets = 0, mean_packets = 0;   // footprint: packets in use in every queue at once
    double peak_bytes = 0, mean_bytes = 0;
    // The footprint counters are the trace model's sum of the queue counters (trace::track::derived),
    // not recorded ones: exact only for a trace of one worker with every sample written (counter
    // quantum 0), otherwise within what moved in one quantum or one clock skew (docs/tracing.md).
    bool footprint_derived = false;
    std::uint64_t blocked_full = 0, blocked_empty = 0, blocked_order = 0;   // "stage blocked: …" instants
    std::uint64_t preemptions = 0;
    std::uint64_t stages_done = 0;
    // "reserve push/pop" and "commit push/pop" instants: every queue operation of a run recorded with
    // trace detail `nodes`; `auto` and `folded` record only the refused reserves.
    std::uint64_t queue_operations = 0;
};

// Peak and time-weighted mean of a counter track over [start, end] (the value holds until the next sample).
void counter_peak_mean(const tm::track& t, std::uint64_t start, std::uint64_t end, double& peak, double& mean);

graph_report compute_graph(const run_scope& scope, const run_meta& meta);

}   // namespace pipescope::analysis
