// What the analysis looks at in a trace model: a run's tracks and its time span (what a slice
// means is typed by the model: slice::kind, trace_model::node_of). Every other analysis header takes a run_scope.
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

// What a slice is and what a node slice holds: typed once by the trace model at load
// (trace_model.hpp: slice::kind, trace_model::node_of); the analysis reads them, never the names.
using slice_kind = tm::slice_kind;
using node_extent = tm::node_extent;

// The string id of s in m, or no_index.
tm::string_id find_string(const tm::trace_model& m, std::string_view s);

// Node k's share of a folded slice of duration d holding n nodes: [node_share(d, k, n),
// node_share(d, k + 1, n)); the shares are whole ns and add up to d exactly.
// floor(d k / n) for k <= n < 2^32, without overflow: d = q n + r, d k / n = q k + r k / n.
inline std::uint64_t node_share(std::uint64_t d, std::uint64_t k, std::uint64_t n) {
    return n ? (d / n) * k + (d % n) * k / n : 0;
}

}   // namespace pipescope::analysis
