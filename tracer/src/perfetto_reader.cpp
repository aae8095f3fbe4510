#include <pipescope/trace/perfetto_reader.hpp>

#include "inflate_ahead.hpp"
#include "perfetto_fields.hpp"

#include <pipescope/trace/vocabulary.hpp>

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <unordered_set>

namespace pipescope::trace {

// ---------------------------------------------------------------------------------------------

compressed_decode_error::compressed_decode_error(std::uint64_t outer, std::uint64_t inner, const std::string& reason)
    : proto::decode_error(outer, reason),
      inner_(inner),
      message_("byte " + std::to_string(inner) + " (inside the compressed packet at byte " + std::to_string(outer) +
               "): " + reason) {}

string_table::string_table() {
    strings_.emplace_back();
    index_.emplace(std::string_view(strings_.back()), 0);
}

std::uint32_t string_table::find(std::string_view s) const {
    if (s.empty()) return 0;
    auto it = index_.find(s);
    return it == index_.end() ? not_found : it->second;
}

std::uint32_t string_table::intern(std::string_view s) {
    if (s.empty()) return 0;
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(strings_.size());
    strings_.emplace_back(s);
    index_.emplace(std::string_view(strings_.back()), id);
    return id;
}

std::vector<std::string> string_table::take() {
    std::vector<std::string> out;
    out.reserve(strings_.size());
    for (auto& s : strings_) out.push_back(std::move(s));
    strings_.clear();
    index_.clear();
    return out;
}

bool sanitize_utf8(std::string_view in, std::string& out, std::size_t* bad_at) {
    out.clear();
    out.reserve(in.size());
    bool ok = true;
    const auto* p = reinterpret_cast<const unsigned char*>(in.data());
    const std::size_t n = in.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        std::size_t len = 0;
        std::uint32_t cp = 0, min = 0;
        if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07, min = 0x10000;
        bool good = len != 0 && i + len <= n;
        for (std::size_t k = 1; good && k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) good = false;
            else cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (good && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) good = false;
        if (good) {
            out.append(in.substr(i, len));
            i += len;
        } else {
            if (ok && bad_at) *bad_at = i;
            ok = false;
            out.append("\xEF\xBF\xBD");
            ++i;
        }
    }
    return ok;
}

namespace {

using fields::event_type;
using proto::wire;

constexpr std::uint64_t type_of(event_type t) { return static_cast<std::uint64_t>(t); }

// A double counter value as an integer: NaN is 0, values out of range saturate (a plain cast of
// NaN or of 1e300 is undefined behaviour; the fuzzer found a file with a NaN counter).
std::int64_t saturating_int64(double v) noexcept {
    if (std::isnan(v)) return 0;
    if (v >= 9.2233720368547758e18) return std::numeric_limits<std::int64_t>::max();
    if (v <= -9.2233720368547758e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(v);
}

bool is_ascii(std::string_view s) {
    for (char c : s)
        if (static_cast<unsigned char>(c) >= 0x80) return false;
    return true;
}

// Packed varints (a repeated scalar written packed by a foreign writer).
template <class F>
void for_each_packed_varint(std::string_view bytes, std::uint64_t base, F&& fn) {
    std::size_t i = 0;
    while (i < bytes.size()) {
        const std::size_t start = i;
        std::uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            if (i >= bytes.size()) throw proto::decode_error(base + start, "truncated packed varint");
            if (shift > 63) throw proto::decode_error(base + start, "packed varint is longer than 10 bytes");
            const auto b = static_cast<std::uint8_t>(bytes[i++]);
            v |= std::uint64_t{b & 0x7Fu} << shift;
            if (!(b & 0x80)) break;
        }
        fn(v);
    }
}

const char* wire_name(std::uint8_t w) {
    switch (static_cast<wire>(w)) {
        case wire::varint: return "varint";
        case wire::i64: return "fixed64";
        case wire::len: return "length-delimited";
        case wire::i32: return "fixed32";
        default: return "?";
    }
}

// An iid -> string index table: dense for small iids, hashed beyond.
class iid_table {
public:
    static constexpr std::uint32_t none = 0xFFFFFFFFu;
    std::uint32_t find(std::uint64_t iid) const {
        if (iid < dense_.size()) return dense_[iid];
        if (iid < dense_limit) return none;
        auto it = sparse_.find(iid);
        return it == sparse_.end() ? none : it->second;
    }
    void set(std::uint64_t iid, std::uint32_t s) {
        if (iid < dense_limit) {
            if (iid >= dense_.size()) dense_.resize(iid + 1, none);
            dense_[iid] = s;
        } else {
            sparse_[iid] = s;
        }
    }
    void clear() {
        dense_.clear();
        sparse_.clear();
    }

private:
    static constexpr std::uint64_t dense_limit = 1 << 16;
    std::vector<std::uint32_t> dense_;
    std::unordered_map<std::uint64_t, std::uint32_t> sparse_;
};

struct sequence_state {
    bool seen = false;      // some packet of this sequence was read
    bool cleared = false;   // some packet cleared the incremental state
    bool valid = true;      // false after previous_packet_dropped without a clear
    iid_table names, arg_names, categories, string_values;
    bool has_default_track = false;
    std::uint64_t default_track = 0;
    std::uint64_t last_checked_track = ~std::uint64_t{0};
};

class decoder {
public:
    decoder(perfetto_visitor& v, string_table& s, const read_options& o) : v_(v), strings_(s), opt_(o) {}
    ~decoder() {
        if (z_ready_) inflateEnd(&z_);
    }
    decoder(const decoder&) = delete;
    decoder& operator=(const decoder&) = delete;

