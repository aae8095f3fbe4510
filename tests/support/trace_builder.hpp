// Hand-built Perfetto traces for the reader, trace-model and export tests: each call appends one
// TracePacket written with the project's proto::writer, so the expected contents are known exactly.
#pragma once

#include <pipescope/trace/proto_writer.hpp>

#include <zlib.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipescope::test {

namespace tproto = pipescope::trace::proto;

struct trace_builder {
    std::vector<std::uint8_t> bytes;
    tproto::writer w{bytes};

    enum type : std::uint64_t { begin = 1, end = 2, instant = 3, counter = 4 };

    struct event {
        std::uint64_t ts = 0;
        std::uint64_t seq = 1;
        std::uint64_t type = instant;
        std::optional<std::uint64_t> track;   // unset: the sequence's default (or the global track)
        std::string name;                     // inline name (field 23), if not empty
        std::uint64_t name_iid = 0;           // interned name, if not 0
        std::vector<std::pair<std::string, std::uint64_t>> uint_args;
        std::vector<std::pair<std::string, std::string>> str_args;
        std::vector<std::uint64_t> flows, terminating;
        std::optional<std::int64_t> counter_value;
        std::optional<double> double_counter_value;
        std::uint64_t flags = 0;
        std::vector<std::pair<std::uint64_t, std::string>> intern_names;   // interned_data.event_names
        std::optional<std::uint64_t> default_track;                        // trace_packet_defaults
    };

    void process(std::uint64_t uuid, std::int64_t pid, std::string_view name) {
        tproto::nested packet(w, 1);
        tproto::nested td(w, 60);
        w.uint_field(1, uuid);
        tproto::nested pd(w, 3);
        w.int_field(1, pid);
        w.bytes_field(6, name);
    }
    void thread(std::uint64_t uuid, std::int64_t pid, std::int64_t tid, std::string_view name) {
        tproto::nested packet(w, 1);
        tproto::nested td(w, 60);
        w.uint_field(1, uuid);
        tproto::nested thd(w, 4);
        w.int_field(1, pid);
        w.int_field(2, tid);
        w.bytes_field(5, name);
    }
    void custom(std::uint64_t uuid, std::uint64_t parent, std::string_view name) {
        tproto::nested packet(w, 1);
        tproto::nested td(w, 60);
        w.uint_field(1, uuid);
        if (parent) w.uint_field(5, parent);
        w.bytes_field(2, name);
    }
    void counter_track(std::uint64_t uuid, std::uint64_t parent, std::string_view name) {
        tproto::nested packet(w, 1);
        tproto::nested td(w, 60);
        w.uint_field(1, uuid);
        if (parent) w.uint_field(5, parent);
        w.bytes_field(2, name);
        tproto::nested cd(w, 8);
    }

    void add(const event& e) {
        tproto::nested packet(w, 1);
        w.uint_field(8, e.ts);
        w.uint_field(10, e.seq);
        if (e.flags) w.uint_field(13, e.flags);
        if (e.default_track) {
            tproto::nested d(w, 59);
            tproto::nested ted(w, 11);
            w.uint_field(11, *e.default_track);
        }
        if (!e.intern_names.empty()) {
            tproto::nested in(w, 12);
            for (const auto& [iid, name] : e.intern_names) {
                tproto::nested entry(w, 2);
                w.uint_field(1, iid);
                w.bytes_field(2, std::string_view(name));
            }
        }
        tproto::nested te(w, 11);
        w.uint_field(9, e.type);
        if (e.track) w.uint_field(11, *e.track);
        if (!e.name.empty()) w.bytes_field(23, std::string_view(e.name));
        if (e.name_iid) w.uint_field(10, e.name_iid);
        for (const auto& [k, v] : e.uint_args) {
            tproto::nested da(w, 4);
            w.bytes_field(10, std::string_view(k));
            w.uint_field(3, v);
        }
        for (const auto& [k, v] : e.str_args) {
            tproto::nested da(w, 4);
            w.bytes_field(10, std::string_view(k));
            w.bytes_field(6, std::string_view(v));
        }
        if (e.counter_value) w.int_field(30, *e.counter_value);
        if (e.double_counter_value) w.double_field(44, *e.double_counter_value);
        for (auto id : e.flows) w.fixed64_field(47, id);
        for (auto id : e.terminating) w.fixed64_field(48, id);
    }

    // Shorthands.
    void slice_begin(std::uint64_t ts, std::uint64_t track, std::string name,
                     std::vector<std::pair<std::string, std::uint64_t>> args = {}, std::uint64_t seq = 1) {
        event e;
        e.ts = ts, e.seq = seq, e.type = begin, e.track = track, e.name = std::move(name), e.uint_args = std::move(args);
        add(e);
    }
    void slice_end(std::uint64_t ts, std::uint64_t track, std::uint64_t seq = 1) {
        event e;
        e.ts = ts, e.seq = seq, e.type = end, e.track = track;
        add(e);
    }
    void mark(std::uint64_t ts, std::uint64_t track, std::string name,
              std::vector<std::pair<std::string, std::uint64_t>> args = {}, std::vector<std::uint64_t> flows = {},
              std::vector<std::uint64_t> terminating = {}, std::uint64_t seq = 1) {
        event e;
        e.ts = ts, e.seq = seq, e.type = instant, e.track = track, e.name = std::move(name);
        e.uint_args = std::move(args), e.flows = std::move(flows), e.terminating = std::move(terminating);
        add(e);
    }
    void count(std::uint64_t ts, std::uint64_t track, std::int64_t value, std::uint64_t seq = 1) {
        event e;
        e.ts = ts, e.seq = seq, e.type = counter, e.track = track, e.counter_value = value;
        add(e);
    }

    std::string_view view() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
    std::string str() const { return std::string(view()); }
};

// zlib-compresses `data` (a run of Trace.packet records).
inline std::string zlib_compress(std::string_view data, int level = 6) {
    uLongf size = compressBound(static_cast<uLong>(data.size()));
    std::string out(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(data.data()),
                  static_cast<uLong>(data.size()), level) != Z_OK)
        throw std::runtime_error("compress2 failed");
    out.resize(size);
    return out;
}

// One TracePacket whose compressed_packets (field 50) holds `payload`.
inline std::string compressed_packet(std::string_view payload_compressed) {
    std::vector<std::uint8_t> b;
    tproto::writer w(b);
    {
        tproto::nested packet(w, 1);
        w.bytes_field(50, payload_compressed);
    }
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

}   // namespace pipescope::test
