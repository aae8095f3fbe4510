// Internal: what the engine's steps and the stage bodies' contexts both need — how many packets a
// count of elements fills, and the reserve / commit trace records.
#pragma once

#include "../trace_hooks.hpp"

#include <pipescope/graph/program.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace pipescope::graph::detail {

inline std::size_t packets_for(std::size_t elements, std::size_t per_packet) noexcept {
    return (elements + per_packet - 1) / per_packet;
}

// A graph_reserve / graph_commit record (tracer/include/pipescope/trace/events.hpp), if traced.
inline void trace_op(bool traced, trace::event_kind k, queue_id q, std::uint64_t amount, bool pop, bool ok,
                     stage_id s) noexcept {
    if (traced)
        pipescope::detail::trace_event(k, q, amount, (pop ? trace::graph_op_pop : 0) | (ok ? trace::graph_op_ok : 0),
                                       static_cast<std::uint16_t>(std::min<stage_id>(s, 0xFFFF)));
}

}  // namespace pipescope::graph::detail
