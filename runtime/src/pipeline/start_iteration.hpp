// Starting an iteration, shared by the engines: build its frame from the body in the iteration's
// record, then run its stage 0 on the calling worker. A Record holds the iteration's `sync` (its
// iteration_slot), `it` (an engine_iteration), `frame` and the tracer's `line_since`.
#pragma once

#include "../trace_hooks.hpp"
#include "engine_iteration.hpp"

#include <pipescope/pipeline.hpp>

#include <atomic>
#include <cstdint>
#include <exception>

namespace pipescope::detail {

// Whether an engine on `s` ends and begins every node through its hooks (notify_node_end/begin):
// when it records a trace, and on virtual workers, whose node ends are yield points there
// (virtual/virtual_executor.hpp). The iterations' `traced` set-up flag.
inline bool hooks_every_node(scheduler& s) noexcept { return s.impl().tracing() || s.impl().virtual_time(); }

// The set-up of a construct-and-run engine's iteration (tbb, bind-to-stage): no predecessor slot,
// since every boundary goes through admit() (gated), never through the cross edge.
inline engine_iteration::setup gated_setup(pipeline_engine* e, iteration_slot* slot, std::uint64_t i,
                                           pipeline_observer* observer, bool traced) noexcept {
    return {.engine = e,
            .slot = slot,
            .prev_slot = nullptr,
            .index = i,
            .observer = observer,
            .folding = false,
            .eager = false,
            .traced = traced,
            .gated = true};
}

// Builds iteration s.index's frame in record r without running it, and publishes that the record
// holds it. False when the body could not even start (its frame's allocation threw): the exception
// is recorded and there is nothing to unwind.
template <class Record>
bool make_frame(pipeline_engine& e, Record& r, const engine_iteration::setup& s, const pipe_body& body) noexcept {
    r.sync.counter.store(0, std::memory_order_relaxed);
    r.it.reset(s);
    try {
        r.frame = body(r.it).release();
    } catch (...) {
        e.record_exception(std::current_exception());
        return false;
    }
    r.frame.promise().it = &r.it;
    r.sync.index.store(s.index, std::memory_order_release);
    return true;
}

// Runs stage 0 of r's iteration on this worker; the tracer draws it on line `line`, `live`
// iterations in flight.
template <class Record>
void run_stage_zero(pipeline_engine& e, Record& r, pipeline_observer* observer, bool traced, std::uint32_t live,
                    std::uint16_t line) {
    const std::uint64_t i = r.it.index();
    r.line_since = trace_event_at(0, trace::event_kind::iteration_start, i, 0, live, line);
    if (observer) observer->on_iteration_start(i, this_worker_index());
    if (observer || traced) e.notify_node_begin(r.it, false);
    r.frame.resume();
}

}   // namespace pipescope::detail
