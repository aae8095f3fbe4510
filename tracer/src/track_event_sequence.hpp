// One trusted_packet_sequence_id of a trace and the TrackEvent packets written on it: interning of
// event and annotation names per sequence, the sequence flags the importer wants (state cleared on
// the first packet and after a loss, "needs incremental state" on the others), an optional default
// track. Internal to the tracer (the writer's building block).
#pragma once

#include "perfetto_fields.hpp"

#include <pipescope/trace/events.hpp>
#include <pipescope/trace/proto_writer.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pipescope::trace::detail {

// Every distinct event name of a writer, once; events refer to names by id (1-based).
class name_table {
public:
    std::uint32_t id(std::string_view text);
    // A name built on first use for a (kind, number) key, e.g. "stage 3".
    template <class Make>
    std::uint32_t keyed(std::uint64_t key, Make make) {
        auto it = by_key_.find(key);
        if (it != by_key_.end()) return it->second;
        const std::uint32_t i = id(make());
        by_key_.emplace(key, i);
        return i;
    }
    std::string_view text(std::uint32_t id) const { return texts_[id - 1]; }
    bool has_key(std::uint64_t key) const { return by_key_.count(key) != 0; }
    std::size_t size() const noexcept { return texts_.size(); }

private:
    std::deque<std::string> texts_;   // stable addresses for the views in by_text_
    std::unordered_map<std::string_view, std::uint32_t> by_text_;
    std::unordered_map<std::uint64_t, std::uint32_t> by_key_;
};

// Debug annotation names: the vocabulary's fixed set (vocabulary.hpp).
using fields::event_type;
using vocab::arg_key;

struct uint_arg {
    arg_key key;
    std::uint64_t value;
};
struct text_arg {
    arg_key key;
    std::string_view value;
};

// A user annotation (pipescope::annotate) of a slice: its key (a name_table id) and its values
// in recording order, written as one value or, when there are several, as an array.
struct user_value {
    std::uint64_t bits;   // as in event_record::b
    annotation_value kind;
};
struct user_arg {
    std::uint32_t name;
    const user_value* values;
    std::uint32_t count;
};

struct track_event_packet {
    std::uint64_t ts = 0;
    std::uint64_t track = 0;   // 0: the sequence's default track
    event_type type = event_type::instant;
    std::uint32_t name = 0;   // name_table id; 0 for ends and counters (never name an END)
    // Only the first arg_count / text_count are read, so the arrays are left uninitialised: zeroing
    // them made every packet the writer built a `rep stos` over ~150 bytes.
    uint_arg args[6];
    std::uint8_t arg_count = 0;
    text_arg texts[2];
    std::uint8_t text_count = 0;
    std::uint64_t flow = 0;               // flow_ids (0: none)
    std::uint64_t terminating_flow = 0;   // terminating_flow_ids (0: none)
    std::int64_t counter_value = 0;
    const user_arg* users = nullptr;   // user annotations (an END's), user_count of them
    std::uint32_t user_count = 0;

    track_event_packet& arg(arg_key k, std::uint64_t v) {
        args[arg_count++] = {k, v};
        return *this;
    }
    track_event_packet& text(arg_key k, std::string_view v) {
        texts[text_count++] = {k, v};
        return *this;
    }
};

class track_event_sequence {
public:
    track_event_sequence(std::uint32_t id, std::uint64_t default_track) : id_(id), default_track_(default_track) {}

    // Appends the packet to `out`. The hot path of the writer: encoded in place by raw pointer,
    // with one-byte lengths for the (small) nested messages.
    void write(const track_event_packet& e, const name_table& names, std::vector<std::uint8_t>& out);
    // Events were lost before the next packet: it clears the incremental state and says so
    // (previous_packet_dropped), and the names are interned afresh.
    void mark_loss() noexcept { lost_ = true; }

private:
    std::uint64_t intern(std::vector<std::uint64_t>& iids, std::vector<std::uint32_t>& added, std::uint32_t name);
    std::uint64_t intern_name(std::uint32_t name);
    std::uint64_t intern_arg(arg_key k);
    std::uint64_t intern_user_arg(std::uint32_t name);
    template <class Encoder>
    void start_packet(Encoder& w, std::uint64_t ts);

    std::uint32_t id_;
    std::uint64_t default_track_;
    bool first_ = true, lost_ = false, cleared_ = false;
    std::vector<std::uint64_t> name_iids_;   // by name id; 0: not interned on this sequence yet
    std::uint64_t arg_iids_[static_cast<int>(arg_key::count_)]{};
    std::uint64_t next_iid_ = 1;
    std::vector<std::uint32_t> new_names_;
    std::vector<arg_key> new_args_;
    std::vector<std::uint64_t> user_iids_;   // debug annotation names of user keys, by name id (0: not yet)
    std::vector<std::uint32_t> new_users_;
    std::vector<std::uint8_t> scratch_;   // one packet, encoded by raw pointer, then appended
};

}   // namespace pipescope::trace::detail
