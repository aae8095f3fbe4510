// What the analysis looks at in a trace model: a run's tracks and its time span, and the meaning
// of slice names (docs/tracing.md). Every other analysis header takes a run_scope.
//
//   const auto scope = pipescope::analysis::scope_of(model, model.runs[0]);
//   scope.makespan()   // ns from the run's first event to its last
#pragma once

#include <pipescope/trace/trace_model.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::analysis {

namespace tm = pipescope::trace;

// A run as the analysis sees it: a pipescope run (run != no_index) or, for a foreign trace, all
// of its thread tracks as workers.
struct run_scope {
    const tm::trace_model* model = nullptr;
    std::uint32_t run = tm::no_index;       // index into model->runs, or no_index
    std::string title;
    std::uint64_t start = 0, end = 0;       // first and last timestamp of the run's events (ns)
    std::vector<std::uint32_t> workers;     // worker tracks, in worker order
    std::vector<std::uint32_t> lines;       // "line k" tracks, then "control" (children of "lines")
    std::vector<std::uint32_t> counters;    // counter tracks
    std::uint64_t makespan() const { return end > start ? end - start : 0; }
    const tm::run* run_info() const { return model && run != tm::no_index ? &model->runs[run] : nullptr; }
};

// The scope of run r of m (its tracks in the writer's layout).
run_scope scope_of(const tm::trace_model& m, std::uint32_t run);
// Every run of m, or one pseudo run of all thread tracks if m has no pipescope runs.
std::vector<run_scope> scopes_of(const tm::trace_model& m);
// First and last timestamp of the events of the given tracks (0, 0 if none).
void time_span(const tm::trace_model& m, const std::vector<std::uint32_t>& tracks, std::uint64_t& start, std::uint64_t& end);

// What a slice name means.
enum class slice_kind : std::uint8_t {
    node,       // "stage j" / "stage j · name": a pipeline node
    task,       // "task": a fork-join task
    idle,       // "idle": looking for work
    parked,     // "parked": asleep
    blocked,    // "blocked…": a bind-to-stage thread blocked on a full/empty queue
    queue,      // "queue…", "push…", "pop…", "put…", "take…", "reserve…", "commit…": queue operations
    running,    // line: "running"
    waiting,    // line: "waiting at stage j" / "waiting to retire"
    throttled,  // control line: "throttled"
    other,      // anything else (on a worker track: counted as work)
};
slice_kind classify_slice(std::string_view name);
// Per string id of m: the slice kind of that string as a slice name.
std::vector<slice_kind> classify_strings(const tm::trace_model& m);
// "stage 3" / "stage 3 · name" / "waiting at stage 3" -> 3; -1 if the name has no stage number.
long stage_of_name(std::string_view name);
// The string id of s in m, or no_index.
tm::string_id find_string(const tm::trace_model& m, std::string_view s);

}  // namespace pipescope::analysis
