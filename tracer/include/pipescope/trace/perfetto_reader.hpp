// Reads a Perfetto protobuf trace (ours or any TrackEvent trace).
//
// Two layers:
//  - decode_perfetto(): a streaming decoder that walks the packets (including the inner packets of
//    `compressed_packets`), keeps the per-sequence state (interning tables, packet defaults,
//    incremental-state flags), interns every string once in a string_table and hands each track
//    descriptor and track event to a visitor. It never allocates per event in steady state; this
//    is what the trace model (trace_model.hpp) is built on.
//  - read_perfetto(): a convenience form that materializes a flat list of tracks and events with
//    their strings resolved (behind `pipescope validate` and the tests).
//
// Both collect violations of the importer's rules (see docs/tracing.md) as `problems`, each naming
// its byte offset. Malformed wire data — truncation, wrong wire types, lengths past the end,
// nesting deeper than read_options::max_depth, compressed data that is corrupt or expands beyond
// the limits — throws proto::decode_error naming the byte offset (for data inside a compressed
// packet: "byte X (inside the compressed packet at byte Y): ..."; offset() is then Y). Nothing
// else is thrown for malformed input (std::bad_alloc aside). Unknown fields are skipped.
#pragma once

#include <pipescope/trace/proto_reader.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pipescope::trace {

// ---------------------------------------------------------------------------------------------
// Limits

struct read_options {
    // Sum of the decompressed sizes of all compressed_packets in one file.
    std::uint64_t max_decompressed_bytes = std::uint64_t{1} << 30;
    // One compressed packet may expand to at most ratio x its compressed size (plus the allowance).
    std::uint64_t max_compression_ratio = 256;
    std::uint64_t compression_allowance = std::uint64_t{1} << 20;
    // Nesting depth of messages (debug annotation dicts/arrays are the only recursive ones).
    unsigned max_depth = 64;
    // Files at least this large have their compressed_packets inflated by a second thread ahead of
    // the decoder (same results, same errors; tracer/src/inflate_ahead.hpp). ~0 turns it off.
    std::uint64_t inflate_ahead_min_bytes = std::uint64_t{4} << 20;
    // Malformed wire data ends the decoding instead of throwing: every packet decoded before it is
    // kept and the visitor's on_damage gets the error, as Perfetto's UI shows a truncated trace up
    // to the damage with an error naming it (the viewer reads files so). Off: decode_error is thrown.
    bool stop_at_damage = false;
    // A last top-level packet that runs past the end of the file (its tag, length or payload cut
    // off: a recording killed mid-write) ends the decoding instead of throwing: every packet before
    // it is decoded and the visitor's on_cut_short gets where it starts. Damage anywhere else is
    // still a decode error. Off: decode_error is thrown, as for any malformed data.
    bool accept_cut_short = false;
};

// A decode error raised inside the payload of a compressed packet: offset() is the compressed
// packet's offset in the file, inner_offset() the offset in the decompressed data.
class compressed_decode_error : public proto::decode_error {
public:
    compressed_decode_error(std::uint64_t outer, std::uint64_t inner, const std::string& reason);
    const char* what() const noexcept override { return message_.c_str(); }
    std::uint64_t inner_offset() const noexcept { return inner_; }

private:
    std::uint64_t inner_;
    std::string message_;
};

// ---------------------------------------------------------------------------------------------
// Strings, interned once per file. Index 0 is the empty string.

class string_table {
public:
    string_table();
    static constexpr std::uint32_t not_found = 0xFFFFFFFFu;
    std::uint32_t intern(std::string_view s);
    // The index of `s` if it is in the table, else not_found.
    std::uint32_t find(std::string_view s) const;
    const std::string& operator[](std::uint32_t i) const { return strings_[i]; }
    std::size_t size() const { return strings_.size(); }
    // Moves the strings out (the table is empty afterwards).
    std::vector<std::string> take();

private:
    std::deque<std::string> strings_;   // stable addresses for the index's keys
    std::unordered_map<std::string_view, std::uint32_t> index_;
};

// ---------------------------------------------------------------------------------------------
// The streaming decoder

enum class arg_kind : std::uint8_t { uint_value, int_value, double_value, bool_value, string_value };

// One debug annotation (nested dicts/arrays are flattened to "a.b" / "a[1]" names).
// bits: the uint/int (two's complement)/bool value, the double's bit pattern, or for strings the
// string_table index.
struct decoded_arg {
    std::uint32_t name = 0;
    arg_kind kind = arg_kind::uint_value;
    std::uint64_t bits = 0;
};

struct decoded_track {
    std::uint64_t offset = 0;   // of the packet
    std::uint64_t uuid = 0, parent = 0;
    std::uint32_t name = 0;   // string index: track name, thread name or process name
    std::int64_t pid = 0, tid = 0;
    bool is_process = false, is_thread = false, is_counter = false;
};

struct decoded_event {
    std::uint64_t offset = 0;         // of the packet (in the decompressed data if compressed)
    std::uint64_t outer_offset = 0;   // of the compressed packet holding it, if compressed
    bool compressed = false;
    std::uint64_t position = 0;   // ordinal of the event in the file (0, 1, 2, ...)
    std::uint64_t ts = 0, seq = 0, flags = 0;
    bool has_ts = false, has_seq = false;
    std::uint64_t type = 0;    // 1 begin, 2 end, 3 instant, 4 counter
    std::uint64_t track = 0;   // explicit, from the sequence's defaults, or 0 (global track)
    std::uint32_t name = 0;    // string index (0: no name)
    std::vector<std::uint32_t> categories;
    std::vector<decoded_arg> args;
    std::vector<std::uint64_t> flows, terminating;
    bool has_counter = false, counter_is_double = false;
    std::int64_t counter_int = 0;
    double counter_double = 0;

