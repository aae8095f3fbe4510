#include <pipescope/trace/perfetto_writer.hpp>

#include <pipescope/trace/proto_writer.hpp>

#include <algorithm>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace pipescope::trace {

namespace {

// Field numbers (perfetto-format.md §2).
namespace f {
constexpr std::uint32_t trace_packet = 1;
// TracePacket
constexpr std::uint32_t timestamp = 8;
constexpr std::uint32_t sequence_id = 10;
constexpr std::uint32_t track_event = 11;
constexpr std::uint32_t interned_data = 12;
constexpr std::uint32_t sequence_flags = 13;
constexpr std::uint32_t track_descriptor = 60;
constexpr std::uint32_t first_packet_on_sequence = 87;
// TrackDescriptor
constexpr std::uint32_t td_uuid = 1;
constexpr std::uint32_t td_name = 2;
constexpr std::uint32_t td_process = 3;
constexpr std::uint32_t td_thread = 4;
constexpr std::uint32_t td_parent_uuid = 5;
constexpr std::uint32_t td_counter = 8;
constexpr std::uint32_t td_sibling_order_rank = 12;
// ProcessDescriptor / ThreadDescriptor / CounterDescriptor
constexpr std::uint32_t pd_pid = 1;
constexpr std::uint32_t pd_process_name = 6;
constexpr std::uint32_t thd_pid = 1;
constexpr std::uint32_t thd_tid = 2;
constexpr std::uint32_t thd_thread_name = 5;
constexpr std::uint32_t cd_unit = 3;
constexpr std::uint64_t unit_count = 2;
// TrackEvent
constexpr std::uint32_t te_debug_annotations = 4;
constexpr std::uint32_t te_type = 9;
constexpr std::uint32_t te_name_iid = 10;
constexpr std::uint32_t te_track_uuid = 11;
constexpr std::uint32_t te_counter_value = 30;
constexpr std::uint32_t te_flow_ids = 47;
constexpr std::uint32_t te_terminating_flow_ids = 48;
// DebugAnnotation
constexpr std::uint32_t da_name_iid = 1;
constexpr std::uint32_t da_uint_value = 3;
constexpr std::uint32_t da_string_value = 6;
// InternedData and its EventName / DebugAnnotationName entries
constexpr std::uint32_t id_event_names = 2;
constexpr std::uint32_t id_debug_annotation_names = 3;
constexpr std::uint32_t in_iid = 1;
constexpr std::uint32_t in_name = 2;
}  // namespace f

enum class ev_type : std::uint8_t { slice_begin = 1, slice_end = 2, instant = 3, counter = 4 };
constexpr std::uint32_t seq_cleared_and_needs = 3;   // SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE
constexpr std::uint32_t seq_needs = 2;               // SEQ_NEEDS_INCREMENTAL_STATE

struct arg {
    arg(std::string_view n, std::uint64_t v) : name(n), value(v) {}
    arg(std::string_view n, std::string_view t) : name(n), text(t), is_text(true) {}
    std::string_view name;
    std::uint64_t value = 0;
    std::string_view text;   // written instead of value when is_text
    bool is_text = false;
};

struct event {
    std::uint64_t ts = 0;
    std::uint64_t track = 0;
    ev_type type = ev_type::instant;
    std::string name;   // empty for ends and counters: never put a name on an END
    std::vector<arg> args;
    std::optional<std::uint64_t> flow;              // flow_ids
    std::optional<std::uint64_t> terminating_flow;  // terminating_flow_ids
    std::int64_t counter_value = 0;
};

// One trusted_packet_sequence_id with its own interning tables.
class sequence {
public:
    explicit sequence(std::uint32_t id) : id_(id) {}

