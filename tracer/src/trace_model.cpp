#include <pipescope/trace/trace_model.hpp>

#include "graph_footprint.hpp"
#include "perfetto_fields.hpp"

#include <pipescope/trace/run_metadata.hpp>
#include <pipescope/trace/trace_file.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace pipescope::trace {

const char* to_string(track_kind k) {
    switch (k) {
        case track_kind::process: return "process";
        case track_kind::thread: return "thread";
        case track_kind::counter: return "counter";
        case track_kind::line: return "line";
        case track_kind::other: return "other";
    }
    return "?";
}

namespace {

std::optional<std::uint64_t> find_uint(const trace_model& m, std::uint32_t first, std::uint16_t count,
                                       std::string_view name) {
    for (std::uint32_t i = first; i < first + count; ++i) {
        const model_arg& a = m.args[i];
        if (a.kind != arg_kind::string_value && a.kind != arg_kind::double_value && m.strings[a.name] == name)
            return a.bits();
    }
    return std::nullopt;
}

}   // namespace

std::uint32_t trace_model::find_track(std::uint64_t uuid) const {
    for (std::size_t i = 0; i < tracks.size(); ++i)
        if (tracks[i].uuid == uuid) return static_cast<std::uint32_t>(i);
    return no_index;
}

std::optional<std::uint64_t> trace_model::uint_arg(const slice& s, std::string_view name) const {
    return find_uint(*this, s.args_first, s.args_count, name);
}
std::optional<std::uint64_t> trace_model::uint_arg(const instant& i, std::string_view name) const {
    return find_uint(*this, i.args_first, i.args_count, name);
}
std::optional<std::string_view> trace_model::string_arg(const instant& i, std::string_view name) const {
    for (std::uint32_t k = i.args_first; k < i.args_first + i.args_count; ++k)
        if (args[k].kind == arg_kind::string_value && strings[args[k].name] == name)
            return std::string_view(strings[static_cast<std::uint32_t>(args[k].bits())]);
    return std::nullopt;
}

std::string trace_model::arg_text(const model_arg& a) const {
    switch (a.kind) {
        case arg_kind::uint_value: return std::to_string(a.bits());
        case arg_kind::int_value: return std::to_string(static_cast<std::int64_t>(a.bits()));
        case arg_kind::bool_value: return a.bits() ? "true" : "false";
        case arg_kind::double_value: {
            double d;
            const std::uint64_t b = a.bits();
            std::memcpy(&d, &b, sizeof d);
            char buf[32];
            auto r = std::to_chars(buf, buf + sizeof buf, d);
            return std::string(buf, r.ptr);
        }
        case arg_kind::string_value: return strings[static_cast<std::uint32_t>(a.bits())];
    }
    return {};
}

namespace {

namespace v = vocab;
using fields::event_type;
constexpr std::uint64_t type_of(event_type t) { return static_cast<std::uint64_t>(t); }

// An event of a track before sorting and BEGIN/END matching: 24 bytes.
struct raw_event {
    std::uint64_t ts;
    string_id name;
    std::uint32_t args_first;
    std::uint32_t flows_first;
    std::uint16_t args_count;
    std::uint8_t flows_count;
    event_type type;
};

struct raw_flow {
    std::uint64_t id;
    std::uint64_t position;   // of the event in the file
    bool terminating;
};

struct flow_step {
    std::uint64_t ts, position, id;
    bool terminating;
    event_ref ref;
};

std::string where(const decoded_event& e) {
    if (e.compressed)
        return "byte " + std::to_string(e.offset) + " (inside the compressed packet at byte " +
               std::to_string(e.outer_offset) + "): ";
    return "byte " + std::to_string(e.offset) + ": ";
}

// "worker 3" / "line 7" with prefix "worker " / "line ": the number, if it is all the rest and at most 2^20.
bool parse_suffix(const std::string& name, std::string_view prefix, int& out) {
    const auto n = v::whole_number(name, prefix);
    if (!n || *n > 1u << 20) return false;
    out = static_cast<int>(*n);
    return true;
}

// Sorts v stably, given that it is the concatenation of the sorted runs starting at `starts`
// (starts[0] == 0): merges neighbouring runs pairwise, O(n log runs) with no comparisons inside a run.
template <class T, class Less>
void merge_sorted_runs(std::vector<T>& v, std::vector<std::size_t> starts, Less less) {
    if (starts.size() <= 1) return;
    if (starts.size() > 4096) {   // hardly sorted at all
        std::stable_sort(v.begin(), v.end(), less);
        return;
    }
    starts.push_back(v.size());
    while (starts.size() > 2) {
        std::vector<std::size_t> merged;
        merged.reserve(starts.size() / 2 + 2);
        std::size_t k = 0;
        for (; k + 2 < starts.size(); k += 2) {
            std::inplace_merge(v.begin() + starts[k], v.begin() + starts[k + 1], v.begin() + starts[k + 2], less);
            merged.push_back(starts[k]);
        }
        for (; k < starts.size(); ++k) merged.push_back(starts[k]);
        starts = std::move(merged);
    }
}

// The starts of the maximal sorted runs of v.
template <class T, class Less>
std::vector<std::size_t> sorted_runs(const std::vector<T>& v, Less less) {
    std::vector<std::size_t> starts;
    if (v.empty()) return starts;
    starts.push_back(0);
    for (std::size_t i = 1; i < v.size(); ++i)
        if (less(v[i], v[i - 1])) starts.push_back(i);
    return starts;
}

// A flow id carried by an event of a track that is matched on the fly (see track_state).
struct pending_flow {
    std::uint64_t ts, position, id;
    std::uint32_t event;   // the event's ordinal among the track's events
    std::uint32_t index;   // the slice or instant it binds to
    std::uint8_t what;     // 0 slice, 1 instant, 3 nothing (an unmatched END)
    bool terminating;
};

// The matching state of one track.
//
// Perfetto's importer sorts a track's events by (timestamp, file position) before matching
// BEGIN/END. Instants change no slice: what matters is the order of the BEGINs and ENDs. While
// those arrive in timestamp order (on every track written by one sequence, as our worker tracks
// are; the instants other workers write on it do not count), arrival order is their sorted order:
// they are matched as they arrive, into the track's slices, and no raw copy is kept (only `log`,
// one byte per event, in arrival order). Instants go to the track's instants as they arrive, with
// the depth they have if no BEGIN/END comes before them in the sorted order that arrived after
// them (nor after them that arrived before); otherwise (an instant older than the latest
// BEGIN/END, or a BEGIN/END older than an instant) all depths are recomputed at the end, by
// walking the BEGIN/END order (from `log`) and the instants in sorted order together. Instants
// that arrived out of order are sorted by (timestamp, arrival) at the end.
// A BEGIN or END older than the latest one switches the track to the buffered path: its events so
// far are rebuilt in arrival order from the slices, instants and `log` (exactly, with their flows),
// and from then on they are kept raw, sorted (stably) and matched at the end, as before.
// A stretch of a buffered track's raw events written by one sequence (or rebuilt when it was
// switched to the buffered path: `rebuilt`).
struct raw_segment {
    std::uint32_t first;
    bool rebuilt;
    std::uint64_t seq;
};

struct track_state {
    std::uint64_t last_be_ts = 0;   // of the latest BEGIN/END
    std::uint64_t max_ts = 0;       // of any event (unterminated slices end there)
    std::uint64_t last_instant_ts = 0, max_instant_ts = 0;
    std::uint32_t ordinal = 0;   // events so far
    bool buffered = false;
    bool instants_sorted = true;            // arrived in timestamp order
    bool fix_depths = false;                // instant depths are recomputed at the end
    std::vector<std::uint32_t> open;        // open slices, innermost last
    std::vector<event_type> log;            // the type of each event, in arrival order
    std::vector<std::uint64_t> unmatched;   // timestamps of the unmatched ENDs
    std::vector<pending_flow> flows;        // in arrival order
    std::vector<raw_event> raw;             // the buffered path: every event, in arrival order
    std::vector<raw_segment> segments;      // of `raw`, by sequence
    std::vector<counter_sample> counters;
};

class model_builder final : public perfetto_visitor {
public:
    model_builder(trace_model& m) : m_(m) {}

