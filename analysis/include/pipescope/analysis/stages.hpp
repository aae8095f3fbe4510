// Per-stage and per-run counts: executions and service times of each stage, its busy fraction;
// steals tried and made (per thief -> victim pair); suspensions, waits and wake-ups; the peaks of
// every counter track against its limit (live iterations vs K, tokens vs N, queue fill vs
// capacity, footprint). docs/analysis.md defines each number.
#pragma once

#include <pipescope/analysis/metadata.hpp>
#include <pipescope/analysis/scope.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::analysis {

// Service times of a set of node executions (ns). Percentiles by nearest rank: p_q is the
// ceil(q * n)-th smallest duration, so they are always durations that occurred.
struct service_stats {
    std::uint64_t count = 0, total = 0;
    double mean = 0;
    std::uint64_t p50 = 0, p95 = 0, max = 0;
};
service_stats summarize(std::vector<std::uint64_t> durations);

// Where something happened, so the viewer can go there.
struct place {
    std::uint64_t begin = 0, end = 0;   // absolute ns
    int worker = -1;
    long stage = -1;
    long long iteration = -1;
    std::uint32_t track = tm::no_index;   // a track to select, if any
};

// Each node of a folded slice (scope.hpp, node_extent) is one execution of its stage with an equal
// share of the slice's duration: totals (and T1) stay exact, per-node times of folded nodes are
// shares, not measurements (`shares` counts them).
struct stage_stats {
    std::uint64_t index = 0;
    std::string name, kind;   // kind: recorded or declared ("" when inferred)
    // Where `serial` comes from: "recorded" (the run summary: how the iterations entered the stage),
    // "declared" (the metadata's program.stages), "inferred" (the DAG: tm::inferred_stage_kind, else
    // stage 0 or every node but the first waited). docs/analysis.md, "Per stage and per run".
    std::string kind_source;
    bool serial = false;
    service_stats service;                  // node durations (shares for the nodes of folded slices)
    std::uint64_t shares = 0;               // executions that are shares of a folded slice
    double busy_fraction = 0;               // service.total / makespan (> 1 possible for parallel stages)
    place longest;                          // its longest node (for a share: the folded slice holding it)
    std::uint64_t suspensions = 0;          // `suspend` instants at this stage
    std::uint64_t waits = 0, wait_ns = 0;   // `waiting at stage j` line states: count and total time
};

struct steal_pair {
    int thief = -1, victim = -1;
    std::uint64_t made = 0;
};

struct worker_steals {
    int worker = -1;
    std::uint64_t made = 0, failed = 0;   // `steal` instants; `failed_steals` of its idle slices
    std::uint64_t tried() const { return made + failed; }
};

struct counter_stats {
    std::string name;
    std::uint32_t track = tm::no_index;
    double peak = 0;
    std::uint64_t peak_ts = 0;
    std::optional<double> capacity;   // its limit, if known
    std::string capacity_from;        // where the limit came from ("program.K", "name", ...)
};

// Where trace_detail "auto" decided (a "trace detail: folded" / "trace detail: nodes" instant on a
// worker track; docs/tracing.md, "Detail levels").
struct detail_decision {
    bool folded = false;                // folded from here on (else: every node recorded)
    double mean_node_ns = 0;            // `value`: the mean node duration it measured
    std::uint64_t nodes_measured = 0;   // `nodes`
    long stage = -1;                    // the stage it decided for; -1: every stage
    place where;                        // the instant (begin = end = its time)
};

struct run_stats {
    std::uint64_t iterations = 0;     // distinct iterations with nodes
    std::uint64_t nodes = 0;          // nodes, those inside folded slices included
    std::uint64_t folded_runs = 0;    // folded slices (nodes > 1)
    std::uint64_t folded_nodes = 0;   // the nodes they hold
    // The error bound of per-stage totals in a folded trace: a folded slice of n nodes over several
    // stages gives each node duration/n, but one node may have taken nearly all of it, so up to
    // duration·(n-1)/n of it can be counted in the wrong stage. The sum over such slices, in ns.
    double folded_misplaceable_ns = 0;
    double folded_ns = 0;   // the folded slices' total duration
    std::vector<detail_decision> detail_decisions;
    std::vector<stage_stats> stages;       // by stage index (stages with no node and no metadata omitted)
    std::vector<worker_steals> steals;     // per worker
    std::vector<steal_pair> steal_pairs;   // thief -> victim, made > 0
    std::uint64_t steals_made = 0, steals_failed = 0;
    std::uint64_t suspensions = 0, resumptions = 0, wakeups = 0, throttle_waits = 0;
    std::uint64_t retire_waits = 0, retire_wait_ns = 0, throttled_ns = 0;
    std::uint64_t events_lost = 0;          // sum of the `dropped` annotations of `events lost` instants
    place first_loss;                       // where the first loss was marked (begin = end = its time)
    std::vector<counter_stats> counters;    // every counter track of the run
    std::optional<double> peak_live, K;     // "live iterations" and program.K
    std::optional<double> peak_tokens, N;   // "tokens in flight" and program.K (tbb's N)
    // Bytes: the peak of the "footprint bytes" counter (stage graphs); a trace with other footprint
    // counters only (none of pipescope's) gives the largest of those.
    std::optional<double> peak_footprint;
};

run_stats compute_stats(const run_scope& scope, const run_meta& meta);

}   // namespace pipescope::analysis