    void emit(const event& e, std::vector<std::uint8_t>& out, perfetto_write_stats& stats) {
        new_names_.clear();
        new_args_.clear();
        const std::uint64_t name_iid = e.name.empty() ? 0 : intern(names_, e.name, new_names_);
        for (const arg& a : e.args) intern(arg_names_, a.name, new_args_);

        proto::writer w(out);
        proto::nested packet(w, f::trace_packet);
        w.uint_field(f::timestamp, e.ts);
        w.uint_field(f::sequence_id, id_);
        w.uint_field(f::sequence_flags, first_ ? seq_cleared_and_needs : seq_needs);
        if (first_) w.bool_field(f::first_packet_on_sequence, true);
        first_ = false;
        if (!new_names_.empty() || !new_args_.empty()) {
            proto::nested interned(w, f::interned_data);
            write_entries(w, f::id_event_names, new_names_);
            write_entries(w, f::id_debug_annotation_names, new_args_);
        }
        {
            proto::nested te(w, f::track_event);
            w.uint_field(f::te_type, static_cast<std::uint64_t>(e.type));
            w.uint_field(f::te_track_uuid, e.track);
            if (name_iid) w.uint_field(f::te_name_iid, name_iid);
            for (const arg& a : e.args) {
                proto::nested da(w, f::te_debug_annotations);
                w.uint_field(f::da_name_iid, arg_names_.at(std::string(a.name)));
                if (a.is_text)
                    w.bytes_field(f::da_string_value, a.text);
                else
                    w.uint_field(f::da_uint_value, a.value);
            }
            if (e.type == ev_type::counter) w.int_field(f::te_counter_value, e.counter_value);
            if (e.flow) w.fixed64_field(f::te_flow_ids, *e.flow);   // unpacked fixed64, one tag per id
            if (e.terminating_flow) w.fixed64_field(f::te_terminating_flow_ids, *e.terminating_flow);
        }
        ++stats.packets;
        if (e.type == ev_type::slice_begin) ++stats.slices;
    }

private:
    using table = std::unordered_map<std::string, std::uint64_t>;
    using entries = std::vector<std::pair<std::uint64_t, std::string_view>>;

    static std::uint64_t intern(table& t, std::string_view s, entries& fresh) {
        auto [it, inserted] = t.try_emplace(std::string(s), t.size() + 1);   // iids start at 1
        if (inserted) fresh.emplace_back(it->second, it->first);
        return it->second;
    }
    static void write_entries(proto::writer& w, std::uint32_t field, const entries& es) {
        for (const auto& [iid, name] : es) {
            proto::nested entry(w, field);
            w.uint_field(f::in_iid, iid);
            w.bytes_field(f::in_name, name);
        }
    }