    void on_packet() override { ++m_.packets; }
    void on_problem(std::string p) override { m_.problems.push_back(std::move(p)); }
    void on_damage(const proto::decode_error& e, std::uint64_t intact_bytes) override {
        m_.damage = e.what();
        m_.damage_offset = e.offset();
        m_.damage_intact_bytes = intact_bytes;
    }
    void on_cut_short(std::uint64_t intact_bytes, std::uint64_t) override {
        m_.cut_short = true;
        m_.cut_short_at = intact_bytes;
    }

    void on_track(const decoded_track& d) override {
        const std::uint32_t i = track_index(d.uuid);
        track& t = m_.tracks[i];
        t.described = true;
        t.parent_uuid = d.parent;
        t.name = strings_[d.name];
        t.pid = d.pid;
        t.tid = d.tid;
        t.kind = d.is_process   ? track_kind::process
                 : d.is_thread  ? track_kind::thread
                 : d.is_counter ? track_kind::counter
                                : track_kind::other;
    }

    // Per event of the file (10 M in a large trace): the helpers of its common path are
    // always_inline (split for reading, not for calls: bench/reader_speed measures it); the rare
    // paths are [[unlikely]].
    void on_event(const decoded_event& e) override {
        note_time(e);
        const std::uint32_t ti = track_of(e);
        track_state& st = states_[ti];
        if (e.type == type_of(event_type::counter)) return add_counter(e, ti, st);
        if (e.type < type_of(event_type::slice_begin) || e.type > type_of(event_type::instant)) [[unlikely]] {
            m_.problems.push_back(where(e) + "track event of type " + std::to_string(e.type) + " ignored");
            return;
        }
        const arg_range args = copy_args(e);
        const std::size_t nflows = e.flows.size() + e.terminating.size();
        if (nflows > 255) [[unlikely]]
            m_.problems.push_back(where(e) + "more than 255 flow ids on one event (the rest dropped)");
        const auto type = static_cast<event_type>(e.type);

        if (!st.buffered && type != event_type::instant && e.ts < st.last_be_ts) [[unlikely]]
            to_buffered(ti);
        if (st.buffered) [[unlikely]]
            return buffer_event(e, st, type, args, nflows);
        match_event(e, ti, st, type, args, nflows);
    }

    // Reserves the annotation pool from the file's size (about one annotation per 8 bytes at most
    // for our files, fewer for compressed ones): address space only, pages are touched as used, and
    // no reallocation copies the pool while it grows.
    // Reserves the annotation pool for a file of this size (about one annotation per 8 bytes in our
    // traces), up to 16 M annotations (192 MB): a bigger file grows it as it goes. Reserved, not
    // touched — but a 2 GB file of garbage must not reserve 3 GB of address space (a machine without
    // overcommit refuses that, and ASan writes shadow memory for all of it).
    void reserve_for(std::size_t file_bytes) {
        total_bytes_ = file_bytes;
        m_.args.reserve(std::min<std::size_t>(file_bytes / 8, std::size_t{1} << 24));
    }

    void finish(string_table& strings_table) {
        match_slices();
        link_flows();
        m_.strings = strings_table.take();
        type_slices(m_);
        find_runs();
    }

    string_table strings_;

private:
    bool arg_name_overflow_reported_ = false;
    std::vector<model_arg> merged_;   // merge_end_args()' scratch

    // An event's annotations in the model's pool: args[first, first + count).
    struct arg_range {
        std::uint32_t first = 0;
        std::uint16_t count = 0;
    };