    void run(std::string_view bytes) {
        if (bytes.size() >= opt_.inflate_ahead_min_bytes) ahead_ = std::make_unique<detail::inflate_ahead>(bytes, opt_);
        if (!opt_.stop_at_damage) {
            read_trace(bytes, 0);
            return;
        }
        // The packets before the damage have been handed to the visitor whole: a packet is
        // decoded completely before any of it is visited (a compressed packet's inner ones each).
        try {
            read_trace(bytes, 0);
        } catch (const proto::decode_error& e) {
            v_.on_damage(e, packet_start_);
        }
    }

private:
    // -- offsets and problems ---------------------------------------------------------------------
    std::string at(std::uint64_t offset) const {
        if (in_compressed_)
            return "byte " + std::to_string(offset) + " (inside the compressed packet at byte " + std::to_string(outer_) +
                   "): ";
        return "byte " + std::to_string(offset) + ": ";
    }
    void problem(std::uint64_t offset, const std::string& what) { v_.on_problem(at(offset) + what); }

    static void expect(const proto::field& f, wire w, const char* what) {
        if (!f.is(w))
            throw proto::decode_error(f.offset, std::string(what) + " (field " + std::to_string(f.number) +
                                                    ") has wire type " + wire_name(f.wire_type) + ", expected " +
                                                    wire_name(static_cast<std::uint8_t>(w)));
    }
    static void expect_varint(const proto::field& f, const char* what) { expect(f, wire::varint, what); }

    // A string field: validated as UTF-8 (invalid bytes replaced by U+FFFD, with a problem) and interned.
    std::uint32_t text(const proto::field& f, const char* what) {
        expect(f, wire::len, what);
        // A string already in the table is valid UTF-8 (only valid or sanitized strings go in):
        // only new strings are checked, once.
        if (const auto id = strings_.find(f.bytes); id != string_table::not_found) return id;
        if (is_ascii(f.bytes)) return strings_.intern(f.bytes);
        std::size_t bad = 0;
        if (!sanitize_utf8(f.bytes, scratch_, &bad)) {
            problem(f.bytes_offset + bad, std::string(what) + " is not valid UTF-8 (invalid bytes replaced by U+FFFD)");
        }
        return strings_.intern(scratch_);
    }

    // -- the outer loop -----------------------------------------------------------------------------
    void read_trace(std::string_view bytes, std::uint64_t base) {
        proto::reader file(bytes, base);
        proto::field pf;
        while (!file.done()) {
            if (!in_compressed_) {
                packet_start_ = file.offset();
                if (opt_.accept_cut_short && top_level_field_end(bytes, packet_start_ - base) == 0) {
                    v_.on_cut_short(packet_start_, base + bytes.size());
                    return;
                }
            }
            file.next(pf);
            if (pf.number != fields::trace_packet)
                continue;   // unknown Trace-level fields are ignored, like the importer does
            if (!pf.is(wire::len)) throw proto::decode_error(pf.offset, "Trace.packet must be length-delimited");
            read_packet(pf);
        }
    }

    // What an event takes from its packet: TracePacket.timestamp, sequence id and flags.
    struct packet_header {
        std::uint64_t ts = 0, seq = 0, flags = 0;
        bool has_ts = false, has_seq = false;
    };

