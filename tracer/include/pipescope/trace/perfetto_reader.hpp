// Reads a Perfetto protobuf trace (ours or any TrackEvent trace) into a flat list of tracks and
// track events, resolving interned names per sequence, and collects violations of the importer's
// rules (see docs/tracing.md). Malformed wire data throws proto::decode_error naming the byte
// offset. This is the first piece of the trace model the viewer and the analysis will read.
#pragma once

#include <pipescope/trace/proto_reader.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::trace {

struct track_info {
    std::uint64_t uuid = 0;
    std::uint64_t parent = 0;
    std::string name;         // track name, thread name or process name
    std::int64_t pid = 0, tid = 0;
    bool is_process = false, is_thread = false, is_counter = false;
};

struct track_event {
    std::uint64_t offset = 0;   // of the packet in the file
    std::uint64_t ts = 0, seq = 0, flags = 0;
    bool has_ts = false, has_seq = false;
    std::uint64_t type = 0;     // 1 begin, 2 end, 3 instant, 4 counter
    std::uint64_t track = 0;
    std::string name;
    std::vector<std::uint64_t> flows, terminating;
    std::map<std::string, std::uint64_t> args;   // unsigned/int debug annotations
    std::int64_t counter_value = 0;
};

struct perfetto_file {
    std::uint64_t packets = 0;
    std::map<std::uint64_t, track_info> tracks;
    std::vector<track_event> events;
    std::vector<std::string> problems;   // rule violations, in file order, each naming its offset
};

perfetto_file read_perfetto(std::string_view bytes);

// What `pipescope validate` prints: counts, and whether the slices of every track nest and close.
struct perfetto_summary {
    std::uint64_t packets = 0, tracks = 0, slices = 0, open_slices = 0, unmatched_ends = 0, instants = 0,
                  flows = 0, counter_values = 0;
};
perfetto_summary summarize(const perfetto_file& f);

}  // namespace pipescope::trace