    // The events' count and time range, and how far into the file the reading is (for grow()).
    [[gnu::always_inline]] void note_time(const decoded_event& e) {
        ++m_.events;
        if (!seen_ts_ || e.ts < m_.first_ts) m_.first_ts = e.ts;
        if (!seen_ts_ || e.ts > m_.last_ts) m_.last_ts = e.ts;
        seen_ts_ = true;
        progress_ = e.compressed ? e.outer_offset : e.offset;
    }

    // The event's track; consecutive events are mostly on one track, so the last one is remembered.
    [[gnu::always_inline]] std::uint32_t track_of(const decoded_event& e) {
        const std::uint32_t ti = e.track == last_uuid_ && last_index_ != no_index ? last_index_ : track_index(e.track);
        last_uuid_ = e.track;
        last_index_ = ti;
        return ti;
    }

    [[gnu::always_inline]] void add_counter(const decoded_event& e, std::uint32_t ti, track_state& st) {
        ++m_.counter_values;
        if (!e.has_counter) [[unlikely]] {
            m_.problems.push_back(where(e) + "counter event without a value (dropped by the importer)");
            return;
        }
        if (m_.tracks[ti].kind != track_kind::counter) [[unlikely]]
            m_.problems.push_back(where(e) + "counter value on track " + std::to_string(e.track) +
                                  ", which is not a counter track (dropped by the importer)");
        grow(st.counters);
        st.counters.push_back({e.ts, e.counter()});
    }

    // Appends the event's annotations (at most 65535) to the pool.
    [[gnu::always_inline]] arg_range copy_args(const decoded_event& e) {
        arg_range r;
        if (e.args.empty()) return r;
        std::size_t n = e.args.size();
        if (n > 0xFFFF) [[unlikely]] {
            m_.problems.push_back(where(e) + "more than 65535 annotations on one event (the rest dropped)");
            n = 0xFFFF;
        }
        r.first = static_cast<std::uint32_t>(m_.args.size());
        r.count = static_cast<std::uint16_t>(n);
        if (m_.args.capacity() - m_.args.size() < n) [[unlikely]]
            m_.args.reserve(std::max(m_.args.size() + n, m_.args.capacity() * 2));
        const decoded_arg* a = e.args.data();
        for (std::size_t k = 0; k < n; ++k) {
            if (a[k].name > max_arg_name_id) [[unlikely]] {   // more distinct strings than a name id holds
                report_arg_name_overflow(e, a[k].name);
                m_.args.emplace_back(0, a[k].kind, a[k].bits);
                continue;
            }
            m_.args.emplace_back(a[k].name, a[k].kind, a[k].bits);
        }
        return r;
    }

    void report_arg_name_overflow(const decoded_event& e, std::uint32_t name) {
        if (!arg_name_overflow_reported_)   // once: a hostile file must not flood the list
            m_.problems.push_back(where(e) + "annotation name id " + std::to_string(name) + " beyond the model's limit of " +
                                  std::to_string(max_arg_name_id) +
                                  " distinct strings (such annotations are kept without their names)");
        arg_name_overflow_reported_ = true;
    }

    // Calls f(id, terminating) for the event's flow ids, outgoing then terminating: the first 255
    // (an event keeps no more; on_event reports the rest dropped).
    template <class F>
    [[gnu::always_inline]] static void for_each_flow(const decoded_event& e, F&& f) {
        std::size_t kept = 0;
        for (auto id : e.flows)
            if (kept++ < 255) f(id, false);
        for (auto id : e.terminating)
            if (kept++ < 255) f(id, true);
    }

    // The buffered path (see track_state): the event is kept raw, to be sorted and matched at the end.
    void buffer_event(const decoded_event& e, track_state& st, event_type type, arg_range args, std::size_t nflows) {
        raw_event r{e.ts, e.name, args.first, 0, args.count, 0, type};
        if (nflows) {
            r.flows_first = static_cast<std::uint32_t>(flows_.size());
            for_each_flow(e, [&](std::uint64_t id, bool terminating) { flows_.push_back({id, e.position, terminating}); });
            r.flows_count = static_cast<std::uint8_t>(std::min<std::size_t>(nflows, 255));
        }
        if (st.segments.empty() || st.segments.back().rebuilt || st.segments.back().seq != e.seq)
            st.segments.push_back({static_cast<std::uint32_t>(st.raw.size()), false, e.seq});
        grow(st.raw);
        st.raw.push_back(r);
    }

    // The matched-on-the-fly path (see track_state): the event goes into the track's slices or
    // instants now.
    [[gnu::always_inline]] void match_event(const decoded_event& e, std::uint32_t ti, track_state& st, event_type type,
                                            arg_range args, std::size_t nflows) {
        track& t = m_.tracks[ti];
        if (e.ts > st.max_ts) st.max_ts = e.ts;
        const std::uint32_t ordinal = st.ordinal++;
        grow(st.log);
        st.log.push_back(type);
        if (type != event_type::instant && e.ts < st.max_instant_ts) [[unlikely]]
            st.fix_depths = true;
        std::uint32_t index = no_index;
        std::uint8_t what = 3;   // what the flows bind to: pending_flow::what
        if (type == event_type::slice_begin) {
            index = begin_slice(e, t, st, args), what = 0;
        } else if (type == event_type::slice_end) {
            index = end_slice(e, t, st, args);
            if (index != no_index) what = 0;
        } else {
            index = add_instant(e, t, st, args), what = 1;
        }
        if (nflows) [[unlikely]]
            for_each_flow(
                e, [&](std::uint64_t id, bool terminating) __attribute__((always_inline)) {
                    st.flows.push_back({e.ts, e.position, id, ordinal, index, what, terminating});
                });
    }