    // The packet's fields are gathered first and acted on after, whatever their order in the
    // packet: its compressed packets and descriptor, then its sequence's state, then its event.
    // The gathered fields stay locals here: gathered into a struct by a helper, they cost the
    // decoder 5-8 % more instructions (cachegrind, `pipescope stats` of a 1 MB pipe-fib trace).
    void read_packet(const proto::field& pf) {
        v_.on_packet();
        proto::reader packet = proto::reader::nested(pf);
        proto::field event_f, interned_f, descriptor_f, defaults_f, compressed_f;
        bool has_event = false, has_interned = false, has_descriptor = false, has_defaults = false, has_compressed = false;
        bool dropped_flag = false, cleared_flag = false;
        packet_header h;
        proto::field fl;
        while (!packet.done()) {
            packet.next(fl);
            switch (fl.number) {
                case fields::timestamp:
                    expect_varint(fl, "TracePacket.timestamp");
                    h.has_ts = true;
                    h.ts = fl.value;
                    break;
                case fields::sequence_id:
                    expect_varint(fl, "TracePacket.trusted_packet_sequence_id");
                    h.has_seq = true;
                    h.seq = fl.value;
                    break;
                case fields::sequence_flags:
                    expect_varint(fl, "TracePacket.sequence_flags");
                    h.flags = fl.value;
                    break;
                case fields::track_event: keep(fl, "TracePacket.track_event", event_f, has_event); break;
                case fields::interned_data: keep(fl, "TracePacket.interned_data", interned_f, has_interned); break;
                case fields::incremental_state_cleared:
                    expect_varint(fl, "TracePacket.incremental_state_cleared");
                    cleared_flag = fl.value != 0;
                    break;
                case fields::previous_packet_dropped:
                    expect_varint(fl, "TracePacket.previous_packet_dropped");
                    dropped_flag = fl.value != 0;
                    break;
                case fields::compressed_packets:
                    keep(fl, "TracePacket.compressed_packets", compressed_f, has_compressed);
                    break;
                case fields::timestamp_clock_id:
                    problem(fl.offset, "timestamp_clock_id set without a clock snapshot");
                    break;
                case fields::trace_packet_defaults:
                    keep(fl, "TracePacket.trace_packet_defaults", defaults_f, has_defaults);
                    break;
                case fields::track_descriptor: keep(fl, "TracePacket.track_descriptor", descriptor_f, has_descriptor); break;
                default: break;
            }
        }
        if (has_compressed) {
            if (in_compressed_)
                throw proto::decode_error(compressed_f.offset, "compressed_packets nested inside compressed_packets");
            read_compressed(compressed_f, pf.offset);
        }
        if (has_descriptor) read_descriptor(descriptor_f, pf.offset);

        sequence_state& s = sequence(h.seq);
        apply_sequence_flags(s, h.flags, dropped_flag, cleared_flag, pf.offset);
        if (has_defaults) read_defaults(defaults_f, s);
        if (has_interned) read_interned(interned_f, s);
        if (!has_event) {
            if (h.has_seq || has_interned) s.seen = true;
            return;
        }
        read_packet_event(event_f, h, s, pf.offset);
    }

    // A length-delimited field to read once the whole packet is scanned (the last one of its number wins).
    [[gnu::always_inline]] static void keep(const proto::field& fl, const char* what, proto::field& to, bool& has) {
        expect(fl, wire::len, what);
        to = fl;
        has = true;
    }

    // Incremental state: cleared by the packet's flags; invalid after a packet was dropped, until cleared.
    [[gnu::always_inline]] void apply_sequence_flags(sequence_state& s, std::uint64_t flags, bool dropped_flag,
                                                     bool cleared_flag, std::uint64_t offset) {
        const bool clears = (flags & fields::seq_incremental_state_cleared) != 0;
        if (dropped_flag && !clears && !cleared_flag)
            problem(offset, "previous_packet_dropped on a packet that does not clear incremental "
                            "state (the importer then skips the sequence's interned packets)");
        if (clears || cleared_flag) {
            s.names.clear(), s.arg_names.clear(), s.categories.clear(), s.string_values.clear();
            s.has_default_track = false;
            s.cleared = true;
            s.valid = true;
        } else if (dropped_flag) {
            s.valid = false;
        }
    }

    // The packet's TrackEvent, decoded into event_ (reused from event to event) and handed to the visitor.
    [[gnu::always_inline]] void read_packet_event(const proto::field& event_f, const packet_header& h, sequence_state& s,
                                                  std::uint64_t offset) {
        decoded_event& e = event_;
        e.offset = offset;
        e.compressed = in_compressed_;
        e.outer_offset = in_compressed_ ? outer_ : 0;
        e.position = position_++;
        e.ts = h.ts, e.seq = h.seq, e.flags = h.flags, e.has_ts = h.has_ts, e.has_seq = h.has_seq;
        if (!h.has_ts || !h.has_seq || h.seq == 0)
            problem(offset, "track event without a timestamp or a sequence id (dropped by the importer)");
        if ((h.flags & fields::seq_needs_incremental_state) && !s.cleared)
            problem(offset, "sequence " + std::to_string(h.seq) + " needs incremental state before any packet cleared it");
        s.seen = true;
        read_event(event_f, e, s);
        if (e.type == type_of(event_type::slice_end) && e.name != 0) problem(offset, "SLICE_END carries a name");
        if (e.track != 0 && e.track != s.last_checked_track) {
            if (!described_.count(e.track))
                problem(offset, "track " + std::to_string(e.track) + " used before it was described");
            else s.last_checked_track = e.track;
        }
        v_.on_event(e);
    }

    sequence_state& sequence(std::uint64_t seq) {
        if (last_seq_ && last_seq_id_ == seq) return *last_seq_;
        auto& p = seqs_[seq];
        if (!p) p = std::make_unique<sequence_state>();
        last_seq_ = p.get();
        last_seq_id_ = seq;
        return *p;
    }

