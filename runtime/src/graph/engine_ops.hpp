// Internal: what the engine's steps and the stage bodies' contexts both need — how many packets a
// count of elements fills (the reserve / commit trace records are graph_engine::trace_queue_op).
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

}   // namespace pipescope::graph::detail
