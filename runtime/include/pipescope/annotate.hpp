// pipescope::annotate — attach a small key/value to the node the calling worker runs, for the trace.
//
//     pipescope::pipe_while(sched, more, [&](pipescope::iteration& it) -> pipescope::pipe_task {
//         auto chunk = reader.next();
//         pipescope::annotate("bytes", chunk.size());          // on node (i, 0)
//         co_await it.stage(1);
//         pipescope::annotate("ratio", compress(chunk));        // a double, on node (i, 1)
//         ...
//
// The value shows in the Perfetto UI's slice details ("args": debug.bytes = 4096), in the viewer's
// details panel and timeline tooltip, and in `pipescope export-json`. docs/tracing.md, "User
// annotations", says what a recorded annotation becomes.
//
// Where it goes: to the innermost slice open on the calling thread's track when the call is made —
// the node (pipeline node, graph stage instance or serial resumption) the worker runs, or a fork-join
// task running inside it. On a worker with no slice open (between nodes, e.g. in pipe_while's
// condition) the writer ignores it (and counts it, perfetto_write_stats::annotations_unattached).
// On a thread that records nothing (not a worker, no recorder attached, or the `serial` policy's
// calling thread) it does nothing.
//
// Keys: a string literal or any NUL-terminated string of static storage duration. The record holds
// the pointer (as Tracy's source locations do) and the trace writer reads the text when it converts
// the record, later and on another thread. A key that is one of the runtime's own annotation names
// ("iteration", "stage", ...) is written as "user_<key>". Values: integers (signed ones as int64,
// unsigned ones as uint64) and floating-point numbers (as double); bool counts as an integer.
//
// Cost: with a recorder attached, one 32-byte record (one clock read and a few stores, like every
// other event); without one, a call and one branch; with the runtime built with
// -DPIPESCOPE_TRACING=OFF, nothing (the call compiles away).
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>

namespace pipescope {

namespace detail {
// kind: trace::annotation_value (0 int64, 1 float64, 2 uint64).
void record_annotation(const char* key, std::uint64_t bits, std::uint32_t kind) noexcept;
}   // namespace detail

// The two builds get different inline namespaces, so a program that mixes them breaks no ODR rule.
#if defined(PIPESCOPE_TRACING) && !PIPESCOPE_TRACING
inline namespace annotations_off {
template <class T>
requires std::integral<T> || std::floating_point<T>
inline void annotate(const char*, T) noexcept {}
}   // namespace annotations_off
#else
inline namespace annotations_on {
template <class T>
requires std::integral<T> || std::floating_point<T>
inline void annotate(const char* key, T value) noexcept {
    if constexpr (std::floating_point<T>)
        detail::record_annotation(key, std::bit_cast<std::uint64_t>(static_cast<double>(value)), 1);
    else if constexpr (std::signed_integral<T>)
        detail::record_annotation(key, static_cast<std::uint64_t>(static_cast<std::int64_t>(value)), 0);
    else detail::record_annotation(key, static_cast<std::uint64_t>(value), 2);
}
}   // namespace annotations_on
#endif

}   // namespace pipescope