    // -- compressed packets -------------------------------------------------------------------------
    void read_compressed(const proto::field& f, std::uint64_t packet_offset) {
        const std::uint64_t total_left =
            opt_.max_decompressed_bytes > decompressed_total_ ? opt_.max_decompressed_bytes - decompressed_total_ : 0;
        // Inflated ahead by another thread (large files; inflate_ahead.hpp), or here: the same
        // bytes, and on any error the same message, because a packet that failed ahead is
        // inflated again here, where the error is raised.
        detail::inflated_packet ahead;
        const bool got = ahead_ && ahead_->take(f.bytes_offset, ahead);
        if (got) {
            in_view_ = std::string_view(ahead.data.get(), ahead.size);
        } else {
            const detail::inflate_result r = detail::inflate_packet(z_, z_ready_, f, total_left, opt_, out_, out_capacity_);
            ahead.size = r.size;
            ahead.trailing_at = r.trailing_at;
            in_view_ = std::string_view(out_.get(), r.size);
        }
        const std::size_t out_size = ahead.size;
        if (ahead.trailing_at)
            problem(*ahead.trailing_at, "compressed_packets: data after the end of the zlib stream (ignored)");
        decompressed_total_ += out_size;
        in_compressed_ = true;
        outer_ = packet_offset;
        try {
            read_trace(in_view_, 0);
            if (got) ahead_->give_back(std::move(ahead.data), ahead.capacity);
        } catch (const compressed_decode_error&) {
            in_compressed_ = false;
            throw;
        } catch (const proto::decode_error& e) {
            in_compressed_ = false;
            const std::string what = e.what();
            const std::string prefix = "byte " + std::to_string(e.offset()) + ": ";
            throw compressed_decode_error(packet_offset, e.offset(),
                                          what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
        }
        in_compressed_ = false;
    }

    // -- descriptors, defaults, interning -----------------------------------------------------------
    void read_descriptor(const proto::field& f, std::uint64_t packet_offset) {
        decoded_track t;
        t.offset = packet_offset;
        bool has_uuid = false;
        std::uint32_t td_name = 0, sub_name = 0;
        proto::reader td = proto::reader::nested(f);
        while (!td.done()) {
            const auto x = td.next();
            switch (x.number) {
                case fields::td_uuid:
                    expect_varint(x, "TrackDescriptor.uuid");
                    t.uuid = x.value;
                    has_uuid = true;
                    break;
                case fields::td_name: td_name = text(x, "track name"); break;
                case fields::td_parent_uuid:
                    expect_varint(x, "TrackDescriptor.parent_uuid");
                    t.parent = x.value;
                    break;
                case fields::td_counter:
                    expect(x, wire::len, "TrackDescriptor.counter");
                    t.is_counter = true;
                    break;
                case fields::td_process:
                case fields::td_thread: {
                    const bool process = x.number == fields::td_process;
                    expect(x, wire::len, process ? "TrackDescriptor.process" : "TrackDescriptor.thread");
                    (process ? t.is_process : t.is_thread) = true;
                    proto::reader d = proto::reader::nested(x);
                    static_assert(fields::pd_pid == fields::thd_pid);
                    while (!d.done()) {
                        const auto y = d.next();
                        if (y.number == fields::pd_pid) expect_varint(y, "pid"), t.pid = static_cast<std::int32_t>(y.value);
                        if (!process && y.number == fields::thd_tid) expect_varint(y, "tid"), t.tid = y.as_int();
                        if ((process && y.number == fields::pd_process_name) ||
                            (!process && y.number == fields::thd_thread_name))
                            sub_name = text(y, process ? "process name" : "thread name");
                    }
                    break;
                }
                default: break;
            }
        }
        t.name = sub_name ? sub_name : td_name;
        if (!has_uuid || t.uuid == 0) {
            problem(f.offset, "track descriptor without a uuid");
            return;
        }
        described_.insert(t.uuid);
        v_.on_track(t);
    }

    void read_defaults(const proto::field& f, sequence_state& s) {
        proto::reader d = proto::reader::nested(f);
        while (!d.done()) {
            const auto x = d.next();
            if (x.number != fields::tpd_track_event_defaults) continue;
            expect(x, wire::len, "TracePacketDefaults.track_event_defaults");
            proto::reader te = proto::reader::nested(x);
            while (!te.done()) {
                const auto y = te.next();
                if (y.number == fields::ted_track_uuid) {
                    expect_varint(y, "TrackEventDefaults.track_uuid");
                    s.has_default_track = true;
                    s.default_track = y.value;
                }
            }
        }
    }

    void read_interned(const proto::field& f, sequence_state& s) {
        proto::reader in = proto::reader::nested(f);
        while (!in.done()) {
            const auto e = in.next();
            iid_table* table = nullptr;
            const char* what = nullptr;
            switch (e.number) {
                case fields::id_event_categories: table = &s.categories, what = "interned category"; break;
                case fields::id_event_names: table = &s.names, what = "interned event name"; break;
                case fields::id_debug_annotation_names: table = &s.arg_names, what = "interned annotation name"; break;
                case fields::id_debug_annotation_string_values:
                    table = &s.string_values, what = "interned annotation string";
                    break;
                default: continue;
            }
            expect(e, wire::len, what);
            proto::reader entry = proto::reader::nested(e);
            std::uint64_t iid = 0;
            std::uint32_t name = 0;
            while (!entry.done()) {
                const auto x = entry.next();
                if (x.number == fields::in_iid) expect_varint(x, "iid"), iid = x.value;
                if (x.number == fields::in_name) name = text(x, what);
            }
            table->set(iid, name);
        }
    }

    // -- events ---------------------------------------------------------------------------------------
    void add_flow(const proto::field& x, std::vector<std::uint64_t>& to) {
        if (x.is(wire::i64)) {
            to.push_back(x.value);
        } else if (x.is(wire::varint)) {
            problem(x.offset, "flow id not written as fixed64 (field " + std::to_string(x.number) +
                                  " as a varint: the importer accepts it, protobuf libraries drop it)");
            to.push_back(x.value);
        } else if (x.is(wire::len)) {
            problem(x.offset, "flow id not written as fixed64 (packed: the importer drops it)");
            if (x.bytes.size() % 8 != 0)
                throw proto::decode_error(x.bytes_offset, "packed fixed64 flow ids: length " +
                                                              std::to_string(x.bytes.size()) + " is not a multiple of 8");
            for (std::size_t i = 0; i < x.bytes.size(); i += 8) {
                std::uint64_t v = 0;
                for (int k = 0; k < 8; ++k) v |= std::uint64_t{static_cast<std::uint8_t>(x.bytes[i + k])} << (8 * k);
                to.push_back(v);
            }
        } else {
            expect(x, wire::i64, "flow id");
        }
    }
    void add_old_flow(const proto::field& x, std::vector<std::uint64_t>& to) {
        if (x.is(wire::len)) {   // packed varints
            for_each_packed_varint(x.bytes, x.bytes_offset, [&](std::uint64_t v) { to.push_back(v); });
            return;
        }
        expect_varint(x, "deprecated flow id");
        to.push_back(x.value);
    }

    void read_event(const proto::field& f, decoded_event& e, sequence_state& s) {
        e.type = 0;
        e.track = s.has_default_track ? s.default_track : 0;
        e.name = 0;
        e.categories.clear();
        e.args.clear();
        e.flows.clear();
        e.terminating.clear();
        e.has_counter = e.counter_is_double = false;
        e.counter_int = 0;
        e.counter_double = 0;
        proto::reader te = proto::reader::nested(f);
        proto::field x;
        while (!te.done()) {
            te.next(x);
            switch (x.number) {
                case fields::te_type:
                    expect_varint(x, "TrackEvent.type");
                    e.type = x.value;
                    break;
                case fields::te_track_uuid:
                    expect_varint(x, "TrackEvent.track_uuid");
                    e.track = x.value;
                    break;
                case fields::te_name_iid: {
                    expect_varint(x, "TrackEvent.name_iid");
                    const auto n = s.names.find(x.value);
                    if (n == iid_table::none)
                        problem(x.offset, "event name iid " + std::to_string(x.value) + " was never interned");
                    else e.name = n;
                    break;
                }
                case fields::te_name: e.name = text(x, "event name"); break;
                case fields::te_category_iids:
                    if (x.is(wire::len)) {
                        problem(x.offset, "category_iids written packed (the importer reads garbage)");
                        for_each_packed_varint(x.bytes, x.bytes_offset,
                                               [&](std::uint64_t v) { add_category(s, v, x.offset, e); });
                    } else {
                        expect_varint(x, "TrackEvent.category_iids");
                        add_category(s, x.value, x.offset, e);
                    }
                    break;
                case fields::te_categories: e.categories.push_back(text(x, "category")); break;
                case fields::te_counter_value:
                    expect_varint(x, "TrackEvent.counter_value");
                    e.has_counter = true;
                    e.counter_int = x.as_int();
                    break;
                case fields::te_double_counter_value:
                    expect(x, wire::i64, "TrackEvent.double_counter_value");
                    e.has_counter = true;
                    e.counter_is_double = true;
                    e.counter_double = x.as_double();
                    break;
                case fields::te_flow_ids: add_flow(x, e.flows); break;
                case fields::te_terminating_flow_ids: add_flow(x, e.terminating); break;
                case fields::te_flow_ids_old: add_old_flow(x, e.flows); break;
                case fields::te_terminating_flow_ids_old: add_old_flow(x, e.terminating); break;
                case fields::te_debug_annotations:
                    expect(x, wire::len, "TrackEvent.debug_annotations");
                    if (!simple_annotation(x, s, e)) read_annotation(x, s, e, 0, std::string_view(), 1);
                    break;
                default: break;
            }
        }
    }

    void add_category(sequence_state& s, std::uint64_t iid, std::uint64_t offset, decoded_event& e) {
        const auto c = s.categories.find(iid);
        if (c == iid_table::none) problem(offset, "category iid " + std::to_string(iid) + " was never interned");
        else e.categories.push_back(c);
    }

    // The common case of a top-level DebugAnnotation: an interned name and a scalar value or an
    // interned string, nothing else. Returns false, having changed nothing, for anything else
    // (read_annotation then reads it, reporting what there is to report).
    bool simple_annotation(const proto::field& f, sequence_state& s, decoded_event& e) {
        if (opt_.max_depth == 0) return false;
        proto::reader da = proto::reader::nested(f);
        proto::field y;
        decoded_arg a;
        bool has_value = false;
        while (!da.done()) {
            da.next(y);
            if (!y.is(y.number == fields::da_double_value ? wire::i64 : wire::varint)) return false;
            switch (y.number) {
                case fields::da_name_iid: {
                    const auto n = s.arg_names.find(y.value);
                    if (n == iid_table::none || n == 0) return false;
                    a.name = n;
                    break;
                }
                case fields::da_bool_value: a.kind = arg_kind::bool_value, a.bits = y.value != 0, has_value = true; break;
                case fields::da_uint_value:
                case fields::da_pointer_value: a.kind = arg_kind::uint_value, a.bits = y.value, has_value = true; break;
                case fields::da_int_value: a.kind = arg_kind::int_value, a.bits = y.value, has_value = true; break;
                case fields::da_double_value: a.kind = arg_kind::double_value, a.bits = y.value, has_value = true; break;
                case fields::da_string_value_iid: {
                    const auto v = s.string_values.find(y.value);
                    if (v == iid_table::none) return false;
                    a.kind = arg_kind::string_value, a.bits = v, has_value = true;
                    break;
                }
                default: return false;
            }
        }
        if (!has_value || a.name == 0) return false;
        e.args.push_back(a);
        return true;
    }

    // A DebugAnnotation; `prefix` is the flattened name of the enclosing dict/array (empty at top level).
    void read_annotation(const proto::field& f, sequence_state& s, decoded_event& e, unsigned depth, std::string_view prefix,
                         int top_level) {
        if (depth >= opt_.max_depth)
            throw proto::decode_error(f.offset, "messages nested deeper than " + std::to_string(opt_.max_depth) +
                                                    " levels (debug annotation dict/array)");
        proto::reader da = proto::reader::nested(f);
        std::uint32_t key = 0;
        bool has_value = false;
        decoded_arg a;
        // Children are read after the name is known; remember them.
        std::vector<proto::field> dict, array;
        while (!da.done()) {
            const auto y = da.next();
            switch (y.number) {
                case fields::da_name_iid: {
                    expect_varint(y, "DebugAnnotation.name_iid");
                    const auto n = s.arg_names.find(y.value);
                    if (n == iid_table::none)
                        problem(y.offset, "annotation name iid " + std::to_string(y.value) + " never interned");
                    else key = n;
                    break;
                }
                case fields::da_name: key = text(y, "annotation name"); break;
                case fields::da_bool_value:
                    expect_varint(y, "DebugAnnotation.bool_value");
                    a.kind = arg_kind::bool_value, a.bits = y.value != 0, has_value = true;
                    break;
                case fields::da_uint_value:
                case fields::da_pointer_value:
                    expect_varint(y, "DebugAnnotation.uint_value");
                    a.kind = arg_kind::uint_value, a.bits = y.value, has_value = true;
                    break;
                case fields::da_int_value:
                    expect_varint(y, "DebugAnnotation.int_value");
                    a.kind = arg_kind::int_value, a.bits = y.value, has_value = true;
                    break;
                case fields::da_double_value:
                    expect(y, wire::i64, "DebugAnnotation.double_value");
                    a.kind = arg_kind::double_value, a.bits = y.value, has_value = true;
                    break;
                case fields::da_string_value:
                case fields::da_legacy_json_value:
                    a.kind = arg_kind::string_value, a.bits = text(y, "annotation string"), has_value = true;
                    break;
                case fields::da_string_value_iid: {
                    expect_varint(y, "DebugAnnotation.string_value_iid");
                    const auto v = s.string_values.find(y.value);
                    if (v == iid_table::none)
                        problem(y.offset, "annotation string iid " + std::to_string(y.value) + " never interned");
                    a.kind = arg_kind::string_value, a.bits = v == iid_table::none ? 0 : v, has_value = true;
                    break;
                }
                case fields::da_dict_entries:
                    expect(y, wire::len, "DebugAnnotation.dict_entries");
                    dict.push_back(y);
                    break;
                case fields::da_array_values:
                    expect(y, wire::len, "DebugAnnotation.array_values");
                    array.push_back(y);
                    break;
                default: break;
            }
        }
        const std::uint32_t full = annotation_name(f, key, has_value || !dict.empty() || !array.empty(), prefix, top_level);
        if (has_value) {
            a.name = full;
            e.args.push_back(a);
        }
        if (dict.empty() && array.empty()) return;
        const std::string base = strings_[full];
        for (const auto& d : dict)
            read_annotation(d, s, e, depth + 1, base.empty() ? std::string_view("?") : std::string_view(base), 0);
        for (std::size_t i = 0; i < array.size(); ++i) {
            const std::string n = base + "[" + std::to_string(i) + "]";
            read_annotation(array[i], s, e, depth + 1, n, -1);
        }
    }

    // The annotation's flattened name: "prefix.key" in a dict, the prefix itself ("a[3]") in an array.
    // (Only this part leaves read_annotation: moving its scan out too, or even a helper for the
    // dict/array cases, cost read_trace ~5 % more instructions under cachegrind with GCC 12,
    // though read_annotation is not inlined there.)
    std::uint32_t annotation_name(const proto::field& f, std::uint32_t key, bool has_content, std::string_view prefix,
                                  int top_level) {
        if (!prefix.empty() && top_level < 0) return strings_.intern(prefix);
        if (!prefix.empty()) {
            std::string n(prefix);
            n += '.';
            n += strings_[key];
            return strings_.intern(n);
        }
        if (key == 0 && top_level > 0 && has_content) problem(f.offset, "debug annotation without a name");
        return key;
    }

    perfetto_visitor& v_;
    string_table& strings_;
    const read_options& opt_;
    std::unordered_map<std::uint64_t, std::unique_ptr<sequence_state>> seqs_;
    sequence_state* last_seq_ = nullptr;
    std::uint64_t last_seq_id_ = 0;
    std::unordered_set<std::uint64_t> described_;
    decoded_event event_;
    std::uint64_t position_ = 0;
    std::string scratch_;
    bool in_compressed_ = false;
    std::uint64_t packet_start_ = 0;   // of the top-level field being read (stop_at_damage)
    std::uint64_t outer_ = 0;
    std::uint64_t decompressed_total_ = 0;
    z_stream z_{};
    bool z_ready_ = false;
    std::unique_ptr<char[]> out_;   // inflated data of the current compressed packet (inflated here)
    std::size_t out_capacity_ = 0;
    std::string_view in_view_;   // the current compressed packet's inflated data
    std::unique_ptr<detail::inflate_ahead> ahead_;
};

// Builds a perfetto_file.
class file_builder final : public perfetto_visitor {
public:
    file_builder(perfetto_file& out, const string_table& s) : out_(out), s_(s) {}
    void on_packet() override { ++out_.packets; }
    void on_problem(std::string p) override { out_.problems.push_back(std::move(p)); }
    void on_track(const decoded_track& t) override {
        track_info& i = out_.tracks[t.uuid];
        i.uuid = t.uuid;
        i.parent = t.parent;
        i.name = s_[t.name];
        i.pid = t.pid, i.tid = t.tid;
        i.is_process = t.is_process, i.is_thread = t.is_thread, i.is_counter = t.is_counter;
    }
    void on_event(const decoded_event& d) override {
        track_event e;
        e.offset = d.offset;
        e.ts = d.ts, e.seq = d.seq, e.flags = d.flags, e.has_ts = d.has_ts, e.has_seq = d.has_seq;
        e.type = d.type;
        e.track = d.track;
        e.name = s_[d.name];
        for (auto c : d.categories) e.categories.push_back(s_[c]);
        e.flows = d.flows;
        e.terminating = d.terminating;
        for (const auto& a : d.args) {
            const std::string& key = s_[a.name];
            switch (a.kind) {
                case arg_kind::string_value: e.str_args[key] = s_[static_cast<std::uint32_t>(a.bits)]; break;
                case arg_kind::double_value: {
                    double v;
                    std::memcpy(&v, &a.bits, sizeof v);
                    e.double_args[key] = v;
                    break;
                }
                default: e.args[key] = a.bits; break;
            }
        }
        e.counter_value = d.counter_is_double ? saturating_int64(d.counter_double) : d.counter_int;
        e.double_counter_value = d.counter();
        out_.events.push_back(std::move(e));
    }

private:
    perfetto_file& out_;
    const string_table& s_;
};

}   // namespace

std::uint64_t top_level_field_end(std::string_view bytes, std::uint64_t offset) {
    const std::uint64_t size = bytes.size();
    std::uint64_t p = offset;
    // Reads a varint at p: 1 read, 0 the data ends inside it, -1 malformed (more than ten bytes).
    const auto varint = [&](std::uint64_t& value) -> int {
        value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p >= size) return 0;
            const auto b = static_cast<unsigned char>(bytes[p++]);
            value |= static_cast<std::uint64_t>(b & 0x7F) << (shift < 64 ? shift : 63);
            if (!(b & 0x80)) return 1;
        }
        return -1;
    };
    std::uint64_t key = 0, value = 0;
    if (const int r = varint(key); r <= 0) return r == 0 ? 0 : offset + 1;
    switch (key & 7) {
        case 0:
            if (const int r = varint(value); r <= 0) return r == 0 ? 0 : offset + 1;
            return p;
        case 1: return size - p < 8 ? 0 : p + 8;
        case 5: return size - p < 4 ? 0 : p + 4;
        case 2:
            if (const int r = varint(value); r <= 0) return r == 0 ? 0 : offset + 1;
            return value > size - p ? 0 : p + value;
        default: return offset + 1;
    }
}

