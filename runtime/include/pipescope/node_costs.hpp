// pipescope — where virtual workers take what a node costs from, instead of measuring it
// (scheduler_options::node_costs; docs/virtual.md, "Cost sources").
//
// A virtual worker normally charges a node the thread CPU time its body used. A cost source fixes
// those costs instead: the same source gives the same schedule and the same trace, byte for byte.
// `pipescope run --virtual --costs EARLIER.pftrace` builds one from the node slices of an earlier
// recording (recording/include/pipescope/recording/trace_costs.hpp); the runtime knows nothing of traces or files.
#pragma once

#include <cstdint>

namespace pipescope {

class node_cost_source {
public:
    virtual ~node_cost_source() = default;
    // The virtual ns node (iteration, stage) of a pipe_while loop costs. Asked by the worker that
    // ends the node, while it holds the virtual token (one caller at a time). A source that does
    // not know the node decides what to charge (and should say so when asked afterwards).
    virtual std::uint64_t pipeline_node_ns(std::uint64_t iteration, std::uint64_t stage) const noexcept = 0;
    // The same for instance `instance` of stage `stage` of a stage graph (a serial stage's
    // resumptions are numbered as its instances are: as the trace's node slices number them).
    virtual std::uint64_t graph_node_ns(std::uint64_t stage, std::uint64_t instance) const noexcept = 0;
};

}   // namespace pipescope
