// What the analysis looks at in a trace model: a run's tracks and its time span, and the meaning
// of slice names (docs/tracing.md). Every other analysis header takes a run_scope.
//
//   const auto scope = pipescope::analysis::scope_of(model, model.runs[0]);
//   scope.makespan()   // ns from the run's first event to its last
#pragma once

#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::analysis {

namespace tm = pipescope::trace;
namespace vocab = pipescope::trace::vocab;   // the trace's names (vocabulary.hpp)

// A run as the analysis sees it: a pipescope run (run != no_index) or, for a foreign trace, all
// of its thread tracks as workers.
struct run_scope {
    const tm::trace_model* model = nullptr;
    std::uint32_t run = tm::no_index;   // index into model->runs, or no_index
    std::string title;
    std::uint64_t start = 0, end = 0;      // first and last timestamp of the run's events (ns)
    std::vector<std::uint32_t> workers;    // worker tracks, in worker order
    std::vector<std::uint32_t> lines;      // "line k" tracks, then "control" (children of "lines")
    std::vector<std::uint32_t> counters;   // counter tracks
    std::vector<std::uint32_t> others;     // other tracks with events (a foreign trace's, a run's extra ones)
    std::uint64_t makespan() const { return end > start ? end - start : 0; }
    const tm::run* run_info() const { return model && run != tm::no_index ? &model->runs[run] : nullptr; }
};

// The scope of run r of m (its tracks in the writer's layout).
run_scope scope_of(const tm::trace_model& m, std::uint32_t run);
// Every run of m, or one pseudo run of all its tracks with events (thread tracks as workers) if m
// has no pipescope runs, titled `whole_trace_title`.
std::vector<run_scope> scopes_of(const tm::trace_model& m, std::string_view whole_trace_title = "whole trace");
// First and last timestamp of the events of the given tracks (0, 0 if none).
void time_span(const tm::trace_model& m, const std::vector<std::uint32_t>& tracks, std::uint64_t& start, std::uint64_t& end);

// What a slice name means.
enum class slice_kind : std::uint8_t {
    node,        // "stage j" / "stage j · name": a pipeline node
    task,        // "task": a fork-join task
    idle,        // "idle": looking for work
    parked,      // "parked": asleep
    blocked,     // "blocked…": a bind-to-stage thread blocked on a full/empty queue
    queue,       // "queue…", "push…", "pop…", "put…", "take…", "reserve…", "commit…": queue operations
    running,     // line: "running"
    waiting,     // line: "waiting at stage j" / "waiting to retire"
    throttled,   // control line: "throttled"
    other,       // anything else (on a worker track: counted as work)
};
slice_kind classify_slice(std::string_view name);
// Per string id of m: the slice kind of that string as a slice name.
std::vector<slice_kind> classify_strings(const tm::trace_model& m);
// "stage 3" / "stage 3 · name" / "waiting at stage 3" -> 3; -1 if the name has no stage number.
long stage_of_name(std::string_view name);
// The string id of s in m, or no_index.
tm::string_id find_string(const tm::trace_model& m, std::string_view s);

// What a node slice holds. A folded trace (docs/tracing.md, "Detail levels") records a run of
// consecutive nodes one worker ran as one slice ("stage 0–495", graphs "stage 2 ×17") with the
// annotations `nodes` (> 1), `last_stage` and `last_iteration`: a pipeline iteration's stages
// [stage, last_stage], one node each, or `nodes` instances of one graph stage. Each node of it is
// given an equal share of the slice's duration (node_share); counts (nodes per worker, runs per
// stage, node totals) count the nodes it holds.
struct node_extent {
    long stage = -1;                // the (first) stage; -1: no stage (not a node)
    std::uint64_t last_stage = 0;   // == stage unless the slice folds several stages
    long long iteration = -1;       // -1: no iteration annotation
    std::uint64_t nodes = 1;        // nodes it holds: > 1 for a folded run
    bool waited = false;            // its first node entered through stage_wait
    bool folded() const { return nodes > 1; }
    // How many of its nodes are of stage j (pipelines: 1 per stage of the range; graphs: all of them).
    std::uint64_t nodes_of_stage(std::uint64_t j) const;
};
// The annotation names node_extent_of reads, looked up once per model.
struct node_arg_ids {
    tm::string_id iteration = tm::no_index, stage = tm::no_index, last_stage = tm::no_index, nodes = tm::no_index,
                  waited = tm::no_index;
    static node_arg_ids of(const tm::trace_model& m);
};
// The extent of slice s (a node slice: its stage from the `stage` annotation, else its name).
node_extent node_extent_of(const tm::trace_model& m, const tm::slice& s, const node_arg_ids& ids);
// Node k's share of a folded slice of duration d holding n nodes: [node_share(d, k, n),
// node_share(d, k + 1, n)); the shares are whole ns and add up to d exactly.
// floor(d k / n) for k <= n < 2^32, without overflow: d = q n + r, d k / n = q k + r k / n.
inline std::uint64_t node_share(std::uint64_t d, std::uint64_t k, std::uint64_t n) {
    return n ? (d / n) * k + (d % n) * k / n : 0;
}

}   // namespace pipescope::analysis
