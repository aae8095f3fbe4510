#include <pipescope/trace/perfetto_reader.hpp>

#include <set>

namespace pipescope::trace {

namespace {

struct sequence_state {
    bool seen = false;
    std::map<std::uint64_t, std::string> names, arg_names;
};

std::string at(std::uint64_t offset) { return "byte " + std::to_string(offset) + ": "; }

void read_interned(const proto::field& f, sequence_state& s) {
    proto::reader in = proto::reader::nested(f);
    while (!in.done()) {
        const auto e = in.next();
        if (e.number != 2 && e.number != 3) continue;   // event_names, debug_annotation_names
        proto::reader entry = proto::reader::nested(e);
        std::uint64_t iid = 0;
        std::string name;
        while (!entry.done()) {
            const auto x = entry.next();
            if (x.number == 1) iid = x.value;
            if (x.number == 2) name = std::string(x.bytes);
        }
        (e.number == 2 ? s.names : s.arg_names)[iid] = name;
    }
}

void read_descriptor(const proto::field& f, perfetto_file& out) {
    track_info t;
    proto::reader td = proto::reader::nested(f);
    while (!td.done()) {
        const auto x = td.next();
        switch (x.number) {
            case 1: t.uuid = x.value; break;
            case 2: t.name = std::string(x.bytes); break;
            case 5: t.parent = x.value; break;
            case 8: t.is_counter = true; break;
            case 3:
            case 4: {
                (x.number == 3 ? t.is_process : t.is_thread) = true;
                proto::reader d = proto::reader::nested(x);
                while (!d.done()) {
                    const auto y = d.next();
                    if (y.number == 1) t.pid = y.as_int();
                    if (x.number == 4 && y.number == 2) t.tid = y.as_int();
                    if ((x.number == 3 && y.number == 6) || (x.number == 4 && y.number == 5)) t.name = std::string(y.bytes);
                }
                break;
            }
            default: break;
        }
    }
    if (t.uuid == 0) out.problems.push_back(at(f.offset) + "track descriptor without a uuid");
    else out.tracks[t.uuid] = t;
}

void read_event(const proto::field& f, track_event& e, sequence_state& s, perfetto_file& out) {
    proto::reader te = proto::reader::nested(f);
    while (!te.done()) {
        const auto x = te.next();
        switch (x.number) {
            case 9: e.type = x.value; break;
            case 11: e.track = x.value; break;
            case 10:
                if (!s.names.count(x.value)) out.problems.push_back(at(x.offset) + "event name iid " + std::to_string(x.value) + " was never interned");
                else e.name = s.names[x.value];
                break;
            case 23: e.name = std::string(x.bytes); break;
            case 30: e.counter_value = x.as_int(); break;
            case 47:
            case 48:
                if (x.wire_type != 1) out.problems.push_back(at(x.offset) + "flow id not written as fixed64 (the importer drops it)");
                (x.number == 47 ? e.flows : e.terminating).push_back(x.value);
                break;
            case 4: {
                proto::reader da = proto::reader::nested(x);
                std::string key;
                std::uint64_t v = 0;
                while (!da.done()) {
                    const auto y = da.next();
                    if (y.number == 1) {
                        if (!s.arg_names.count(y.value)) out.problems.push_back(at(y.offset) + "annotation name iid never interned");
                        else key = s.arg_names[y.value];
                    }
                    if (y.number == 10) key = std::string(y.bytes);
                    if (y.number == 3 || y.number == 4) v = y.value;
                }
                e.args[key] = v;
                break;
            }
            default: break;
        }
    }
}

}  // namespace

perfetto_file read_perfetto(std::string_view bytes) {
    perfetto_file out;
    std::map<std::uint64_t, sequence_state> seqs;
    proto::reader file(bytes);
    while (!file.done()) {
        const auto pf = file.next();
        if (pf.number != 1 || pf.wire_type != 2) {
            if (pf.number != 1) continue;   // unknown Trace-level fields are ignored, like the importer does
            throw proto::decode_error(pf.offset, "Trace.packet must be length-delimited");
        }
        ++out.packets;
        proto::reader packet = proto::reader::nested(pf);
        track_event e;
        e.offset = pf.offset;
        const proto::field* event_field = nullptr;
        proto::field event_copy, interned;
        bool has_interned = false;
        bool dropped_flag = false;
        while (!packet.done()) {
            const auto fl = packet.next();
            switch (fl.number) {
                case 8: e.has_ts = true; e.ts = fl.value; break;
                case 10: e.has_seq = true; e.seq = fl.value; break;
                case 13: e.flags = fl.value; break;
                case 11: event_copy = fl; event_field = &event_copy; break;
                case 12: interned = fl; has_interned = true; break;
                case 58: out.problems.push_back(at(fl.offset) + "timestamp_clock_id set without a clock snapshot"); break;
                case 42: dropped_flag = fl.value != 0; break;
                case 60: read_descriptor(fl, out); break;
                default: break;
            }
        }
        sequence_state& s = seqs[e.seq];
        if (dropped_flag && !(e.flags & 1))
            out.problems.push_back(at(pf.offset) + "previous_packet_dropped on a packet that does not clear incremental "
                                   "state (the importer then skips the sequence's interned packets)");
        if (e.flags & 1) s.names.clear(), s.arg_names.clear();
        if (has_interned) read_interned(interned, s);
        if (!event_field) continue;
        if (!e.has_ts || !e.has_seq || e.seq == 0)
            out.problems.push_back(at(pf.offset) + "track event without a timestamp or a sequence id (dropped by the importer)");
        if ((e.flags & 2) && !s.seen && !(e.flags & 1))
            out.problems.push_back(at(pf.offset) + "sequence " + std::to_string(e.seq) + " needs incremental state before any packet cleared it");
        s.seen = true;
        read_event(*event_field, e, s, out);
        if (e.type == 2 && !e.name.empty()) out.problems.push_back(at(pf.offset) + "SLICE_END carries a name");
        if (!out.tracks.count(e.track))
            out.problems.push_back(at(pf.offset) + "track " + std::to_string(e.track) + " used before it was described");
        out.events.push_back(std::move(e));
    }
    return out;
}

perfetto_summary summarize(const perfetto_file& f) {
    perfetto_summary s;
    s.packets = f.packets;
    s.tracks = f.tracks.size();
    std::map<std::uint64_t, std::uint64_t> depth;
    std::set<std::uint64_t> flow_ids;
    for (const auto& e : f.events) {
        switch (e.type) {
            case 1: ++s.slices; ++depth[e.track]; break;
            case 2:
                if (depth[e.track] == 0) ++s.unmatched_ends;
                else --depth[e.track];
                break;
            case 3: ++s.instants; break;
            case 4: ++s.counter_values; break;
            default: break;
        }
        for (auto id : e.flows) flow_ids.insert(id);
        for (auto id : e.terminating) flow_ids.insert(id);
    }
    for (const auto& [track, d] : depth) s.open_slices += d;
    s.flows = flow_ids.size();
    return s;
}

}  // namespace pipescope::trace
