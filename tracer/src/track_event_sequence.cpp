#include "track_event_sequence.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

namespace pipescope::trace::detail {

namespace f = fields;

std::uint32_t name_table::id(std::string_view text) {
    if (auto it = by_text_.find(text); it != by_text_.end()) return it->second;
    texts_.emplace_back(text);
    const auto i = static_cast<std::uint32_t>(texts_.size());
    by_text_.emplace(texts_.back(), i);
    return i;
}

// The iid of name table entry `name` in one interning table (iids by name id), new ones listed in `added`.
std::uint64_t track_event_sequence::intern(std::vector<std::uint64_t>& iids, std::vector<std::uint32_t>& added,
                                           std::uint32_t name) {
    if (name >= iids.size()) iids.resize(name + 1, 0);
    std::uint64_t& iid = iids[name];
    if (!iid) {
        iid = next_iid_++;
        added.push_back(name);
    }
    return iid;
}

std::uint64_t track_event_sequence::intern_name(std::uint32_t name) { return intern(name_iids_, new_names_, name); }

std::uint64_t track_event_sequence::intern_arg(arg_key k) {
    std::uint64_t& iid = arg_iids_[static_cast<int>(k)];
    if (!iid) {
        iid = next_iid_++;
        new_args_.push_back(k);
    }
    return iid;
}

std::uint64_t track_event_sequence::intern_user_arg(std::uint32_t name) { return intern(user_iids_, new_users_, name); }

namespace {

static_assert(std::endian::native == std::endian::little, "fixed64 fields are copied as they are in memory");

// Encodes into memory the caller has made big enough (no bounds checks). Nested messages get a
// one-byte length, widened in place in the rare case they exceed 127 bytes.
class raw_encoder {
public:
    explicit raw_encoder(std::uint8_t* p) : p_(p) {}