    std::uint32_t id_;
    bool first_ = true;
    table names_, arg_names_;
    entries new_names_, new_args_;
};

// Track uuids of run r: (r + 1) << 32 | kind/index.
std::uint64_t run_base(unsigned run) { return (std::uint64_t{run} + 1) << 32; }
std::uint64_t process_uuid(unsigned run) { return run_base(run) | 1; }
std::uint64_t counter_uuid(unsigned run) { return run_base(run) | 2; }
std::uint64_t thread_uuid(unsigned run, unsigned worker) { return run_base(run) | (0x100000u + worker); }
std::int64_t pid_of(unsigned run) { return 1000 + static_cast<std::int64_t>(run); }
std::int64_t tid_of(unsigned run, unsigned worker) { return pid_of(run) * 100 + worker + 1; }
std::uint32_t worker_sequence(unsigned run, unsigned worker) { return (run << 16) | (worker + 1); }
std::uint32_t run_sequence(unsigned run) { return (run << 16) | 0xFFFFu; }

constexpr unsigned max_workers = 0xFFFE;
constexpr unsigned max_runs = 0x10000;

void write_descriptors(unsigned run, const run_info& info, std::vector<std::uint8_t>& out, perfetto_write_stats& stats) {
    proto::writer w(out);
    {
        proto::nested packet(w, f::trace_packet);
        proto::nested td(w, f::track_descriptor);
        w.uint_field(f::td_uuid, process_uuid(run));
        proto::nested pd(w, f::td_process);
        w.int_field(f::pd_pid, pid_of(run));
        w.bytes_field(f::pd_process_name, info.name);
    }
    for (unsigned worker = 0; worker < info.workers; ++worker) {
        proto::nested packet(w, f::trace_packet);
        proto::nested td(w, f::track_descriptor);
        w.uint_field(f::td_uuid, thread_uuid(run, worker));
        w.int_field(f::td_sibling_order_rank, worker);
        proto::nested thd(w, f::td_thread);
        w.int_field(f::thd_pid, pid_of(run));
        w.int_field(f::thd_tid, tid_of(run, worker));
        w.bytes_field(f::thd_thread_name, "worker " + std::to_string(worker));
    }
    {
        proto::nested packet(w, f::trace_packet);
        proto::nested td(w, f::track_descriptor);
        w.uint_field(f::td_uuid, counter_uuid(run));
        w.uint_field(f::td_parent_uuid, process_uuid(run));
        w.bytes_field(f::td_name, "live iterations");
        proto::nested cd(w, f::td_counter);
        w.uint_field(f::cd_unit, f::unit_count);
    }
    stats.packets += 2 + info.workers;
}

bool is_slice_begin(event_kind k) {
    return k == event_kind::node_begin || k == event_kind::idle_begin || k == event_kind::park ||
           k == event_kind::task_begin;
}
// The BEGIN kind an END kind closes, or nullopt if `k` is no END.
std::optional<event_kind> opener_of(event_kind k) {
    switch (k) {
        case event_kind::node_end: return event_kind::node_begin;
        case event_kind::idle_end: return event_kind::idle_begin;
        case event_kind::park_end: return event_kind::park;
        case event_kind::task_end: return event_kind::task_begin;
        default: return std::nullopt;
    }
}

// Wake-up flows: an unpark of worker v at time t is linked to the end of the park of v that
// contains t (drawn as "wake worker v" -> "woken") (the first unpark to find a park gets it). Keys are record indices per worker.
struct wake_flows {
    std::vector<std::unordered_map<std::size_t, std::uint64_t>> out;   // unpark record -> flow id
    std::vector<std::unordered_map<std::size_t, std::uint64_t>> in;    // park_end record -> flow id
};

wake_flows match_wakeups(const std::vector<std::vector<event_record>>& records, std::uint64_t& next_flow_id) {
    const std::size_t n = records.size();
    struct park_span {
        std::uint64_t from, to;
        std::size_t end_index;
        bool claimed;
    };
    std::vector<std::vector<park_span>> parks(n);
    for (std::size_t w = 0; w < n; ++w) {
        bool parked = false;
        std::uint64_t parked_at = 0;
        for (std::size_t i = 0; i < records[w].size(); ++i) {
            const event_record& r = records[w][i];
            if (r.kind == event_kind::park) parked = true, parked_at = r.ticks;
            if (r.kind == event_kind::park_end && parked) {
                parks[w].push_back({parked_at, r.ticks, i, false});
                parked = false;
            }
        }
    }
    wake_flows flows{std::vector<std::unordered_map<std::size_t, std::uint64_t>>(n),
                     std::vector<std::unordered_map<std::size_t, std::uint64_t>>(n)};
    for (std::size_t w = 0; w < n; ++w) {
        for (std::size_t i = 0; i < records[w].size(); ++i) {
            const event_record& r = records[w][i];
            if (r.kind != event_kind::unpark || r.a >= n) continue;
            auto& spans = parks[r.a];
            const std::uint64_t t = r.ticks;
            auto it = std::lower_bound(spans.begin(), spans.end(), t,
                                       [](const park_span& s, std::uint64_t v) { return s.to < v; });
            if (it == spans.end() || it->from > t || it->claimed) continue;
            it->claimed = true;
            const std::uint64_t id = next_flow_id++;
            flows.out[w][i] = id;
            flows.in[r.a][it->end_index] = id;
        }
    }
    return flows;
}

}  // namespace

perfetto_writer::perfetto_writer(std::ostream& out) : out_(&out) {}

perfetto_writer::perfetto_writer(const std::filesystem::path& path) : path_(path), tmp_path_(path) {
    tmp_path_ += ".tmp";
    file_.open(tmp_path_, std::ios::binary | std::ios::trunc);
    if (!file_) throw std::runtime_error("perfetto_writer: cannot create " + tmp_path_.string());
    out_ = &file_;
}

perfetto_writer::~perfetto_writer() {
    if (!path_.empty() && !finished_) {
        file_.close();
        std::error_code ec;
        std::filesystem::remove(tmp_path_, ec);
    }
}

void perfetto_writer::begin_run(run_info info) {
    if (finished_) throw std::logic_error("perfetto_writer: begin_run after finish");
    if (in_run_) throw std::logic_error("perfetto_writer: begin_run while a run is open");
    if (info.workers == 0 || info.workers > max_workers)
        throw std::invalid_argument("perfetto_writer: a run needs 1.." + std::to_string(max_workers) + " workers");
    if (run_index_ >= max_runs) throw std::length_error("perfetto_writer: too many runs in one trace");
    run_ = std::move(info);
    records_.assign(run_.workers, {});
    in_run_ = true;
}

void perfetto_writer::add_chunk(unsigned worker, const event_record* records, std::size_t count) {
    if (!in_run_) throw std::logic_error("perfetto_writer: add_chunk outside a run");
    if (worker >= records_.size())
        throw std::out_of_range("perfetto_writer: records of worker " + std::to_string(worker) + " in a run of " +
                                std::to_string(records_.size()) + " workers");
    records_[worker].insert(records_[worker].end(), records, records + count);
}