    double counter() const { return counter_is_double ? counter_double : static_cast<double>(counter_int); }
};

class perfetto_visitor {
public:
    virtual ~perfetto_visitor() = default;
    virtual void on_track(const decoded_track& t) = 0;
    virtual void on_event(const decoded_event& e) = 0;
    virtual void on_problem(std::string problem) = 0;
    // Called once per TracePacket (outer and inner ones).
    virtual void on_packet() {}
    // With read_options::stop_at_damage: the decode error that ended the decoding (nothing follows).
    // `intact_bytes`: where the top-level packet holding the damage starts; every packet before it
    // was read whole (a damaged compressed packet's inner packets before the damage were too).
    virtual void on_damage(const proto::decode_error&, std::uint64_t /*intact_bytes*/) {}
    // With read_options::accept_cut_short: the file ends inside the top-level packet starting at
    // `intact_bytes` (every packet before it was read whole); `file_bytes` is the file's size.
    virtual void on_cut_short(std::uint64_t /*intact_bytes*/, std::uint64_t /*file_bytes*/) {}
};

// Where the top-level packet (Trace field) at `offset` of `bytes` ends, or 0 when its tag, length or
// payload runs past the end of `bytes` (a file cut short inside it). Malformed framing that does not
// run past the end (a varint of more than ten bytes, a bad wire type) returns the offset itself + 1
// so that the decoder reports it as it always does.
std::uint64_t top_level_field_end(std::string_view bytes, std::uint64_t offset);

// Why `bytes` cannot be a Perfetto protobuf trace, or "" if it may be one. Like Perfetto's trace
// processor, which guesses a file's type from its first bytes, a protobuf trace must start with the
// tag of its first packet (Trace.packet: field 1, length-delimited, the byte 0x0A). The reason names
// what the file looks like instead: empty, text, JSON (a Chrome JSON trace?), gzip, PNG, ...
std::string not_a_trace_reason(std::string_view bytes);

void decode_perfetto(std::string_view bytes, perfetto_visitor& visitor, string_table& strings,
                     const read_options& options = {});

// Replaces invalid UTF-8 sequences by U+FFFD. Returns false (and sets *bad_at to the index of
// the first invalid byte) if there were any.
bool sanitize_utf8(std::string_view in, std::string& out, std::size_t* bad_at = nullptr);

// ---------------------------------------------------------------------------------------------
// The materialized form

struct track_info {
    std::uint64_t uuid = 0;
    std::uint64_t parent = 0;
    std::string name;   // track name, thread name or process name
    std::int64_t pid = 0, tid = 0;
    bool is_process = false, is_thread = false, is_counter = false;
};

struct track_event {
    std::uint64_t offset = 0;   // of the packet in the file (in the decompressed data if compressed)
    std::uint64_t ts = 0, seq = 0, flags = 0;
    bool has_ts = false, has_seq = false;
    std::uint64_t type = 0;   // 1 begin, 2 end, 3 instant, 4 counter
    std::uint64_t track = 0;
    std::string name;
    std::vector<std::string> categories;
    std::vector<std::uint64_t> flows, terminating;
    std::map<std::string, std::uint64_t> args;     // uint, int (two's complement) and bool annotations
    std::map<std::string, double> double_args;     // double annotations
    std::map<std::string, std::string> str_args;   // string annotations
    std::int64_t counter_value = 0;                // integer counter value (double ones: truncated)
    double double_counter_value = 0;               // the counter value as a double, either way
};

struct perfetto_file {
    std::uint64_t packets = 0;
    std::map<std::uint64_t, track_info> tracks;
    std::vector<track_event> events;
    std::vector<std::string> problems;   // rule violations, in file order, each naming its offset
};

perfetto_file read_perfetto(std::string_view bytes, const read_options& options = {});

// What `pipescope validate` prints: counts, whether the slices of every track nest and close, and
// how many pipescope runs began ("run" instants) and how many were finished ("run summary").
struct perfetto_summary {
    std::uint64_t packets = 0, tracks = 0, slices = 0, open_slices = 0, unmatched_ends = 0, instants = 0, flows = 0,
                  counter_values = 0, runs = 0, run_summaries = 0;
    std::uint64_t folded_slices = 0;     // slices of folded node runs ("stage 3–40", "stage 2 ×17")
    std::vector<std::string> problems;   // as perfetto_file::problems
    // Read with read_options::accept_cut_short: `cut_short` when the file ends inside the packet
    // starting at cut_short_at; the summary counts the packets before it.
    bool cut_short = false;
    std::uint64_t cut_short_at = 0, file_bytes = 0;
};
perfetto_summary summarize(const perfetto_file& f);
// The same, computed while decoding: memory grows with tracks and flows, not with events, so a
// file of tens of millions of events is validated in a few hundred MB.
perfetto_summary summarize_perfetto(std::string_view bytes, const read_options& options = {});

}   // namespace pipescope::trace