void decode_perfetto(std::string_view bytes, perfetto_visitor& visitor, string_table& strings, const read_options& options) {
    decoder d(visitor, strings, options);
    d.run(bytes);
}

namespace {

// "a PNG image", "text" ...: what a file that is no protobuf trace looks like, from its first bytes.
std::string looks_like(std::string_view b) {
    const auto starts = [&](std::string_view magic) { return b.substr(0, magic.size()) == magic; };
    if (starts("\x89PNG")) return "a PNG image";
    if (starts("\x1f\x8b")) return "gzip-compressed data (decompress it first)";
    if (starts("PK\x03\x04")) return "a ZIP archive";
    if (starts("\x7f"
               "ELF"))
        return "an executable (ELF)";
    if (starts("\xff\xd8\xff")) return "a JPEG image";
    if (starts("%PDF")) return "a PDF document";
    std::size_t i = 0;
    while (i < b.size() && i < 64 && std::isspace(static_cast<unsigned char>(b[i]))) ++i;
    if (i < b.size() && (b[i] == '{' || b[i] == '['))
        return "JSON (a Chrome JSON trace? pipescope reads Perfetto protobuf traces; `pipescope export-json` goes the other way)";
    const std::size_t n = std::min<std::size_t>(b.size(), 256);
    std::size_t printable = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const auto c = static_cast<unsigned char>(b[k]);
        printable += (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t' || c >= 0x80;
    }
    if (printable == n) {
        std::string first(b.substr(0, std::min<std::size_t>(b.find('\n'), 24)));
        for (auto& c : first)
            if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
        return "text (it begins \"" + first + (first.size() == 24 ? "..." : "") + "\")";
    }
    return fmt::format("binary data starting with the byte 0x{:02X}", static_cast<unsigned char>(b[0]));
}

}   // namespace

