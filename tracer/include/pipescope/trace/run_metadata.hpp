// pipescope-run/1: the metadata a run's "run" instant carries (docs/tracing.md, "Metadata"), as one
// typed value. Its writers — the runtime's trace_session and `pipescope run` (recording/) — fill it
// and call to_json; its readers — the trace model, the analysis' read_meta, the viewer's stage
// graph, `run --costs` — call run_metadata_from_json and interpret what they find. The tracer is
// the lowest layer both sides include; the JSON library stays inside tracer/src/run_metadata.cpp.
//
// What the writers always write is a plain member; what a writer may leave out, or only some
// writers write, is optional and written only when set. Keys come out sorted (nlohmann's objects),
// whole numbers as integers, reference_seconds as a double: the same bytes as before the struct.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::trace {

inline constexpr std::string_view run_format = "pipescope-run/1";

// Scheduler costs by name ("steal" -> 250), in ns.
using cost_table = std::map<std::string, std::uint64_t>;

// An entry of program.stages.
struct run_stage {
    std::optional<std::uint64_t> index;   // readers take the entry's position when absent
    std::string name, kind, note;         // name: "stage j · what it does"; kind: "serial", "parallel", ...
    // Other writers' fields, read and written when set: threads bound to the stage (bind-to-stage),
    // the capacity of its input queue ("queue_capacity", or "capacity" when reading).
    std::optional<std::uint64_t> threads;
    std::optional<double> queue_capacity;
    bool operator==(const run_stage&) const = default;
};

// An entry of program.queues: a stage graph's queue (every field written), or another writer's
// pipeline queue ({"stage" or "index": j, "capacity": C}).
struct run_queue {
    std::optional<std::uint64_t> index;
    std::string name;
    std::optional<std::uint64_t> element_bytes, packet_elements, capacity_packets;
    bool ordered = false, backward = false, unbounded = false;
    std::vector<std::uint64_t> producers;   // stage indices
    std::optional<std::uint64_t> consumer;
    std::string counter;   // its counter track of packets in use
    std::optional<std::uint64_t> stage;
    std::optional<double> capacity;
    bool operator==(const run_queue&) const = default;
};

// "program": the stages (and a graph's queues) and how the loop was scheduled.
struct run_program {
    std::string kind;    // "pipeline", "graph", "tasks" (vocab::graph_program, vocab::tasks_program)
    std::string shape;   // how the stages are decided, in words
    std::optional<std::vector<run_stage>> stages;   // absent: the metadata says nothing of the stages
    std::optional<std::vector<run_queue>> queues;   // stage graphs
    std::optional<std::string> footprint;           // stage graphs: "sum of queue counters"
    // A pipe_while's scheduling: the throttle K (piper, tbb's tokens), or bind-to-stage's threads per
    // parallel stage c and Queue_size; lazy enabling and dependency folding.
    std::optional<std::uint64_t> K, c, queue;
    std::optional<bool> lazy_enabling, dependency_folding;
    std::optional<double> queue_capacity, queue_size;   // other writers' names for the queues' capacity
    bool operator==(const run_program&) const = default;
};

// "trace": what the trace records of the nodes (docs/tracing.md, "Detail levels", "Counters").
struct run_trace_settings {
    std::string detail;   // "nodes", "folded", "auto"
    std::optional<std::uint64_t> fold_below_ns, counter_quantum_ns;
    bool operator==(const run_trace_settings&) const = default;
};

struct run_machine {
    std::optional<std::string> cpu;   // `pipescope run` describes the machine; a trace_session counts its threads
    std::uint64_t hardware_threads = 0;
    std::optional<std::string> kernel;
    bool operator==(const run_machine&) const = default;
};

// A cost or calibration file a virtual run took costs from: its name (not its path) and what it set.
struct cost_file_use {
    std::string file;
    cost_table costs_ns;
    bool operator==(const cost_file_use&) const = default;
};

// "calibration" of a virtual run: null when `pipescope run` found no calibration file.
struct calibration_use {
    std::optional<cost_file_use> file;
    bool operator==(const calibration_use&) const = default;
};

// The recording a virtual run's nodes took their costs from (`pipescope run --costs`).
struct node_cost_recording {
    std::string trace, run, policy;
    std::uint64_t nodes = 0, folded_nodes = 0, total_ns = 0;
    bool operator==(const node_cost_recording&) const = default;
};

struct node_costs_use {
    std::optional<node_cost_recording> recording;   // where `pipescope run` took them from
    std::optional<std::string> charged;             // what the scheduler charged each node
    bool operator==(const node_costs_use&) const = default;
};

// "virtual": a run on virtual workers (docs/virtual.md). The scheduler writes what it charged
// (workers, job_costs, costs_ns, node_costs.charged); `pipescope run` where the costs came from.
struct run_virtual {
    std::optional<std::uint64_t> workers;
    std::optional<std::string> job_costs;
    std::optional<cost_table> costs_ns;
    std::optional<calibration_use> calibration;
    std::optional<cost_file_use> cost_file;
    std::optional<cost_table> params_ns;   // --param NAME_ns=V
    std::optional<node_costs_use> node_costs;
    bool operator==(const run_virtual&) const = default;
};

struct run_metadata {
    std::string format{run_format};
    std::string workload, policy;
    std::optional<std::uint64_t> workers;
    std::optional<std::string> size;   // `pipescope run`: tiny, small, large
    std::optional<std::uint64_t> seed;
    // How the recording was asked for: "pipescope run", "PIPESCOPE_TRACE", "trace_session".
    std::optional<std::string> recorded_by;
    // The serial reference's time T_S. Read also from older spellings: "serial_seconds", "T_S", or a
    // "reference" object's "seconds", "reference_seconds" or "serial_seconds" (written back as this).
    std::optional<double> reference_seconds;
    // "key=value" as given; an object {"key": value} is read as such strings.
    std::vector<std::string> params;
    std::optional<run_trace_settings> trace;
    std::optional<run_program> program;
    std::optional<run_machine> machine;
    std::optional<run_virtual> virtual_run;   // "virtual"
    // Top-level members this version does not read, each as its JSON text: another writer's, kept
    // so that a document rewritten through the struct (a run made virtual) loses none of them.
    std::map<std::string, std::string> other;
    bool operator==(const run_metadata&) const = default;
};

std::string to_json(const run_metadata& m);
std::string to_json(const run_program& p);

// Reads the metadata tolerantly, as traces from other versions and other writers need: a field
// that is absent or null stays unset, a field of the wrong type is left out, and so is an array
// entry that is not an object. Each one left out is named in `problems`, if given
// ("program.stages[2].index: expected a whole number, got -1"). nullopt if the text is not a JSON
// object (problems: "metadata: not a JSON object").
std::optional<run_metadata> run_metadata_from_json(std::string_view json, std::vector<std::string>* problems = nullptr);
std::optional<run_program> run_program_from_json(std::string_view json, std::vector<std::string>* problems = nullptr);

}   // namespace pipescope::trace
