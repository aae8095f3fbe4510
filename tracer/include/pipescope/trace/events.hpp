// The event vocabulary of a pipescope trace (DESIGN.md, "Events and the Perfetto layout"), as the
// fixed-size binary records the hot path writes. Turning them into protobuf happens elsewhere, off
// the hot path. The meaning of the operand fields depends on the kind (see the table below).
#pragma once

#include <cstdint>
#include <string_view>

namespace pipescope::trace {

enum class event_kind : std::uint8_t {
    //                      a                    b                      c
    worker_start,        // -                    -                      -
    worker_stop,         // -                    -                      -
    node_begin,          // iteration            stage                  waited (0/1)
    node_end,            // iteration            stage                  -
    task_begin,          // task id              -                      -
    task_end,            // task id              -                      -
    steal,               // victim worker        what was taken (id)    success (0/1)
    idle_begin,          // -                    -                      -
    idle_end,            // failed steal attempts while idle         -
    park,                // -                    -                      -
    park_end,            // -                    -                      -
    unpark,              // woken worker         -                      -
    stage_wait_check,    // iteration            stage                  satisfied (0/1)
    iteration_suspend,   // iteration            stage                  waiting on iteration
    iteration_resume,    // iteration            stage                  resumed by worker
    throttle_suspend,    // live iterations      K                      -
    throttle_resume,     // live iterations      K                      -
    iteration_start,     // iteration            slot                   -
    iteration_retire,    // iteration            slot                   -
    counter,             // counter id           value                  -
    dropped,             // events lost before this one                 -
    count_               // number of kinds
};

std::string_view event_name(event_kind k) noexcept;

struct event_record {
    std::uint64_t ticks;   // now_ticks() when it happened
    std::uint64_t a;
    std::uint64_t b;
    std::uint32_t c;
    event_kind kind;
    std::uint8_t reserved[3];
};
static_assert(sizeof(event_record) == 32, "records are written by plain stores; keep them one half cache line");

}  // namespace pipescope::trace
