// The workloads the `pipescope` CLI (and later the benchmarks and the demo) can run by name.
// Each one runs under a chosen policy, checks its output against its serial reference and says
// what it did.
#pragma once

#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>
#include <pipescope/scheduler.hpp>

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace pipescope::workloads {

// `--param key=value` pairs. Workloads take the keys they understand; whatever is left over is an
// error that names the key, so a typo never silently runs the default.
class param_set {
public:
    param_set() = default;
    explicit param_set(std::map<std::string, std::string> values) : values_(std::move(values)) {}

    static param_set parse(const std::vector<std::string>& key_values);   // throws on "k" without "="

    std::uint64_t take_uint(const std::string& key, std::uint64_t fallback, std::uint64_t min = 0,
                            std::uint64_t max = UINT64_MAX);
    bool take_bool(const std::string& key, bool fallback);
    // A text value (a path, a mode name); nullopt if absent; an empty value is an error.
    std::optional<std::string> take_string(const std::string& key);
    void reject_unknown(const std::string& workload) const;   // throws std::invalid_argument

private:
    std::map<std::string, std::string> values_;
};

enum class input_size { tiny, small, large };
input_size parse_size(const std::string& name);   // throws on anything else
const char* size_name(input_size s);

struct run_request {
    std::string policy = "piper";
    input_size size = input_size::small;
    std::uint64_t seed = 1;   // --seed: generated inputs are a function of (size, params, seed)
    param_set params;
    // Called right before the measured run under the chosen policy starts (after the serial
    // reference and any set-up), with the serial reference's time in seconds: the CLI starts
    // recording here, so a trace shows just that run, and records T_S in its metadata.
    std::function<void(double reference_seconds)> on_measured_start;
    // Called as soon as the measured run returns, before its output is checked against the
    // reference: the CLI's CPU time of the measured run stops here (checking, e.g. dedup's restore
    // of its archive, is not the program's work).
    std::function<void()> on_measured_end;
    // Stops the measured run early (pipeline_options::cancel): its output is then incomplete, and
    // run_report::stats.cancelled says so. Requested before the measured run starts (during the
    // serial reference or the set-up), it makes run() throw interrupted_before_measured_run without
    // calling on_measured_start: the serial references check it between items, so Ctrl-C is prompt.
    std::stop_token cancel;
    // The run's worker count, virtual workers included, for what depends on it (DANBI's queue
    // capacities, graph_workload.hpp): a graph workload's run() takes its scheduler's, and whoever
    // asks program() for the run's structure sets it. 0: one per hardware thread, as a scheduler's 0.
    unsigned workers = 0;
};

// What a workload throws when its request's cancel is requested before its measured run starts:
// nothing was measured (and nothing recorded: on_measured_start was not called).
struct interrupted_before_measured_run : std::runtime_error {
    interrupted_before_measured_run() : std::runtime_error("interrupted before the measured run") {}
};
// Throws interrupted_before_measured_run if `cancel` was requested (one relaxed load otherwise):
// what the serial references call between items, iterations or blocks, never in an inner loop.
inline void throw_if_cancelled(const std::stop_token& cancel) {
    if (cancel.stop_requested()) throw interrupted_before_measured_run();
}

struct run_report {
    bool matches_reference = false;
    std::string description;        // what was computed, e.g. "F_20000 (13884 bits)"
    double seconds = 0;             // the parallel (or chosen-policy) run
    double reference_seconds = 0;   // the serial reference
    pipeline_stats stats;
    std::optional<graph::run_stats> graph;   // a stage graph's run: queues, footprint, preemptions
};

// The program's structure as the trace metadata records it (the viewer rebuilds the DAG from it).
struct stage_info {
    std::string name;   // e.g. "stage 0 · start iteration"
    std::string kind;   // "serial", "parallel", or "stage_wait" (serial via a cross edge to i-1)
    std::string note;   // anything else worth knowing, e.g. how many such stages there are
};
// A queue of a stage graph (program_info::kind == "graph").
struct queue_info {
    std::string name;
    std::size_t element_bytes = 0, packet_elements = 0, capacity_packets = 0;
    bool ordered = false;
    bool backward = false;                // closes a cycle (seed 004 §III-A)
    bool unbounded = false;               // under the chosen policy: grows instead of applying backpressure
    std::vector<std::size_t> producers;   // stage indices
    std::size_t consumer = 0;
    std::string counter;   // its counter track: packets in use
};
struct program_info {
    std::string kind = "pipeline";   // "pipeline": a pipe_while loop; "graph": a stage graph
    std::string shape;               // how the stages are decided, in words
    std::vector<stage_info> stages;
    std::vector<queue_info> queues;      // graphs
    std::vector<std::string> counters;   // names of the run's `counter` tracks, by id (graphs)
    // Graphs under a graph policy: the program as the runtime describes it (graph_program_json in
    // trace_session.hpp); `pipescope run` writes it with this shape and these stage notes.
    std::string graph_json;
};

class workload {
public:
    virtual ~workload() = default;
    virtual std::string name() const = 0;
    virtual std::string summary() const = 0;      // one line for `pipescope list`
    virtual std::string parameters() const = 0;   // "key=default: meaning" lines
    virtual run_report run(scheduler& s, run_request& request) const = 0;
    virtual program_info program(const run_request& request) const = 0;
    // Why this workload cannot run under `policy`, or "" if it can: a stage graph under a pipe_while
    // policy or the reverse, else whatever refuses() says.
    std::string cannot_run_under(const std::string& policy) const;
    // A stage graph (runs only under graph policies).
    virtual bool is_graph() const { return false; }
    // A linear pipeline that can also be run as a chain graph under the graph policies (ferret, dedup).
    virtual bool has_chain_graph() const { return false; }

protected:
    // The workload's own reasons (e.g. a program whose structure is decided on the fly cannot be
    // declared up front to a construct-and-run policy).
    virtual std::string refuses(const std::string& policy) const {
        (void)policy;
        return {};
    }
};

// Every policy name `--policy` accepts: the pipe_while policies, then the graph policies.
std::vector<std::string> all_policy_names();
bool is_graph_policy(const std::string& policy);

const std::vector<const workload*>& all_workloads();
const workload* find_workload(const std::string& name);   // nullptr if unknown

// Pipeline options shared by every pipe_while workload: policy plus K, lazy, folding, and
// bind-to-stage's c and queue.
pipeline_options pipeline_options_from(const run_request& request, param_set& params);
// Those parameters as workload::parameters() lines (appended by every pipe_while workload).
inline constexpr const char* pipeline_parameters =
    "K=0: throttle (0 = 4P)\n"
    "lazy=on: lazy enabling\n"
    "folding=on: dynamic dependency folding\n"
    "c=0: bind-to-stage: threads per parallel stage (0 = P)\n"
    "queue=0: bind-to-stage: Queue_size, the bound of each queue between stages (0 = 20)";

// Every --param key belongs to the program or to the scheduler. The program's (a workload's own
// keys: size-like counts, form, packet, capacity, ...) decide what is computed and so the nodes;
// the scheduler's decide only how they are scheduled: the pipe_while policies' keys above (K,
// lazy, folding, c, queue) and every graph policy's own table (graph::policies(): gramps' preempt
// and buffers, DANBI's config and C, static's profile and costs). The serial elision gets only the
// program's; a node cost recording carries over between runs that differ in the scheduler's only.
bool is_policy_parameter(const std::string& key);
// Whether `policy` takes the scheduler parameter `key` (a pipe_while policy takes all the pipe_while
// keys; a graph policy those of its own table).
bool policy_takes_parameter(const std::string& policy, const std::string& key);
// The "key=value" texts whose key is the program's (in their order).
std::vector<std::string> program_parameters(const std::vector<std::string>& key_values);

}   // namespace pipescope::workloads
