// Export of a trace model as Chrome trace-event JSON (perfetto-format.md §8), for tools that do
// not read Perfetto protobuf:
//
//   {"traceEvents":[...],"displayTimeUnit":"ns","metadata":{...}}
//
// One pid per run (its process pid; tracks outside any run under pid 0), one tid per track
// (a thread track's tid; other tracks get synthetic tids), "M" process_name/thread_name events,
// slices as "X" (ts/dur in microseconds, fractional with ns precision), instants as "i" with
// s:"t", counters as "C", flows as "s"/"f" pairs (bp:"e": bound to the enclosing slices), and
// every annotation in "args". The output is streamed, not built in memory.
#pragma once

#include <pipescope/trace/trace_model.hpp>

#include <cstdint>
#include <filesystem>
#include <iosfwd>

namespace pipescope::trace {

struct chrome_json_stats {
    std::uint64_t events = 0, slices = 0, instants = 0, counters = 0, flows = 0, metadata = 0;
};

chrome_json_stats write_chrome_json(const trace_model& m, std::ostream& out);
// Writes `path` whole or not at all (atomic_output.hpp: a temporary file renamed into place); a
// path that cannot be an output file throws output_path_error, a failed write output_error, both
// naming the file and why.
chrome_json_stats write_chrome_json(const trace_model& m, const std::filesystem::path& path);

// The pid and tid a track is exported under.
std::int64_t chrome_pid(const trace_model& m, std::uint32_t track);
std::int64_t chrome_tid(const trace_model& m, std::uint32_t track);

}   // namespace pipescope::trace
