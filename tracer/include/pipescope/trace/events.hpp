// The event vocabulary of a pipescope trace (docs/design.md, "Events and the Perfetto layout"), as the
// fixed-size binary records the hot path writes. Turning them into protobuf happens elsewhere, off
// the hot path. The meaning of the operand fields depends on the kind (see the table below).
#pragma once

#include <cstdint>
#include <string_view>

namespace pipescope::trace {

// Operands: a, b (64 bit), c (32 bit), d (16 bit). "since" is the tick count at which the state
// that this event ends began (the writer draws that state on a "line" track from since to now);
// 0 means unknown (the state began before recording did). "slot" is the in-flight iteration slot
// (the line track), taken modulo 2^16.
enum class event_kind : std::uint8_t {
    //                      a                    b                      c                      d
    worker_start,        // -                    -                      -                      -
    worker_stop,         // -                    -                      -                      -
    node_begin,          // iteration            stage                  node_flags             -
    node_end,            // iteration            stage                  -                      -
    task_begin,          // task id              parent task id (0: none)  spawn delay ticks (48 bits: d << 32 | c)
    task_end,            // task id              -                      -                      -
    steal,               // victim worker        what was taken (id)    success (0/1)          -
    idle_begin,          // -                    -                      -                      -
    idle_end,            // failed steal attempts while idle            -                      -
    park,                // -                    -                      -                      -
    park_end,            // wake id (0: timeout or unknown waker)       -                      -
    unpark,              // woken worker         wake id                -                      -
    stage_wait_check,    // iteration            stage                  satisfied (0/1)        -
    iteration_suspend,   // iteration            since (running)        stage (waits on i-1)   slot
    iteration_resume,    // iteration            since (suspended)      stage                  slot
    throttle_suspend,    // live iterations      K                      -                      -
    throttle_resume,     // live iterations      since (throttled)      K                      -
    iteration_start,     // iteration            -                      live iterations        slot
    iteration_retire,    // iteration            since (running)        live iterations        slot
    counter,             // counter id           value                  -                      -
    dropped,             // events lost before this one                 -                      -
    // The tbb policy (construct-and-run tokens, seed 000 §2.3): counters carry their own values.
    token_acquire,   // iteration            N (token limit)        tokens in flight       -
    token_release,   // iteration            N (token limit)        tokens in flight       -
    buffer_put,      // iteration            stage (serial filter)  items in its buffer    -
    buffer_take,     // iteration            stage (serial filter)  items in its buffer    -
    // The piper-earliest policy (seed 003 §4): its suspended list, and where it resumed from.
    suspended_iterations,   // suspended iterations (after the change)    -                      -
    earliest_resume,        // iteration            suspended iterations   earliest_point         slot
    // The bind-to-stage policy (seed 000 §2.1, §3.1): stage threads that are not scheduler workers,
    // bounded queues between stages, reorder buffers of serial_in_order stages.
    thread_name,      // stage                thread in the stage    stage_kind             -
    queue_put,        // iteration            queue (= its stage j)  fill after the put     -
    queue_take,       // iteration            queue (= its stage j)  fill after the take    -
    blocked_begin,    // queue (= stage j)    -                      blocked_on             -
    blocked_end,      // queue (= stage j)    -                      blocked_on             -
    reorder_buffer,   // stage                items in its reorder buffer (after the change) -
    // Every policy: how a loop stopped early (seed-independent; docs/runtime.md, "Errors").
    stage_exception,   // iteration            stage                  -                      -
    loop_cancelled,    // iterations started   -                      -                      -
    // Stage graphs (seed 004 GRAMPS, seed 002 DANBI): node_begin/end carry (instance, stage) there;
    // queue fills and the footprint are `counter` records (graph::counter_names()).
    graph_reserve,      // queue                packets asked          graph_op flags         stage
    graph_commit,       // queue                elements               graph_op flags         stage
    graph_blocked,      // stage                queue                  graph_wait             -
    graph_preempted,    // stage                output packets since resumed                  -
    graph_stage_done,   // stage                -                      -                      -
    // Folded node runs (docs/tracing.md, "Detail levels"): a node_begin opens a run of consecutive
    // nodes one worker ran with nothing of scheduling interest between them; node_fold_end closes it
    // (instead of a node_end). Pipelines: the run covers stages [the begin's stage, last stage] of one
    // iteration, one node per stage. Graphs: `nodes` instances of one stage, the begin's instance first.
    node_fold_end,   // iteration (graphs: last instance)  last stage  nodes in the run  -
    // trace_detail::automatic decided to fold (c = 1) or to keep node slices (c = 0) for a stage
    // (pipelines: every stage of the loop, a = all_stages) from here on, having measured b.
    detail_decision,   // stage                mean node duration (ns)  folded (0/1)        nodes measured (saturated)
    // pipescope::annotate (annotate.hpp; docs/tracing.md, "User annotations"): a key/value for the
    // innermost slice open on the recording thread's track (the node it runs), written with that
    // slice's END. The key is a pointer to a NUL-terminated string of static storage duration.
    annotation,   // key (const char*)    value (bits)           annotation_value       -
    count_        // number of kinds
};

// node_begin's c: bit 0 = entered through stage_wait (the node has a cross edge), bit 1 = the
// iteration was suspended just before and resumed by an iteration_resume (a resumption flow ends here).
inline constexpr std::uint32_t node_waited = 1;
inline constexpr std::uint32_t node_resumed = 2;
// The stage operand of iteration_suspend/resume for the implicit final stage (waiting to retire).
inline constexpr std::uint32_t final_stage_operand = 0xFFFFFFFFu;
// detail_decision's a for a decision about every stage of a pipeline loop.
inline constexpr std::uint64_t all_stages = ~std::uint64_t{0};
// earliest_resume's c: at which of seed 003's three points the earliest suspended iteration was resumed.
// blocked_begin/end's c: the thread waits because the queue it pushes to is full, or the one it
// takes from is empty (bind-to-stage; the thread really blocks on a condition variable).
enum class blocked_on : std::uint32_t { full = 0, empty = 1 };
enum class earliest_point : std::uint32_t { retire = 0, suspend = 1, steal_found_nothing = 2 };

// graph_reserve / graph_commit's c: bit 0 = pop side (else push), bit 1 = success (reserve: the window
// was granted; commit: the data was published now, not left waiting for an earlier ticket).
inline constexpr std::uint32_t graph_op_pop = 1;
inline constexpr std::uint32_t graph_op_ok = 2;
// graph_blocked's c: what a stage waits for (a serial stage suspends; a parallel one is not runnable).
enum class graph_wait : std::uint32_t { full = 0, empty = 1, order = 2 };

// annotation's c: how b holds the value.
enum class annotation_value : std::uint32_t { int64 = 0, float64 = 1, uint64 = 2 };

std::string_view event_name(event_kind k) noexcept;

struct event_record {
    std::uint64_t ticks;   // now_ticks() when it happened
    std::uint64_t a;
    std::uint64_t b;
    std::uint32_t c;
    event_kind kind;
    std::uint8_t reserved;
    std::uint16_t d;
};
static_assert(sizeof(event_record) == 32, "records are written by plain stores; keep them one half cache line");

}   // namespace pipescope::trace