    [[gnu::always_inline]] std::uint32_t begin_slice(const decoded_event& e, track& t, track_state& st, arg_range args) {
        st.last_be_ts = e.ts;
        slice s;
        s.begin = s.end = e.ts;
        s.name = e.name;
        s.args_first = args.first;
        s.args_count = args.count;
        s.depth = static_cast<std::uint16_t>(std::min<std::size_t>(st.open.size(), 0xFFFF));
        if (s.depth > t.max_depth) t.max_depth = s.depth;
        const auto index = static_cast<std::uint32_t>(t.slices.size());
        st.open.push_back(index);
        grow(t.slices);
        t.slices.push_back(s);
        return index;
    }

    // The slice it ends, or no_index for an END with no open slice.
    [[gnu::always_inline]] std::uint32_t end_slice(const decoded_event& e, track& t, track_state& st, arg_range args) {
        st.last_be_ts = e.ts;
        if (st.open.empty()) {
            ++t.unmatched_ends;
            st.unmatched.push_back(e.ts);
            return no_index;
        }
        const std::uint32_t index = st.open.back();
        st.open.pop_back();
        t.slices[index].end = e.ts;
        merge_end_args(t.slices[index], args.first, args.count);
        return index;
    }

    [[gnu::always_inline]] std::uint32_t add_instant(const decoded_event& e, track& t, track_state& st, arg_range args) {
        instant in;
        in.ts = e.ts;
        in.name = e.name;
        in.args_first = args.first;
        in.args_count = args.count;
        in.depth = static_cast<std::uint16_t>(std::min<std::size_t>(st.open.size(), 0xFFFF));
        const auto index = static_cast<std::uint32_t>(t.instants.size());
        if (e.ts < st.last_be_ts) [[unlikely]]
            st.fix_depths = true;
        if (e.ts < st.last_instant_ts) [[unlikely]]
            st.instants_sorted = false;
        st.last_instant_ts = e.ts;
        if (e.ts > st.max_instant_ts) st.max_instant_ts = e.ts;
        grow(t.instants);
        t.instants.push_back(in);
        return index;
    }

    // Perfetto merges the annotations of a SLICE_END into its slice's args (pipescope writes user
    // annotations there, and a folded run's `nodes` whose BEGIN went out early); so does the model.
    // An END annotation the slice has by name already is left out (a folded run's `nodes` is
    // written on both). The END's annotations are args[first, first + count): dropped from the end
    // of the pool when they are there, and the slice's range moves to the end of the pool if it
    // gains any.
    void merge_end_args(slice& s, std::uint32_t first, std::uint16_t count) {
        if (count == 0) return;
        merged_.assign(m_.args.begin() + s.args_first, m_.args.begin() + s.args_first + s.args_count);
        const std::size_t had = merged_.size();
        for (std::uint32_t k = first; k < first + count && merged_.size() < 0xFFFF; ++k) {
            const model_arg& a = m_.args[k];
            const auto same = [&](const model_arg& b) { return a.name != 0 && b.name == a.name; };
            if (std::none_of(merged_.begin(), merged_.begin() + static_cast<std::ptrdiff_t>(had), same))
                merged_.push_back(a);
        }
        if (first + count == m_.args.size()) m_.args.resize(first);
        if (merged_.size() == had) return;
        if (s.args_first + s.args_count == m_.args.size()) {   // the slice's args end the pool: extend them
            m_.args.insert(m_.args.end(), merged_.begin() + static_cast<std::ptrdiff_t>(had), merged_.end());
        } else {
            s.args_first = static_cast<std::uint32_t>(m_.args.size());
            m_.args.insert(m_.args.end(), merged_.begin(), merged_.end());
        }
        s.args_count = static_cast<std::uint16_t>(merged_.size());
    }
    std::uint32_t track_index(std::uint64_t uuid) {
        auto [it, inserted] = index_.try_emplace(uuid, static_cast<std::uint32_t>(m_.tracks.size()));
        if (inserted) {
            track t;
            t.uuid = uuid;
            t.described = false;
            t.name = uuid == 0 ? "global" : "track " + std::to_string(uuid);
            m_.tracks.push_back(std::move(t));
            states_.emplace_back();
        }
        return it->second;
    }

    // Grows a vector that is full to the size its track will have at the end of the file, as far
    // as the part read so far tells (its events are spread over the file): one or two
    // reallocations instead of a doubling series, each copying everything and touching new pages.
    // Capacity beyond what is used is address space only.
    template <class T>
    void grow(std::vector<T>& v) {
        if (v.size() < v.capacity()) [[likely]]
            return;
        const std::size_t cap = v.capacity();
        std::size_t want = std::max<std::size_t>(cap * 2, 64);
        if (total_bytes_ && progress_ > 0 && cap >= 64) {
            const double predicted =
                static_cast<double>(cap) * (static_cast<double>(total_bytes_) / static_cast<double>(progress_)) * 1.1;
            want = std::max(want, static_cast<std::size_t>(std::min(predicted, static_cast<double>(cap) * 64)));
        }
        v.reserve(want);
    }