std::string not_a_trace_reason(std::string_view bytes) {
    if (bytes.empty()) return "the file is empty";
    if (static_cast<unsigned char>(bytes[0]) == 0x0A) return {};
    return "a Perfetto trace starts with a packet (the byte 0x0A); this is " + looks_like(bytes);
}

perfetto_file read_perfetto(std::string_view bytes, const read_options& options) {
    perfetto_file out;
    string_table strings;
    file_builder b(out, strings);
    decode_perfetto(bytes, b, strings, options);
    return out;
}

namespace {

// Counts one event at a time for a perfetto_summary (both summarize functions feed it).
class summary_counter {
public:
    explicit summary_counter(perfetto_summary& s) : s_(s) {}
    void add(std::uint64_t type, std::uint64_t track, std::string_view name, const std::vector<std::uint64_t>& flows,
             const std::vector<std::uint64_t>& terminating) {
        switch (type) {
            case type_of(event_type::slice_begin):
                ++s_.slices;
                ++depth_[track];
                // A folded node run (docs/tracing.md, "Detail levels"): "stage 3–40" or "stage 2 ×17".
                if (vocab::is_folded_node(name)) ++s_.folded_slices;
                break;
            case type_of(event_type::slice_end): {
                std::uint64_t& d = depth_[track];
                if (d == 0) ++s_.unmatched_ends;
                else --d;
                break;
            }
            case type_of(event_type::instant):
                ++s_.instants;
                s_.runs += name == vocab::run;
                s_.run_summaries += name == vocab::run_summary;
                break;
            case type_of(event_type::counter): ++s_.counter_values; break;
            default: break;
        }
        flow_ids_.insert(flows.begin(), flows.end());
        flow_ids_.insert(terminating.begin(), terminating.end());
    }
    void finish() {
        for (const auto& [track, d] : depth_) s_.open_slices += d;
        s_.flows = flow_ids_.size();
    }

private:
    perfetto_summary& s_;
    std::unordered_map<std::uint64_t, std::uint64_t> depth_;   // open slices per track
    std::unordered_set<std::uint64_t> flow_ids_;
};

class summary_builder final : public perfetto_visitor {
public:
    summary_builder(perfetto_summary& out, const string_table& s) : out_(out), s_(s), counter_(out) {}
    void on_packet() override { ++out_.packets; }
    void on_problem(std::string p) override { out_.problems.push_back(std::move(p)); }
    void on_track(const decoded_track& t) override { tracks_.insert(t.uuid); }
    void on_event(const decoded_event& d) override { counter_.add(d.type, d.track, s_[d.name], d.flows, d.terminating); }
    void on_cut_short(std::uint64_t intact_bytes, std::uint64_t file_bytes) override {
        out_.cut_short = true;
        out_.cut_short_at = intact_bytes;
        out_.file_bytes = file_bytes;
    }
    void finish() {
        counter_.finish();
        out_.tracks = tracks_.size();
    }

private:
    perfetto_summary& out_;
    const string_table& s_;
    summary_counter counter_;
    std::unordered_set<std::uint64_t> tracks_;
};

}   // namespace

perfetto_summary summarize(const perfetto_file& f) {
    perfetto_summary s;
    s.packets = f.packets;
    s.tracks = f.tracks.size();
    s.problems = f.problems;
    summary_counter counter(s);
    for (const auto& e : f.events) counter.add(e.type, e.track, e.name, e.flows, e.terminating);
    counter.finish();
    return s;
}

perfetto_summary summarize_perfetto(std::string_view bytes, const read_options& options) {
    perfetto_summary s;
    string_table strings;
    summary_builder b(s, strings);
    decode_perfetto(bytes, b, strings, options);
    b.finish();
    s.file_bytes = bytes.size();
    return s;
}

}   // namespace pipescope::trace