recorder::sink_fn perfetto_writer::sink() {
    return [this](unsigned worker, const event_record* records, std::size_t count) { add_chunk(worker, records, count); };
}

void perfetto_writer::end_run(const tick_converter& clock) {
    if (!in_run_) throw std::logic_error("perfetto_writer: end_run without begin_run");
    const unsigned run = run_index_;
    const unsigned workers = run_.workers;
    std::vector<std::uint8_t> out;
    write_descriptors(run, run_, out, stats_);

    // Run-level packets: the "run" instant with the metadata, then the live-iterations counter,
    // merged over all workers in tick order.
    {
        sequence seq(run_sequence(run));
        std::optional<std::uint64_t> first_ticks;
        std::vector<std::pair<std::uint64_t, int>> deltas;
        for (const auto& rs : records_)
            for (const event_record& r : rs) {
                if (!first_ticks || r.ticks < *first_ticks) first_ticks = r.ticks;
                if (r.kind == event_kind::iteration_start) deltas.emplace_back(r.ticks, +1);
                if (r.kind == event_kind::iteration_retire) deltas.emplace_back(r.ticks, -1);
            }
        if (first_ticks) {
            event e;
            e.ts = clock.to_ns(*first_ticks);
            e.track = process_uuid(run);
            e.name = "run";
            e.args = {{"name", std::string_view(run_.name)}, {"workers", workers}, {"metadata", std::string_view(run_.metadata_json)}};
            seq.emit(e, out, stats_);
        }
        std::stable_sort(deltas.begin(), deltas.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        std::int64_t live = 0;
        for (const auto& [ticks, d] : deltas) {
            live += d;
            event e;
            e.ts = clock.to_ns(ticks);
            e.track = counter_uuid(run);
            e.type = ev_type::counter;
            e.counter_value = live;
            seq.emit(e, out, stats_);
        }
    }

    wake_flows wakes = match_wakeups(records_, next_flow_id_);

    for (unsigned worker = 0; worker < workers; ++worker) {
        sequence seq(worker_sequence(run, worker));
        const std::uint64_t track = thread_uuid(run, worker);
        std::vector<event_kind> open;   // BEGIN kinds of the slices open on this track, innermost last
        std::uint64_t last_ts = 0;

        auto emit = [&](std::uint64_t ts, ev_type type, std::string name, std::vector<arg> args = {},
                        std::uint64_t on_track = 0) {
            event e;
            e.ts = ts;
            e.track = on_track ? on_track : track;
            e.type = type;
            e.name = std::move(name);
            e.args = std::move(args);
            return e;
        };
        auto end_slice = [&](std::uint64_t ts, std::vector<arg> args = {}) {
            seq.emit(emit(ts, ev_type::slice_end, {}, std::move(args)), out, stats_);
            open.pop_back();
        };

        const auto& rs = records_[worker];
        for (std::size_t i = 0; i < rs.size(); ++i) {
            const event_record& r = rs[i];
            const std::uint64_t ts = clock.to_ns(r.ticks);
            last_ts = std::max(last_ts, ts);

            if (is_slice_begin(r.kind)) {
                event e;
                switch (r.kind) {
                    case event_kind::node_begin:
                        e = emit(ts, ev_type::slice_begin, "stage " + std::to_string(r.b),
                                 {{"iteration", r.a}, {"stage", r.b}, {"waited", r.c}});
                        break;
                    case event_kind::idle_begin: e = emit(ts, ev_type::slice_begin, "idle"); break;
                    case event_kind::park: e = emit(ts, ev_type::slice_begin, "parked"); break;
                    default: e = emit(ts, ev_type::slice_begin, "task", {{"task", r.a}}); break;
                }
                seq.emit(e, out, stats_);
                open.push_back(r.kind);
                continue;
            }
            if (const auto opener = opener_of(r.kind)) {
                const auto at = std::find(open.rbegin(), open.rend(), *opener);
                if (at == open.rend()) {   // nothing of this kind is open: drop the END
                    ++stats_.unmatched_ends;
                    continue;
                }
                // Close whatever was opened inside it first, so the track stays properly nested.
                for (auto inner = at - open.rbegin(); inner > 0; --inner) {
                    end_slice(ts);
                    ++stats_.closed_early;
                }
                std::vector<arg> args;
                if (r.kind == event_kind::idle_end) args.push_back({"failed_steals", r.a});
                end_slice(ts, std::move(args));
                // The wake-up flow ends on an instant right after the parked slice: on the END
                // itself the importer would bind it to the parked slice and draw it backwards.
                if (r.kind == event_kind::park_end)
                    if (auto it = wakes.in[worker].find(i); it != wakes.in[worker].end()) {
                        event e = emit(ts, ev_type::instant, "woken");
                        e.terminating_flow = it->second;
                        seq.emit(e, out, stats_);
                    }
                continue;
            }

            switch (r.kind) {
                case event_kind::steal: {
                    if (r.c != 1) break;   // only successful steals are drawn
                    event thief = emit(ts, ev_type::instant, "steal", {{"victim", r.a}});
                    if (r.a < workers) {
                        const std::uint64_t id = next_flow_id_++;
                        ++stats_.flows;
                        // The victim records nothing for the stolen job: mark it on its track here,
                        // written first so that at the equal timestamp the flow runs victim -> thief.
                        event victim = emit(ts, ev_type::instant, "stolen", {{"thief", worker}},
                                            thread_uuid(run, static_cast<unsigned>(r.a)));
                        victim.flow = id;
                        seq.emit(victim, out, stats_);
                        thief.terminating_flow = id;
                    }
                    seq.emit(thief, out, stats_);
                    break;
                }
                case event_kind::unpark: {
                    event e = emit(ts, ev_type::instant, "wake worker " + std::to_string(r.a), {{"worker", r.a}});
                    if (auto it = wakes.out[worker].find(i); it != wakes.out[worker].end()) {
                        e.flow = it->second;
                        ++stats_.flows;
                    }
                    seq.emit(e, out, stats_);
                    break;
                }
                case event_kind::iteration_suspend:
                    seq.emit(emit(ts, ev_type::instant, "suspend",
                                  {{"iteration", r.a}, {"stage", r.b}, {"waiting_on", r.c}}),
                             out, stats_);
                    break;
                case event_kind::iteration_resume:
                    seq.emit(emit(ts, ev_type::instant, "resume",
                                  {{"iteration", r.a}, {"stage", r.b}, {"resumed_by", r.c}}),
                             out, stats_);
                    break;
                case event_kind::throttle_suspend:
                case event_kind::throttle_resume:
                    seq.emit(emit(ts, ev_type::instant, std::string(event_name(r.kind)), {{"live", r.a}, {"K", r.b}}),
                             out, stats_);
                    break;
                case event_kind::iteration_start:
                case event_kind::iteration_retire:
                    seq.emit(emit(ts, ev_type::instant, std::string(event_name(r.kind)),
                                  {{"iteration", r.a}, {"slot", r.b}}),
                             out, stats_);
                    break;
                case event_kind::stage_wait_check:
                    seq.emit(emit(ts, ev_type::instant, "stage_wait check",
                                  {{"iteration", r.a}, {"stage", r.b}, {"satisfied", r.c}}),
                             out, stats_);
                    break;
                case event_kind::dropped:
                    stats_.dropped_events += r.a;
                    seq.emit(emit(ts, ev_type::instant, "dropped " + std::to_string(r.a) + " events",
                                  {{"dropped", r.a}}),
                             out, stats_);
                    break;
                default: break;   // worker_start/stop, counter: not drawn yet
            }
        }
        // A slice still open at the worker's last record ends there.
        while (!open.empty()) {
            end_slice(last_ts);
            ++stats_.closed_at_end;
        }
    }

    write(out);
    records_.clear();
    in_run_ = false;
    ++run_index_;
}

void perfetto_writer::write(const std::vector<std::uint8_t>& bytes) {
    out_->write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!*out_) throw std::runtime_error("perfetto_writer: write failed" +
                                                 (path_.empty() ? std::string() : " (" + tmp_path_.string() + ")"));
}

void perfetto_writer::finish() {
    if (finished_) return;
    if (in_run_) throw std::logic_error("perfetto_writer: finish with a run still open (call end_run)");
    out_->flush();
    if (!*out_) throw std::runtime_error("perfetto_writer: flush failed");
    if (!path_.empty()) {
        file_.close();
        if (!file_) throw std::runtime_error("perfetto_writer: closing " + tmp_path_.string() + " failed");
        std::filesystem::rename(tmp_path_, path_);
    }
    finished_ = true;
}

}  // namespace pipescope::trace