    // A BEGIN or END older than the latest one: rebuilds the track's events so far as raw events,
    // in arrival order (a stable sort by timestamp then gives the importer's order), and buffers
    // the track from now on.
    void to_buffered(std::uint32_t ti) {
        track& t = m_.tracks[ti];
        track_state& st = states_[ti];
        st.raw.clear();
        st.segments.clear();
        if (!st.log.empty()) st.segments.push_back({0, true, 0});
        st.raw.reserve(std::max<std::size_t>(1024, st.log.size() * 2));
        std::vector<std::uint32_t> open;
        std::size_t si = 0, ii = 0, ui = 0, fi = 0;
        for (std::uint32_t k = 0; k < st.log.size(); ++k) {
            raw_event r{};
            r.type = st.log[k];
            if (r.type == event_type::slice_begin) {
                const slice& s = t.slices[si];
                r.ts = s.begin, r.name = s.name, r.args_first = s.args_first, r.args_count = s.args_count;
                open.push_back(static_cast<std::uint32_t>(si++));
            } else if (r.type == event_type::slice_end) {
                if (open.empty()) {
                    r.ts = st.unmatched[ui++];
                } else {
                    r.ts = t.slices[open.back()].end;
                    open.pop_back();
                }
            } else {
                const instant& in = t.instants[ii++];
                r.ts = in.ts, r.name = in.name, r.args_first = in.args_first, r.args_count = in.args_count;
            }
            if (fi < st.flows.size() && st.flows[fi].event == k) {
                r.flows_first = static_cast<std::uint32_t>(flows_.size());
                for (; fi < st.flows.size() && st.flows[fi].event == k; ++fi) {
                    flows_.push_back({st.flows[fi].id, st.flows[fi].position, st.flows[fi].terminating});
                    ++r.flows_count;
                }
            }
            st.raw.push_back(r);
        }
        t.slices = {};
        t.instants = {};
        t.max_depth = 0;
        t.unmatched_ends = 0;
        st.open = {};
        st.log = {};
        st.unmatched = {};
        st.flows = {};
        st.buffered = true;
    }

    void match_slices() {
        std::vector<std::uint32_t> open;
        for (std::size_t ti = 0; ti < m_.tracks.size(); ++ti) {
            track& t = m_.tracks[ti];
            track_state& st = states_[ti];
            auto& cs = st.counters;
            const auto c_by_ts = [](const counter_sample& a, const counter_sample& b) { return a.ts < b.ts; };
            merge_sorted_runs(cs, sorted_runs(cs, c_by_ts), c_by_ts);
            t.counters = std::move(cs);
            if (st.buffered) match_buffered(static_cast<std::uint32_t>(ti), open);
            else finish_in_order(static_cast<std::uint32_t>(ti));
            m_.unmatched_ends += t.unmatched_ends;
            m_.slices += t.slices.size();
            m_.instants += t.instants.size();
            st = track_state{};
        }
    }

    void finish_in_order(std::uint32_t ti) {
        track& t = m_.tracks[ti];
        track_state& st = states_[ti];
        for (auto i : st.open) {
            t.slices[i].end = st.max_ts;
            t.slices[i].unterminated = true;
        }
        m_.unterminated_slices += st.open.size();
        // The instants in their sorted order: by (timestamp, arrival).
        std::vector<std::uint32_t> order;
        if (!st.instants_sorted) {
            order.resize(t.instants.size());
            for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
            std::stable_sort(order.begin(), order.end(),
                             [&](auto a, auto b) { return t.instants[a].ts < t.instants[b].ts; });
        }
        if (st.fix_depths) fix_instant_depths(ti, order);
        std::vector<std::uint32_t> moved;   // instant index remapping, if they were sorted here
        if (!order.empty()) {
            std::vector<instant> sorted(t.instants.size());
            moved.resize(order.size());
            for (std::uint32_t k = 0; k < order.size(); ++k) {
                sorted[k] = t.instants[order[k]];
                moved[order[k]] = k;
            }
            t.instants = std::move(sorted);
        }
        for (const pending_flow& f : st.flows) {
            if (f.what == 3) continue;   // on an unmatched END: ignored
            event_ref ref{ti, f.index, f.what == 1};
            if (f.what == 1 && !moved.empty()) ref.index = moved[f.index];
            steps_.push_back({f.ts, f.position, f.id, f.terminating, ref});
        }
    }

    // Each instant's depth: the slices open after the BEGIN/ENDs that precede it in (timestamp,
    // arrival) order. The BEGIN/ENDs are replayed from `log` in arrival order (their sorted order),
    // the instants taken in sorted order (`order`, or as they are if empty): one walk.
    void fix_instant_depths(std::uint32_t ti, const std::vector<std::uint32_t>& order) {
        track& t = m_.tracks[ti];
        track_state& st = states_[ti];
        const auto& log = st.log;
        std::vector<std::uint32_t> arrival(t.instants.size());
        for (std::uint32_t k = 0, ii = 0; k < log.size(); ++k)
            if (log[k] == event_type::instant) arrival[ii++] = k;
        std::vector<std::uint32_t> open;
        std::size_t k = 0, si = 0, ui = 0;
        for (std::size_t n = 0; n < t.instants.size(); ++n) {
            const std::uint32_t i = order.empty() ? static_cast<std::uint32_t>(n) : order[n];
            const std::uint64_t ts = t.instants[i].ts;
            const std::uint32_t at = arrival[i];
            for (;;) {
                while (k < log.size() && log[k] == event_type::instant) ++k;
                if (k == log.size()) break;
                std::uint64_t be_ts;
                if (log[k] == event_type::slice_begin) be_ts = t.slices[si].begin;
                else be_ts = open.empty() ? st.unmatched[ui] : t.slices[open.back()].end;
                if (be_ts > ts || (be_ts == ts && k > at)) break;
                if (log[k] == event_type::slice_begin) open.push_back(static_cast<std::uint32_t>(si++));
                else if (open.empty()) ++ui;
                else open.pop_back();
                ++k;
            }
            t.instants[i].depth = static_cast<std::uint16_t>(std::min<std::size_t>(open.size(), 0xFFFF));
        }
    }

