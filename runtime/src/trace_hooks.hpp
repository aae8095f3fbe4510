// How the runtime talks to the tracer: one call per event into the calling worker's buffer.
// With tracing built out (PIPESCOPE_TRACING=0) the calls compile to nothing; built in but not
// recording, they cost one predictable branch.
#pragma once

#include "scheduler_impl.hpp"

#include <pipescope/trace/recorder.hpp>

namespace pipescope::detail {

extern thread_local worker* tls_worker;
// A recording thread that is not a worker (a bind-to-stage stage thread) sets its own buffer here
// (scheduler_impl::acquire_thread_buffer); workers record into their worker's buffer.
extern thread_local trace::event_buffer* tls_trace_buffer;
// this_worker_index() of a thread that is not a worker (-1 unless its policy numbers it, from P up).
extern thread_local int tls_thread_index;

// The calling thread's trace buffer: its worker's, else its own (nullptr when not recording).
inline trace::event_buffer* current_trace_buffer() noexcept {
    if (worker* w = tls_worker) return w->trace_buffer();
    return tls_trace_buffer;
}

inline void trace_event(worker& w, trace::event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0,
                        std::uint16_t d = 0) noexcept {
#if PIPESCOPE_TRACING
    if (trace::event_buffer* buf = w.trace_buffer()) [[unlikely]]
        buf->record(k, a, b, c, d);
#else
    (void)w, (void)k, (void)a, (void)b, (void)c, (void)d;
#endif
}

inline void trace_event(trace::event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0,
                        std::uint16_t d = 0) noexcept {
#if PIPESCOPE_TRACING
    if (trace::event_buffer* buf = current_trace_buffer()) [[unlikely]]
        buf->record(k, a, b, c, d);
#else
    (void)k, (void)a, (void)b, (void)c, (void)d;
#endif
}

// Records at a given timestamp; returns the timestamp used (0 when nothing was recorded).
inline std::uint64_t trace_event_at(std::uint64_t ticks, trace::event_kind k, std::uint64_t a = 0, std::uint64_t b = 0,
                                    std::uint32_t c = 0, std::uint16_t d = 0) noexcept {
#if PIPESCOPE_TRACING
    if (trace::event_buffer* buf = current_trace_buffer()) {
        if (ticks == 0) ticks = trace::now_ticks();
        buf->record_at(ticks, k, a, b, c, d);
        return ticks;
    }
#else
    (void)ticks, (void)k, (void)a, (void)b, (void)c, (void)d;
#endif
    return 0;
}

// The clock, if the calling worker records (0 otherwise): for a state whose event is recorded later.
inline std::uint64_t trace_now() noexcept {
#if PIPESCOPE_TRACING
    if (current_trace_buffer()) return trace::now_ticks();
#endif
    return 0;
}

}   // namespace pipescope::detail
