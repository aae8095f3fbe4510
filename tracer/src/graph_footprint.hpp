// The footprint of stage-graph runs, derived by the trace model from the queue counters
// (docs/tracing.md, "Counters"). Internal to the tracer: load_trace calls it once the runs and their
// metadata are read.
#pragma once

#include <pipescope/trace/trace_model.hpp>

namespace pipescope::trace::detail {

// For each stage-graph run of `m` (metadata program.kind "graph") whose trace holds queue counters
// but no "footprint packets" / "footprint bytes" track, adds those two counter tracks to the run,
// marked track::derived: at each timestamp where a queue counter has a sample, the sum of every
// queue's latest value (bytes: each value × the queue's element_bytes × packet_elements from
// program.queues). A "footprint bytes" track needs the packet size of every queue found; without it
// only "footprint packets" is derived. Runs that recorded their footprint keep their own tracks.
void derive_graph_footprints(trace_model& m);

}   // namespace pipescope::trace::detail