    // The sorted order of a buffered track's raw events (by timestamp, then arrival) when each
    // sequence's events are in timestamp order (as a writer writes them): a merge of the
    // sequences' streams, one pass. Empty when that does not hold or there is one sorted stream
    // (then they are sorted in place).
    static std::vector<std::uint32_t> sequence_order(const track_state& st) {
        const auto& raw = st.raw;
        struct stream {
            std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;   // [first, end) of raw
            std::size_t range = 0;
            std::uint32_t at = 0;
        };
        std::vector<stream> streams;
        std::vector<std::pair<std::pair<bool, std::uint64_t>, std::uint32_t>> which;   // (rebuilt, seq) -> stream
        for (std::size_t k = 0; k < st.segments.size(); ++k) {
            const auto& seg = st.segments[k];
            const std::uint32_t end =
                k + 1 < st.segments.size() ? st.segments[k + 1].first : static_cast<std::uint32_t>(raw.size());
            const std::pair<bool, std::uint64_t> key{seg.rebuilt, seg.seq};
            std::uint32_t si = 0;
            while (si < which.size() && which[si].first != key) ++si;
            if (si == which.size()) {
                if (which.size() >= 64) return {};   // many writers: sort instead
                which.push_back({key, static_cast<std::uint32_t>(streams.size())});
                streams.emplace_back();
            }
            auto& sr = streams[which[si].second];
            // Each stream must be in timestamp order, across its segments too.
            if (!sr.ranges.empty() && raw[seg.first].ts < raw[sr.ranges.back().second - 1].ts) return {};
            for (std::uint32_t i = seg.first + 1; i < end; ++i)
                if (raw[i].ts < raw[i - 1].ts) return {};
            sr.ranges.push_back({seg.first, end});
        }
        if (streams.size() <= 1) return {};
        for (auto& sr : streams) sr.at = sr.ranges.front().first;
        // A min-heap of streams by (timestamp, arrival) of their next event.
        const auto after = [&](std::uint32_t a, std::uint32_t b) {
            const raw_event& x = raw[streams[a].at];
            const raw_event& y = raw[streams[b].at];
            return x.ts != y.ts ? x.ts > y.ts : streams[a].at > streams[b].at;
        };
        std::vector<std::uint32_t> heap;
        for (std::uint32_t i = 0; i < streams.size(); ++i) heap.push_back(i);
        std::make_heap(heap.begin(), heap.end(), after);
        std::vector<std::uint32_t> order;
        order.reserve(raw.size());
        while (!heap.empty()) {
            std::pop_heap(heap.begin(), heap.end(), after);
            stream& sr = streams[heap.back()];
            order.push_back(sr.at);
            if (++sr.at == sr.ranges[sr.range].second) {
                if (++sr.range == sr.ranges.size()) {
                    heap.pop_back();
                    continue;
                }
                sr.at = sr.ranges[sr.range].first;
            }
            std::push_heap(heap.begin(), heap.end(), after);
        }
        return order;
    }

    // Sorts raw by timestamp, stably, by insertion when events are only a little out of place
    // (one sequence writing overlapping states: each a BEGIN/END pair). Gives up after a budget of
    // moves (what it has done keeps the sort stable) and returns false.
    static bool nearly_sorted(std::vector<raw_event>& raw) {
        std::size_t budget = 8 * raw.size() + 1024;
        for (std::size_t i = 1; i < raw.size(); ++i) {
            if (!(raw[i].ts < raw[i - 1].ts)) continue;
            const raw_event x = raw[i];
            std::size_t k = i;
            for (; k > 0 && x.ts < raw[k - 1].ts; --k) raw[k] = raw[k - 1];
            raw[k] = x;
            const std::size_t moved = i - k;
            if (moved > budget) return false;
            budget -= moved;
        }
        return true;
    }

    void match_buffered(std::uint32_t ti, std::vector<std::uint32_t>& open) {
        track& t = m_.tracks[ti];
        auto& raw = states_[ti].raw;
        const auto by_ts = [](const raw_event& a, const raw_event& b) { return a.ts < b.ts; };
        // Sorted per sequence: a track written by several sequences is a few sorted runs, merged
        // (stably: ties stay in file order).
        const std::vector<std::uint32_t> order = sequence_order(states_[ti]);
        if (order.empty() && !nearly_sorted(raw)) merge_sorted_runs(raw, sorted_runs(raw, by_ts), by_ts);
        std::size_t begins = 0, instants = 0;
        for (const auto& r : raw) (r.type == event_type::slice_begin ? begins : instants) += r.type != event_type::slice_end;
        t.slices.reserve(begins);
        t.instants.reserve(instants);
        open.clear();
        std::uint64_t last_ts = 0;
        for (std::size_t n = 0; n < raw.size(); ++n) {
            const raw_event& r = order.empty() ? raw[n] : raw[order[n]];
            last_ts = r.ts;
            event_ref ref;
            if (r.type == event_type::slice_begin) {
                slice s;
                s.begin = s.end = r.ts;
                s.name = r.name;
                s.args_first = r.args_first;
                s.args_count = r.args_count;
                s.depth = static_cast<std::uint16_t>(std::min<std::size_t>(open.size(), 0xFFFF));
                t.max_depth = std::max(t.max_depth, s.depth);
                open.push_back(static_cast<std::uint32_t>(t.slices.size()));
                ref = {ti, open.back(), false};
                t.slices.push_back(s);
            } else if (r.type == event_type::slice_end) {
                if (open.empty()) {
                    ++t.unmatched_ends;
                } else {
                    t.slices[open.back()].end = r.ts;
                    merge_end_args(t.slices[open.back()], r.args_first, r.args_count);
                    ref = {ti, open.back(), false};
                    open.pop_back();
                }
            } else {
                instant in;
                in.ts = r.ts;
                in.name = r.name;
                in.args_first = r.args_first;
                in.args_count = r.args_count;
                in.depth = static_cast<std::uint16_t>(std::min<std::size_t>(open.size(), 0xFFFF));
                ref = {ti, static_cast<std::uint32_t>(t.instants.size()), true};
                t.instants.push_back(in);
            }
            if (r.flows_count && ref.valid())
                for (std::uint32_t k = r.flows_first; k < r.flows_first + r.flows_count; ++k)
                    steps_.push_back({r.ts, flows_[k].position, flows_[k].id, flows_[k].terminating, ref});
        }
        for (auto i : open) {
            t.slices[i].end = last_ts;
            t.slices[i].unterminated = true;
        }
        m_.unterminated_slices += open.size();
    }