    void varint(std::uint64_t v) {
        while (v >= 0x80) {
            *p_++ = static_cast<std::uint8_t>(v | 0x80);
            v >>= 7;
        }
        *p_++ = static_cast<std::uint8_t>(v);
    }
    void tag(std::uint32_t field, proto::wire w) { varint((std::uint64_t{field} << 3) | static_cast<std::uint8_t>(w)); }
    void uint_field(std::uint32_t field, std::uint64_t v) {
        tag(field, proto::wire::varint);
        varint(v);
    }
    void int_field(std::uint32_t field, std::int64_t v) { uint_field(field, static_cast<std::uint64_t>(v)); }
    void bool_field(std::uint32_t field, bool v) { uint_field(field, v ? 1 : 0); }
    void fixed64_field(std::uint32_t field, std::uint64_t v) {
        tag(field, proto::wire::i64);
        std::memcpy(p_, &v, 8);
        p_ += 8;
    }
    void bytes_field(std::uint32_t field, std::string_view bytes) {
        tag(field, proto::wire::len);
        varint(bytes.size());
        std::memcpy(p_, bytes.data(), bytes.size());
        p_ += bytes.size();
    }
    std::uint8_t* open(std::uint32_t field) {
        tag(field, proto::wire::len);
        return p_++;
    }
    void close(std::uint8_t* at) {
        const std::size_t len = static_cast<std::size_t>(p_ - at - 1);
        if (len < 0x80) {
            *at = static_cast<std::uint8_t>(len);
            return;
        }
        const std::size_t extra = proto::varint_size(len) - 1;
        std::memmove(at + 1 + extra, at + 1, len);
        p_ += extra;
        raw_encoder(at).varint(len);
    }
    std::uint8_t* pos() const noexcept { return p_; }

private:
    std::uint8_t* p_;
};

// RAII open/close of a nested message.
class scope {
public:
    scope(raw_encoder& w, std::uint32_t field) : w_(w), at_(w.open(field)) {}
    ~scope() { w_.close(at_); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

private:
    raw_encoder& w_;
    std::uint8_t* at_;
};

constexpr std::size_t field_bound = 24;

void write_user_value(raw_encoder& w, const user_value& v) {
    switch (v.kind) {
        case annotation_value::float64: w.fixed64_field(f::da_double_value, v.bits); break;
        case annotation_value::uint64: w.uint_field(f::da_uint_value, v.bits); break;
        default: w.int_field(f::da_int_value, static_cast<std::int64_t>(v.bits)); break;
    }
}

// One value, or an array of the values in recording order.
void write_user_arg(raw_encoder& w, const user_arg& a, std::uint64_t name_iid) {
    scope da(w, f::te_debug_annotations);
    w.uint_field(f::da_name_iid, name_iid);
    if (a.count == 1) return write_user_value(w, a.values[0]);
    for (std::uint32_t i = 0; i < a.count; ++i) {
        scope element(w, f::da_array_values);
        write_user_value(w, a.values[i]);
    }
}   // tag + varint/fixed64 + a nested length widened to 5 bytes

}   // namespace

template <class Encoder>
void track_event_sequence::start_packet(Encoder& w, std::uint64_t ts) {
    w.uint_field(f::timestamp, ts);
    w.uint_field(f::sequence_id, id_);
    if (!cleared_) {
        // First packet, or the first after a loss: clear the sequence's state and set it up again.
        w.uint_field(f::sequence_flags, f::seq_incremental_state_cleared | f::seq_needs_incremental_state);
        if (first_) w.bool_field(f::first_packet_on_sequence, true);
        if (lost_) w.uint_field(f::previous_packet_dropped, 1);
        if (default_track_) {
            scope defaults(w, f::trace_packet_defaults);
            scope te(w, f::tpd_track_event_defaults);
            w.uint_field(f::ted_track_uuid, default_track_);
        }
        first_ = lost_ = false;
        cleared_ = true;
    } else {
        w.uint_field(f::sequence_flags, f::seq_needs_incremental_state);
    }
}

void track_event_sequence::write(const track_event_packet& e, const name_table& names, std::vector<std::uint8_t>& out) {
    if (lost_) {   // interned state is cleared with the next packet: intern everything afresh
        cleared_ = false;
        name_iids_.assign(name_iids_.size(), 0);
        for (auto& iid : arg_iids_) iid = 0;
        user_iids_.assign(user_iids_.size(), 0);
        next_iid_ = 1;
    }
    if (!e.track && !default_track_) throw std::logic_error("track_event_sequence: event without a track");
    new_names_.clear();
    new_args_.clear();
    new_users_.clear();
    const std::uint64_t name_iid = e.name ? intern_name(e.name) : 0;
    std::uint64_t arg_iids[6], text_iids[2];
    for (int i = 0; i < e.arg_count; ++i) arg_iids[i] = intern_arg(e.args[i].key);
    for (int i = 0; i < e.text_count; ++i) text_iids[i] = intern_arg(e.texts[i].key);
    for (std::uint32_t i = 0; i < e.user_count; ++i) intern_user_arg(e.users[i].name);

    // An upper bound of the packet's size, so that it can be encoded by raw pointer.
    std::size_t bound = 12 * field_bound + (e.arg_count + e.text_count) * 4 * field_bound;
    for (int i = 0; i < e.text_count; ++i) bound += e.texts[i].value.size();
    for (std::uint32_t n : new_names_) bound += 4 * field_bound + names.text(n).size();
    bound += new_args_.size() * 4 * field_bound + 32 * new_args_.size();
    for (std::uint32_t i = 0; i < e.user_count; ++i) bound += (2 + e.users[i].count) * 2 * field_bound;
    for (std::uint32_t n : new_users_) bound += 4 * field_bound + names.text(n).size();
    if (scratch_.size() < bound) scratch_.resize(std::max(bound, scratch_.size() * 2));
    raw_encoder w(scratch_.data());
    {
        scope packet(w, f::trace_packet);
        start_packet(w, e.ts);
        if (!new_names_.empty() || !new_args_.empty() || !new_users_.empty()) {
            scope interned(w, f::interned_data);
            for (std::uint32_t n : new_names_) {
                scope entry(w, f::id_event_names);
                w.uint_field(f::in_iid, name_iids_[n]);
                w.bytes_field(f::in_name, names.text(n));
            }
            for (arg_key k : new_args_) {
                scope entry(w, f::id_debug_annotation_names);
                w.uint_field(f::in_iid, arg_iids_[static_cast<int>(k)]);
                w.bytes_field(f::in_name, vocab::key(k));
            }
            for (std::uint32_t n : new_users_) {
                scope entry(w, f::id_debug_annotation_names);
                w.uint_field(f::in_iid, user_iids_[n]);
                w.bytes_field(f::in_name, names.text(n));
            }
        }
        scope te(w, f::track_event);
        w.uint_field(f::te_type, static_cast<std::uint64_t>(e.type));
        if (e.track && e.track != default_track_) w.uint_field(f::te_track_uuid, e.track);
        if (name_iid) w.uint_field(f::te_name_iid, name_iid);
        for (int i = 0; i < e.arg_count; ++i) {
            scope da(w, f::te_debug_annotations);
            w.uint_field(f::da_name_iid, arg_iids[i]);
            w.uint_field(f::da_uint_value, e.args[i].value);
        }
        for (int i = 0; i < e.text_count; ++i) {
            scope da(w, f::te_debug_annotations);
            w.uint_field(f::da_name_iid, text_iids[i]);
            w.bytes_field(f::da_string_value, e.texts[i].value);
        }
        for (std::uint32_t i = 0; i < e.user_count; ++i) write_user_arg(w, e.users[i], user_iids_[e.users[i].name]);
        if (e.type == event_type::counter) w.int_field(f::te_counter_value, e.counter_value);
        if (e.flow) w.fixed64_field(f::te_flow_ids, e.flow);
        if (e.terminating_flow) w.fixed64_field(f::te_terminating_flow_ids, e.terminating_flow);
    }
    out.insert(out.end(), scratch_.data(), w.pos());
}

}   // namespace pipescope::trace::detail
