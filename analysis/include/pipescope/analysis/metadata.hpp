// What the analysis reads from a run's metadata JSON (docs/tracing.md, "Metadata"), tolerantly:
// every field is optional, and fields that later policies may add are looked for too.
#pragma once

#include <pipescope/analysis/scope.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::analysis {

struct stage_meta {
    // The stage number: parsed from the name ("stage 5 · output" -> 5, "stage 2^40 + 1 · write"
    // -> 2^40 + 1), else the entry's "index". An entry named "stage j ≥ 1 · …" describes every
    // stage from 1 on that no other entry names (all_from).
    std::uint64_t index = 0;
    bool all_from = false;
    std::string name, kind;                 // kind: "serial", "parallel", "serial_in_order", ...
    std::optional<double> threads;          // threads bound to the stage (bind-to-stage), if recorded
    std::optional<double> queue_capacity;   // capacity of the stage's input queue, if recorded
};

// A queue of a stage graph (program.queues of a graph run; docs/tracing.md "Metadata").
struct queue_meta {
    std::uint64_t index = 0;
    std::string name, counter;   // counter: the track of its packets in use
    double capacity_packets = 0, packet_elements = 0, element_bytes = 0;
    bool ordered = false, backward = false, unbounded = false;
    std::vector<std::uint64_t> producers;   // stage indices
    std::optional<std::uint64_t> consumer;
};

// A run on virtual workers (metadata "virtual": {workers, job_costs, costs_ns}; docs/virtual.md): its
// times are virtual ns on `workers` simulated cores, not this machine's.
struct virtual_meta {
    std::uint64_t workers = 0;
    std::string job_costs;   // what a job cost: "measured thread CPU time plus virtual_work", ...
};

struct run_meta {
    std::string program_kind;         // program.kind: "pipeline", "graph", or "" (unknown)
    std::vector<queue_meta> queues;   // graphs
    std::string workload, policy, size;
    std::uint64_t workers = 0;   // metadata "workers", else the run's declared workers, else its worker tracks
    std::uint64_t K = 0;         // program.K: throttle (piper) or tokens N (tbb); 0 = unknown
    std::vector<stage_meta> stages;
    std::map<std::string, std::string> params;   // "params": ["K=2", "c=3", ...] (or an object)
    // Queue capacity of all queues: program.queue_capacity, else the `queue` parameter (> 0), else
    // 20 under bind-to-stage (its default).
    std::optional<double> queue_capacity;
    // Threads per parallel stage under bind-to-stage: the `c` parameter (> 0), else P (its default).
    std::optional<double> threads_per_parallel_stage;
    // The serial reference's time, if recorded (reference_seconds, serial_seconds or T_S at the top
    // level or in a "reference" object): the observed speedup is taken against it.
    std::optional<double> reference_seconds;
    // What the trace records of the nodes (`trace.detail`: "nodes", "folded" or "auto"; "" if not
    // recorded) and the mean node duration below which auto folds (`trace.fold_below_ns`).
    std::string trace_detail;
    std::optional<double> fold_below_ns;
    std::optional<virtual_meta> virtual_run;   // set for a run on virtual workers
    // How the recording was asked for (metadata "recorded_by"): "pipescope run", "PIPESCOPE_TRACE",
    // "trace_session", or "" (older traces, and other writers).
    std::string recorded_by;
    bool is_virtual() const { return virtual_run.has_value(); }
};

// "virtual 16 cores" for a run on virtual workers, "" otherwise: the badge the viewer shows and
// `stats` / `compare` print.
std::string virtual_badge(const run_meta& meta);

run_meta read_meta(const run_scope& scope);

// The entry describing stage j, or nullptr.
const stage_meta* find_stage(const run_meta& meta, std::uint64_t j);

// Whether a stage kind is serial: "serial", "serial_in_order", "serial_out_of_order", ..., and
// "stage_wait" (serial through a cross edge to iteration i-1).
bool is_serial_kind(std::string_view kind);

// The stage number a metadata stage name gives: "stage 5 · output" -> 5, "stage 2^40 + 1 · w" ->
// 2^40 + 1, "stage j ≥ 1 · …" -> 1 (all_from); nullopt if the name does not start with "stage " and
// a number, or if the number goes on as a formula ("stage 1 + w·i + r · …" -> nullopt, formula set):
// x264's row stages name many stage numbers at once (seed 001 §3).
std::optional<std::uint64_t> stage_number_of_name(std::string_view name, bool* all_from = nullptr, bool* formula = nullptr);

// The kind trace_session's metadata gives an undeclared stage j >= 1 of a pipe_while ("whether it
// waits is each iteration's choice"): says nothing of the stage, whose kind the run's summary
// records or the DAG shows.
inline constexpr std::string_view on_the_fly_kind = "on the fly";

}   // namespace pipescope::analysis