    void link_flows() {
        // By timestamp and file position (the flow ids of one event stay in their order).
        const auto less = [](const flow_step& a, const flow_step& b) {
            return std::tie(a.ts, a.position) < std::tie(b.ts, b.position);
        };
        merge_sorted_runs(steps_, sorted_runs(steps_, less), less);
        std::unordered_map<std::uint64_t, event_ref> active;
        for (const auto& s : steps_) {
            auto it = active.find(s.id);
            if (s.terminating) {
                if (it == active.end()) continue;   // not active: ignored, like the importer
                if (!(it->second == s.ref)) m_.flows.push_back({s.id, it->second, s.ref});
                active.erase(it);
            } else if (it == active.end()) {
                active.emplace(s.id, s.ref);
            } else {
                if (!(it->second == s.ref)) m_.flows.push_back({s.id, it->second, s.ref});
                it->second = s.ref;
            }
        }
        steps_.clear();
        steps_.shrink_to_fit();
    }

    // Groups the tracks into runs: a run per process track, every other track in the run of its
    // pid or its nearest ancestor's; then each run's workers, lines, summary and pipeline DAG.
    void find_runs() {
        link_parents();
        const std::map<std::int64_t, std::uint32_t> run_of_pid = make_runs();
        for (track& t : m_.tracks)
            if (t.kind != track_kind::process) t.run = run_of(t, run_of_pid);
        add_other_threads(add_tracks_to_runs());
        for (run& r : m_.runs) finish_run(r);
    }

    void link_parents() {
        for (auto& t : m_.tracks) {
            if (t.parent_uuid) {
                auto it = index_.find(t.parent_uuid);
                if (it != index_.end()) t.parent = it->second;
            }
        }
    }

    // A run per process track; returns the runs by pid.
    std::map<std::int64_t, std::uint32_t> make_runs() {
        auto& tracks = m_.tracks;
        std::map<std::int64_t, std::uint32_t> run_of_pid;
        for (std::size_t i = 0; i < tracks.size(); ++i) {
            if (tracks[i].kind != track_kind::process) continue;
            run r;
            r.track = static_cast<std::uint32_t>(i);
            r.pid = tracks[i].pid;
            r.name = tracks[i].name;
            tracks[i].run = static_cast<std::uint32_t>(m_.runs.size());
            run_of_pid.emplace(r.pid, tracks[i].run);
            m_.runs.push_back(std::move(r));
        }
        return run_of_pid;
    }

    // The run of a track that is not a process track: its own pid's (threads), else its nearest
    // ancestor's (64 hops at most: a cycle of parents must not hang). Unchanged when none.
    std::uint32_t run_of(const track& t, const std::map<std::int64_t, std::uint32_t>& run_of_pid) const {
        const auto by_pid = [&](std::int64_t pid) {
            auto it = run_of_pid.find(pid);
            return it != run_of_pid.end() ? it->second : t.run;
        };
        if (t.kind == track_kind::thread) return by_pid(t.pid);
        std::uint32_t p = t.parent;
        for (int hops = 0; p != no_index && hops < 64; ++hops) {
            const track& pt = m_.tracks[p];
            if (pt.kind == track_kind::process) return pt.run;
            if (pt.kind == track_kind::thread) return by_pid(pt.pid);
            p = pt.parent;
        }
        return t.run;
    }

    // Each track into its run's tracks, "worker w" threads into its workers, "line k" tracks under
    // the lines group into its lines; returns the other thread tracks.
    std::vector<std::uint32_t> add_tracks_to_runs() {
        auto& tracks = m_.tracks;
        std::vector<std::uint32_t> other_threads;
        for (std::size_t i = 0; i < tracks.size(); ++i) {
            track& t = tracks[i];
            if (t.run == no_index) continue;
            run& r = m_.runs[t.run];
            r.tracks.push_back(static_cast<std::uint32_t>(i));
            int k = 0;
            if (t.kind == track_kind::thread && parse_suffix(t.name, v::worker_prefix, k)) {
                t.worker = k;
                if (r.workers.size() <= static_cast<std::size_t>(k)) r.workers.resize(k + 1, no_index);
                r.workers[k] = static_cast<std::uint32_t>(i);
            } else if (t.kind == track_kind::thread) {
                other_threads.push_back(static_cast<std::uint32_t>(i));
            } else if (t.kind == track_kind::other && t.parent != no_index && tracks[t.parent].name == v::lines_group &&
                       parse_suffix(t.name, v::line_prefix, k)) {
                t.kind = track_kind::line;
                t.line = k;
                if (r.lines.size() <= static_cast<std::size_t>(k)) r.lines.resize(k + 1, no_index);
                r.lines[k] = static_cast<std::uint32_t>(i);
            }
        }
        return other_threads;
    }

    // Recording threads that are not workers (bind-to-stage's "stage j · thread t") run nodes
    // too: they count as the run's workers after the "worker w" ones, in tid order.
    void add_other_threads(std::vector<std::uint32_t> other_threads) {
        auto& tracks = m_.tracks;
        std::stable_sort(other_threads.begin(), other_threads.end(),
                         [&](auto a, auto b) { return tracks[a].tid < tracks[b].tid; });
        for (std::uint32_t i : other_threads) {
            run& r = m_.runs[tracks[i].run];
            tracks[i].worker = static_cast<int>(r.workers.size());
            r.workers.push_back(i);
        }
    }

    // The process track first; the run's metadata and summary, open slices, pipeline DAG.
    void finish_run(run& r) {
        const auto& tracks = m_.tracks;
        std::stable_sort(r.tracks.begin(), r.tracks.end(), [&](auto a, auto b) { return (a == r.track) > (b == r.track); });
        read_run_instant(r);
        for (const instant& in : tracks[r.track].instants) r.summarized |= m_.strings[in.name] == v::run_summary;
        for (std::uint32_t t : r.tracks)
            for (const slice& sl : tracks[t].slices) r.open_slices += sl.unterminated;
        r.dag = build_pipeline_dag(m_, r, &m_.problems);
    }

    void read_run_instant(run& r) {
        const track& pt = m_.tracks[r.track];
        bool seen_run = false;   // the first "run" instant describes the run
        for (const instant& in : pt.instants) {
            if (m_.strings[in.name] == v::run_summary) {
                if (auto md = m_.string_arg(in, v::arg_key::metadata)) {
                    r.end_metadata_json = std::string(*md);
                    parse_end_metadata(r);
                }
                continue;
            }
            if (m_.strings[in.name] != v::run || seen_run) continue;
            seen_run = true;
            if (auto n = m_.string_arg(in, v::arg_key::name)) r.name = std::string(*n);
            if (auto w = m_.uint_arg(in, v::arg_key::workers)) r.declared_workers = *w;
            if (auto md = m_.string_arg(in, v::arg_key::metadata)) {
                r.metadata_json = std::string(*md);
                parse_metadata(r);
            }
        }
    }

    // What the runtime saw during the run (docs/tracing.md, "Run summary"); malformed parts are skipped.
    void parse_end_metadata(run& r) {
        const auto meta = nlohmann::json::parse(r.end_metadata_json, nullptr, false);
        if (meta.is_discarded() || !meta.is_object()) {
            m_.problems.push_back("run '" + r.name + "': the metadata of its run summary is not a JSON object");
            return;
        }
        if (auto st = meta.find("stages"); st != meta.end() && st->is_array())
            for (const auto& s : *st) {
                if (!s.is_object()) continue;
                auto idx = s.find("index");
                auto kind = s.find("kind");
                if (idx == s.end() || !idx->is_number_unsigned() || kind == s.end() || !kind->is_string()) continue;
                auto later = s.find("and_later");
                r.used_stages.push_back({idx->get<std::uint64_t>(),
                                         later != s.end() && later->is_boolean() && later->get<bool>(),
                                         kind->get<std::string>()});
            }
        if (auto ws = meta.find("workers"); ws != meta.end() && ws->is_array())
            for (const auto& w : *ws) {
                auto field = [&](const char* key) -> std::optional<std::uint64_t> {
                    if (!w.is_object()) return std::nullopt;
                    auto it = w.find(key);
                    if (it == w.end() || !it->is_number_unsigned()) return std::nullopt;
                    return it->get<std::uint64_t>();
                };
                const auto worker = field("worker"), cpu = field("cpu_ns"), off = field("descheduled_ns");
                if (!worker || !cpu || !off) continue;
                r.worker_times.push_back({*worker, *cpu, *off, field("timeslices").value_or(0)});
            }
    }

    // pipescope-run/1 (run_metadata.hpp): the run's workload, policy, program kind, K and stages.
    void parse_metadata(run& r) {
        const std::optional<run_metadata> meta = run_metadata_from_json(r.metadata_json);
        if (!meta) {
            m_.problems.push_back("run '" + r.name + "': its metadata annotation is not a JSON object");
            return;
        }
        r.metadata_valid = true;
        r.workload = meta->workload;
        r.policy = meta->policy;
        if (!meta->program) return;
        r.program_kind = meta->program->kind;
        if (meta->program->K) r.dag.K = *meta->program->K;
        if (meta->program->stages)
            for (const run_stage& s : *meta->program->stages)
                r.stages.push_back({s.index.value_or(r.stages.size()), s.name, s.kind});
    }

    trace_model& m_;
    std::unordered_map<std::uint64_t, std::uint32_t> index_;
    std::vector<track_state> states_;
    std::vector<raw_flow> flows_;
    std::size_t total_bytes_ = 0, progress_ = 0;
    std::vector<flow_step> steps_;
    std::uint64_t last_uuid_ = 0;
    std::uint32_t last_index_ = no_index;
    bool seen_ts_ = false;
};

}   // namespace

trace_model load_trace(std::string_view bytes, const read_options& options) {
    trace_model m;
    model_builder b(m);
    b.reserve_for(bytes.size());
    decode_perfetto(bytes, b, b.strings_, options);
    if (!m.damage.empty()) m.damage_file_bytes = bytes.size();
    m.file_bytes = bytes.size();
    b.finish(b.strings_);
    detail::derive_graph_footprints(m);
    return m;
}

std::uint64_t physical_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

trace_model load_trace_file(const std::filesystem::path& path, const read_options& options, std::uint64_t max_bytes) {
    const mapped_file file = open_trace_file(path, max_bytes);
    // The model is larger than the file: a file larger than the memory can never load, so say so
    // before reading it (mapping it read nothing) instead of swapping the machine to a halt.
    if (const std::uint64_t memory = physical_memory_bytes(); memory && file.size() > memory)
        throw std::runtime_error(path.string() + ": " + std::to_string(file.size()) +
                                 " bytes is larger than this machine's memory (" + std::to_string(memory) +
                                 " bytes): it cannot be loaded here");
    return load_trace(file.bytes(), options);
}

std::vector<std::string> incomplete_notes(const trace_model& m, const std::string& file) {
    std::vector<std::string> notes;
    if (m.cut_short)
        notes.push_back(file + ": the recording was cut short at byte " + std::to_string(m.cut_short_at) + " of " +
                        std::to_string(m.file_bytes) +
                        " (last packet incomplete: " + std::to_string(m.file_bytes - m.cut_short_at) + " bytes not read)");
    for (const run& r : m.runs) {
        // Only pipescope's runs (they begin with a "run" instant) end with a summary.
        if (r.summarized || !r.metadata_valid) continue;
        std::string note = "run '" + r.name + "' has no summary";
        if (r.open_slices)
            note += ": its " + std::to_string(r.open_slices) + " slice" + (r.open_slices == 1 ? "" : "s") +
                    " still open were closed at their track's last event";
        notes.push_back(std::move(note));
    }
    return notes;
}

}   // namespace pipescope::trace
