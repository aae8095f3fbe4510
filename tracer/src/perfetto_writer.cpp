#include <pipescope/trace/perfetto_writer.hpp>

#include "counter_coalescer.hpp"
#include "perfetto_fields.hpp"
#include "packet_compressor.hpp"
#include "track_event_sequence.hpp"

#include <pipescope/trace/proto_writer.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <algorithm>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace pipescope::trace {

using detail::counter_coalescer;

namespace {

namespace f = fields;
namespace v = vocab;
using detail::arg_key;
using detail::event_type;
using detail::name_table;
using detail::track_event_packet;
using detail::track_event_sequence;
using detail::user_arg;
using detail::user_value;

// Track uuids of run r: (r + 1) << 32 | what. Unique across runs of one file.
std::uint64_t run_base(unsigned run) { return (std::uint64_t{run} + 1) << 32; }
std::uint64_t process_uuid(unsigned run) { return run_base(run) | 1; }
std::uint64_t live_counter_uuid(unsigned run) { return run_base(run) | 2; }
std::uint64_t lines_group_uuid(unsigned run) { return run_base(run) | 3; }
std::uint64_t control_line_uuid(unsigned run) { return run_base(run) | 4; }
std::uint64_t counter_uuid(unsigned run, std::size_t k) { return run_base(run) | (0x10000u + k); }
std::uint64_t thread_uuid(unsigned run, unsigned worker) { return run_base(run) | (0x100000u + worker); }
std::uint64_t line_uuid(unsigned run, unsigned slot) { return run_base(run) | (0x200000u + slot); }
std::int64_t pid_of(unsigned run) { return 1000 + static_cast<std::int64_t>(run); }
std::int64_t tid_of(unsigned run, unsigned worker) { return pid_of(run) * 100 + worker + 1; }
// Recording threads that are not workers (writers >= run_info::workers, e.g. bind-to-stage's stage
// threads) get tids of their own range, so no count of them can collide with another run's workers.
std::int64_t extra_tid_of(unsigned run, unsigned writer) { return pid_of(run) * 100000 + writer + 1; }
std::uint32_t worker_sequence(unsigned run, unsigned worker) { return (run << 16) | (worker + 1); }
std::uint32_t run_sequence(unsigned run) { return (run << 16) | 0xFFFFu; }

constexpr unsigned max_workers = 0xFFFE;
constexpr unsigned max_runs = 0x10000;

// Flow ids: kind in the top 4 bits, run in the next 16, a value the two ends agree on below.
enum class flow_kind : std::uint64_t { steal = 1, wake = 2, resume = 3 };
std::uint64_t flow_id(flow_kind k, unsigned run, std::uint64_t value) {
    return static_cast<std::uint64_t>(k) << 60 | std::uint64_t{run & 0xFFFFu} << 44 | (value & ((1ull << 44) - 1));
}

bool opens_slice(event_kind k) {
    return k == event_kind::node_begin || k == event_kind::idle_begin || k == event_kind::park ||
           k == event_kind::task_begin || k == event_kind::blocked_begin;
}
// The BEGIN kind an END kind closes, or nullopt if `k` is no END.
std::optional<event_kind> opener_of(event_kind k) {
    switch (k) {
        case event_kind::node_end: return event_kind::node_begin;
        case event_kind::node_fold_end: return event_kind::node_begin;
        case event_kind::idle_end: return event_kind::idle_begin;
        case event_kind::park_end: return event_kind::park;
        case event_kind::task_end: return event_kind::task_begin;
        case event_kind::blocked_end: return event_kind::blocked_begin;
        default: return std::nullopt;
    }
}

void add(perfetto_write_stats& total, const perfetto_write_stats& s) {
    total.packets += s.packets;
    total.slices += s.slices;
    total.instants += s.instants;
    total.flows += s.flows;
    total.counter_values += s.counter_values;
    total.records += s.records;
    total.unmatched_ends += s.unmatched_ends;
    total.closed_at_end += s.closed_at_end;
    total.closed_early += s.closed_early;
    total.closed_at_loss += s.closed_at_loss;
    total.dropped_events += s.dropped_events;
    total.folded_runs += s.folded_runs;
    total.folded_nodes += s.folded_nodes;
    total.counter_samples += s.counter_samples;
    total.annotations += s.annotations;
    total.annotations_unattached += s.annotations_unattached;
    total.annotations_lost += s.annotations_lost;
}

struct track_descriptor {
    std::uint64_t uuid = 0, parent = 0;
    std::string_view name;
    std::optional<int> rank;
    bool explicit_children = false, counter = false;
};

void write_descriptor(proto::writer& w, const track_descriptor& d) {
    proto::nested packet(w, f::trace_packet);
    proto::nested td(w, f::track_descriptor);
    w.uint_field(f::td_uuid, d.uuid);
    if (d.parent) w.uint_field(f::td_parent_uuid, d.parent);
    w.bytes_field(f::td_name, d.name);
    if (d.rank) w.int_field(f::td_sibling_order_rank, *d.rank);
    if (d.explicit_children) w.uint_field(f::td_child_ordering, f::child_ordering_explicit);
    if (d.counter) {
        proto::nested cd(w, f::td_counter);
        w.uint_field(f::cd_unit, f::unit_count);
    }
}

}   // namespace

// The conversion state of one run: per worker its sequence, its open slices and its latest
// timestamp; which line tracks are described already. Nothing grows with the run's length.
class perfetto_writer::run_state {
public:
    run_state(unsigned index, run_info info, run_clock clock, std::uint64_t counter_quantum_ns)
        : index_(index),
          info_(std::move(info)),
          clock_(clock),
          counter_quantum_(counter_quantum_ns),
          run_seq_(run_sequence(index), 0) {
        workers_.reserve(info_.workers);
        for (unsigned w = 0; w < info_.workers; ++w)
            workers_.push_back({track_event_sequence(worker_sequence(index, w), thread_uuid(index, w)),
                                {},
                                0,
                                true,
                                counter_coalescer(counter_quantum_)});
        n_.stolen = names_.id(v::stolen);
        n_.steal = names_.id(v::steal);
        n_.idle = names_.id(v::idle);
        n_.parked = names_.id(v::parked);
        n_.task = names_.id(v::task);
        n_.woken = names_.id(v::woken);
        n_.suspend = names_.id(v::suspend);
        n_.resume = names_.id(v::resume);
        n_.throttled = names_.id(v::throttled);
        n_.throttle_resume = names_.id(v::throttle_resume);
        n_.stage_wait_check = names_.id(v::stage_wait_check);
        n_.running = names_.id(v::running);
        n_.waiting_to_retire = names_.id(v::waiting_to_retire);
        n_.events_lost = names_.id(v::events_lost);
        n_.run = names_.id(v::run);
        n_.run_summary = names_.id(v::run_summary);
    }

    void write_start(proto::writer& w) {
        {
            proto::nested packet(w, f::trace_packet);
            proto::nested td(w, f::track_descriptor);
            w.uint_field(f::td_uuid, process_uuid(index_));
            proto::nested pd(w, f::td_process);
            w.int_field(f::pd_pid, pid_of(index_));
            w.bytes_field(f::pd_process_name, info_.name);
        }
        for (unsigned worker = 0; worker < info_.workers; ++worker) {
            proto::nested packet(w, f::trace_packet);
            proto::nested td(w, f::track_descriptor);
            w.uint_field(f::td_uuid, thread_uuid(index_, worker));
            w.int_field(f::td_sibling_order_rank, worker);
            proto::nested thd(w, f::td_thread);
            w.int_field(f::thd_pid, pid_of(index_));
            w.int_field(f::thd_tid, tid_of(index_, worker));
            w.bytes_field(f::thd_thread_name, v::numbered(v::worker_prefix, worker));
        }
        write_descriptor(w, {lines_group_uuid(index_), process_uuid(index_), v::lines_group, {}, true, false});
        write_descriptor(w, {control_line_uuid(index_), lines_group_uuid(index_), v::control_line, 0, false, false});
        write_descriptor(w, {live_counter_uuid(index_), process_uuid(index_), v::live_iterations, {}, false, true});
        for (std::size_t k = 0; k < info_.counters.size(); ++k)
            write_descriptor(w, {counter_uuid(index_, k), process_uuid(index_), info_.counters[k], {}, false, true});
        stats_.packets += 4 + info_.workers + info_.counters.size();

        track_event_packet e;
        e.ts = clock_.start_ns();
        e.track = process_uuid(index_);
        e.name = n_.run;
        e.text(arg_key::name, info_.name).arg(arg_key::workers, info_.workers).text(arg_key::metadata, info_.metadata_json);
        emit(run_seq_, e, w);
    }

    void convert(unsigned worker, const event_record* records, std::size_t count, proto::writer& w) {
        if (worker >= max_workers) {
            std::string what = "perfetto_writer: records of writer ";
            what += std::to_string(worker);
            what += ", at most ";
            what += std::to_string(max_workers);
            what += " writers per run";
            throw std::out_of_range(what);
        }
        // A writer beyond the run's workers is a recording thread that is not a worker (the
        // recorder's add_writer): its thread track is described at its first record.
        while (worker >= workers_.size()) {
            const auto k = static_cast<unsigned>(workers_.size());
            workers_.push_back({track_event_sequence(worker_sequence(index_, k), thread_uuid(index_, k)),
                                {},
                                0,
                                false,
                                counter_coalescer(counter_quantum_)});
        }
        worker_state& ws = workers_[worker];
        if (!ws.described && count > 0) describe_extra_thread(worker, ws, records[0], w);
        for (std::size_t i = 0; i < count; ++i) convert(worker, ws, records[i], w);
        stats_.records += count;
    }

    void write_end(std::string_view outcome, std::string_view end_metadata, proto::writer& w) {
        for (worker_state& ws : workers_) flush_counters(ws, w);
        std::uint64_t end_ts = clock_.start_ns();
        for (const worker_state& ws : workers_) end_ts = std::max(end_ts, ws.last_ts);
        // A slice still open when recording stopped (a worker idle or parked until the end) lasted
        // until the run's end, not just until that worker's last record.
        for (worker_state& ws : workers_)
            while (!ws.open.empty()) {
                end_slice(ws, end_ts, w);
                ++stats_.closed_at_end;
            }
        track_event_packet e;
        e.ts = end_ts;
        e.track = process_uuid(index_);
        e.name = n_.run_summary;
        e.arg(arg_key::slices, stats_.slices)
            .arg(arg_key::instants, stats_.instants + 1)   // this one included
            .arg(arg_key::flows, stats_.flows)
            .arg(arg_key::counter_values, stats_.counter_values)
            .arg(arg_key::dropped_events, stats_.dropped_events);
        if (!outcome.empty()) e.text(arg_key::outcome, outcome);
        if (!end_metadata.empty()) e.text(arg_key::metadata, end_metadata);
        emit(run_seq_, e, w);
    }

    const perfetto_write_stats& stats() const noexcept { return stats_; }

private:
    // A user annotation recorded on a worker's track, for the slice that was innermost then (open
    // at `depth`, counted from 1), until that slice's END. name 0: that slice's annotations past
    // max_pending_notes, `bits` of them.
    struct note {
        std::uint32_t name;   // name_table id of the key as written (vocab::user_arg_name)
        std::uint32_t depth;
        std::uint64_t bits;
        annotation_value kind;
    };
    static constexpr std::size_t max_pending_notes = 4096;   // per track: bounded memory

    struct worker_state {
        track_event_sequence seq;
        std::vector<event_kind> open;   // BEGIN kinds of the slices open on this track, innermost last
        std::uint64_t last_ts;
        bool described;                                  // its thread track descriptor is written
        counter_coalescer counters;                      // this sequence's counter samples, coalesced per quantum
        std::optional<event_record> pending_node = {};   // an open node's BEGIN, not written yet (emit_node_begin)
        std::uint64_t pending_ts = 0;
        std::vector<note> notes = {};   // user annotations of the open slices, innermost last (on_annotation)
    };

    // The thread track of a writer that is not a worker, named by its first record if that is a
    // thread_name ("stage 2 · thread 1"; the policy records it first), else "thread w". A writer
    // always records for one role (scheduler_impl::acquire_thread_buffer), so the name never changes.
    void describe_extra_thread(unsigned writer, worker_state& ws, const event_record& first, proto::writer& w) {
        std::string name;
        if (first.kind == event_kind::thread_name)
            name = v::numbered(v::stage_prefix, first.a, v::numbered(v::stage_thread_infix, first.b));
        else name = v::numbered(v::thread_prefix, writer);
        proto::nested packet(w, f::trace_packet);
        proto::nested td(w, f::track_descriptor);
        w.uint_field(f::td_uuid, thread_uuid(index_, writer));
        w.int_field(f::td_sibling_order_rank, writer);
        proto::nested thd(w, f::td_thread);
        w.int_field(f::thd_pid, pid_of(index_));
        w.int_field(f::thd_tid, extra_tid_of(index_, writer));
        w.bytes_field(f::thd_thread_name, name);
        ++stats_.packets;
        ws.described = true;
    }

    void emit(track_event_sequence& seq, const track_event_packet& e, proto::writer& w) {
        seq.write(e, names_, w.buffer());
        ++stats_.packets;
        switch (e.type) {
            case event_type::slice_begin: ++stats_.slices; break;
            case event_type::instant: ++stats_.instants; break;
            case event_type::counter: ++stats_.counter_values; break;
            default: break;
        }
    }
    static track_event_packet at(std::uint64_t ts, event_type type, std::uint32_t name, std::uint64_t track = 0) {
        track_event_packet e;
        e.ts = ts;
        e.type = type;
        e.name = name;
        e.track = track;
        return e;
    }
    void end_slice(worker_state& ws, std::uint64_t ts, proto::writer& w) {
        flush_pending_node(ws, w);
        track_event_packet e = at(ts, event_type::slice_end, 0);
        attach_notes(ws, e);
        emit(ws.seq, e, w);
        ws.open.pop_back();
    }

    // The user annotations of the innermost open slice, onto its END `e`: each key once, in the
    // order first annotated, with its values in recording order (valid until the next call).
    void attach_notes(worker_state& ws, track_event_packet& e) {
        const auto depth = static_cast<std::uint32_t>(ws.open.size());
        auto first = ws.notes.end();
        while (first != ws.notes.begin() && std::prev(first)->depth == depth) --first;
        if (first == ws.notes.end()) return;
        user_args_.clear();
        user_values_.clear();
        std::uint64_t lost = 0;
        for (auto n = first; n != ws.notes.end(); ++n) {
            if (n->name == 0) lost += n->bits;
            else if (std::none_of(user_args_.begin(), user_args_.end(),
                                  [&](const user_arg& a) { return a.name == n->name; }))
                user_args_.push_back({n->name, nullptr, 0});
        }
        for (user_arg& a : user_args_) {
            for (auto n = first; n != ws.notes.end(); ++n)
                if (n->name == a.name) user_values_.push_back({n->bits, n->kind}), ++a.count;
        }
        const user_value* values = user_values_.data();
        for (user_arg& a : user_args_) {
            a.values = values;
            values += a.count;
        }
        e.users = user_args_.data();
        e.user_count = static_cast<std::uint32_t>(user_args_.size());
        if (lost) e.arg(arg_key::annotations_lost, lost);
        stats_.annotations += user_values_.size();
        ws.notes.erase(first, ws.notes.end());
    }

    // A node slice: node (iteration, stage), or with `fold` the folded run from it to fold's
    // (last iteration, last stage), fold->c nodes — "stage 3–40" (a pipeline iteration's
    // consecutive stages) or "stage 2 ×17" (instances of one graph stage).
    void emit_node_begin(worker_state& ws, const event_record& r, std::uint64_t ts, const event_record* fold,
                         proto::writer& w) {
        track_event_packet e = at(ts, event_type::slice_begin, fold ? folded_name(r.b, *fold) : stage_name(r.b));
        e.arg(arg_key::iteration, r.a).arg(arg_key::stage, r.b);
        if (r.c & node_waited) e.arg(arg_key::waited, 1);
        if (fold) e.arg(arg_key::nodes, fold->c).arg(arg_key::last_iteration, fold->a).arg(arg_key::last_stage, fold->b);
        if (r.c & node_resumed) {   // the end of a resumption flow (resume -> this node)
            e.terminating_flow = flow_id(flow_kind::resume, index_, r.a);
            ++stats_.flows;
        }
        if (fold && fold->c > 1) {
            ++stats_.folded_runs;
            stats_.folded_nodes += fold->c;
        }
        emit(ws.seq, e, w);
    }
    void flush_pending_node(worker_state& ws, proto::writer& w) {
        if (!ws.pending_node) return;
        emit_node_begin(ws, *ws.pending_node, ws.pending_ts, nullptr, w);
        ws.pending_node.reset();
    }
    std::uint32_t folded_name(std::uint64_t first_stage, const event_record& fold) {
        if (fold.c <= 1) return stage_name(first_stage);
        // Distinct names are bounded per run (each is written once per sequence); past the bound
        // the name only says which stage the run starts at, the annotations say the rest.
        const bool one_stage = fold.b == first_stage;
        const std::uint64_t key = one_stage ? (std::uint64_t{fold.c} << 20 | (first_stage & 0xFFFFF))
                                            : ((fold.b & 0xFFFFF) << 20 | (first_stage & 0xFFFFF));
        const std::uint64_t tag = (one_stage ? 0xAull : 5ull) << 60;   // not 4 << 60: waiting_name() keys (1 << 62)
        if (folded_names_ < max_folded_names || names_.has_key(tag | key))
            return names_.keyed(tag | key, [&] {
                ++folded_names_;
                // read as a node of stage j by name
                return v::numbered(v::stage_prefix, first_stage,
                                   one_stage ? named_suffix(first_stage) + v::numbered(v::fold_times, fold.c)
                                             : v::numbered(v::fold_dash, fold.b));
            });
        return names_.keyed((6ull << 60) | first_stage,
                            [&] { return v::numbered(v::stage_prefix, first_stage, v::fold_suffix); });
    }

    std::uint32_t stage_name(std::uint64_t stage) {
        return names_.keyed(stage, [&] { return v::numbered(v::stage_prefix, stage, named_suffix(stage)); });
    }
    // " · decode" when the program named stage j (run_info::stage_names), else nothing.
    std::string named_suffix(std::uint64_t stage) const {
        if (stage >= info_.stage_names.size() || info_.stage_names[stage].empty()) return {};
        return std::string(v::stage_name_infix) + info_.stage_names[stage];
    }
    std::uint32_t waiting_name(std::uint32_t stage) {
        if (stage == final_stage_operand) return n_.waiting_to_retire;
        return names_.keyed((1ull << 62) | stage, [&] { return v::numbered(v::waiting_at_stage, stage); });
    }
    std::uint32_t wake_name(std::uint64_t worker) {
        return names_.keyed((2ull << 62) | worker, [&] { return v::numbered(v::wake_prefix, worker); });
    }

    // A line track is described the first time a state is drawn on it.
    std::uint64_t line_track(unsigned slot, proto::writer& w) {
        if (slot >= lines_described_.size()) lines_described_.resize(slot + 1, false);
        if (!lines_described_[slot]) {
            const std::string name = v::numbered(v::line_prefix, slot);
            write_descriptor(w, {line_uuid(index_, slot), lines_group_uuid(index_), name, static_cast<int>(slot) + 1, false,
                                 false});
            ++stats_.packets;
            lines_described_[slot] = true;
        }
        return line_uuid(index_, slot);
    }

    // A state that began at tick `since` and ends now, drawn on a line track. Both ends are
    // written here, by the worker that ended the state; states of one line follow each other in
    // time but are written by different workers' sequences, so the begin is moved 1 ns later:
    // the importer then never sees a begin and the previous state's end at the same timestamp
    // (which it would order by file position, not by intent).
    void line_state(worker_state& ws, std::uint64_t track, std::uint64_t since, std::uint64_t now, std::uint32_t name,
                    std::optional<std::uint64_t> iteration, proto::writer& w) {
        if (since == 0) return;   // began before recording did
        const std::uint64_t begin = clock_.to_ns(since) + 1;
        track_event_packet b = at(begin, event_type::slice_begin, name, track);
        if (iteration) b.arg(arg_key::iteration, *iteration);
        emit(ws.seq, b, w);
        emit(ws.seq, at(std::max(now, begin), event_type::slice_end, 0, track), w);
    }

    void counter(worker_state& ws, std::uint64_t ts, std::uint64_t track, std::int64_t value, proto::writer& w) {
        ws.counters.add(track, ts, value,
                        [&](std::uint64_t tr, std::uint64_t t, std::int64_t v) { counter_now(ws, t, tr, v, w); });
        ++stats_.counter_samples;
    }
    void counter_now(worker_state& ws, std::uint64_t ts, std::uint64_t track, std::int64_t value, proto::writer& w) {
        track_event_packet e = at(ts, event_type::counter, 0, track);
        e.counter_value = value;
        emit(ws.seq, e, w);
    }
    void flush_counters(worker_state& ws, proto::writer& w) {
        ws.counters.flush([&](std::uint64_t tr, std::uint64_t t, std::int64_t v) { counter_now(ws, t, tr, v, w); });
    }

    void convert(unsigned worker, worker_state& ws, const event_record& r, proto::writer& w);
    void open_slice(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void close_slice(worker_state& ws, const event_record& r, event_kind opener, std::uint64_t ts, proto::writer& w);
    void on_steal(unsigned worker, worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_unpark(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_suspend(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_resume(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_loop_state(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_counter_record(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_buffer(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_earliest_resume(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_graph(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_detail_decision(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_loss(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w);
    void on_annotation(worker_state& ws, const event_record& r);

    // The tbb policy's counter tracks, described on first use: k = 0 "tokens in flight", k = j + 1
    // "stage j buffer" (uuids run_base | 0x300000 + k).
    std::uint64_t tbb_track(std::uint64_t k, proto::writer& w) {
        k = std::min<std::uint64_t>(k, 0xFFFFF);
        if (k >= tbb_described_.size()) tbb_described_.resize(k + 1, false);
        const std::uint64_t uuid = run_base(index_) | (0x300000u + k);
        if (!tbb_described_[k]) {
            const std::string name =
                k == 0 ? std::string(v::tokens_in_flight) : v::numbered(v::stage_prefix, k - 1, v::buffer_suffix);
            write_descriptor(w, {uuid, process_uuid(index_), name, {}, false, true});
            ++stats_.packets;
            tbb_described_[k] = true;
        }
        return uuid;
    }

    // bind-to-stage's counter tracks, described on first use: k = 2j "queue j fill" (items in the
    // queue in front of stage j; its capacity is Queue_size, program.queue in the metadata), k = 2j + 1
    // "stage j reorder buffer" (uuids run_base | 0x400000 + k).
    std::uint64_t bts_track(std::uint64_t k, proto::writer& w) {
        k = std::min<std::uint64_t>(k, 0xFFFFF);
        if (k >= bts_described_.size()) bts_described_.resize(k + 1, false);
        const std::uint64_t uuid = run_base(index_) | (0x400000u + k);
        if (!bts_described_[k]) {
            const std::string name = k % 2 == 0 ? v::numbered(v::queue_prefix, k / 2, v::fill_suffix)
                                                : v::numbered(v::stage_prefix, k / 2, v::reorder_buffer_suffix);
            write_descriptor(w, {uuid, process_uuid(index_), name, {}, false, true});
            ++stats_.packets;
            bts_described_[k] = true;
        }
        return uuid;
    }

    std::uint32_t blocked_name(std::uint64_t queue, std::uint32_t why) {
        const bool full = why == static_cast<std::uint32_t>(blocked_on::full);
        return names_.keyed((3ull << 62) | (queue << 1) | (full ? 0 : 1), [&] {
            return full ? v::numbered(v::queue_full_prefix, queue, v::queue_full_suffix)
                        : v::numbered(v::queue_empty_prefix, queue, v::queue_empty_suffix);
        });
    }

    // piper-earliest's "suspended iterations" counter track (uuid run_base | 5), described on first use.
    std::uint64_t suspended_track(proto::writer& w) {
        const std::uint64_t uuid = run_base(index_) | 5;
        if (!suspended_described_) {
            write_descriptor(w, {uuid, process_uuid(index_), v::suspended_iterations, {}, false, true});
            ++stats_.packets;
            suspended_described_ = true;
        }
        return uuid;
    }

    struct fixed_names {
        std::uint32_t stolen, steal, idle, parked, task, woken, suspend, resume, throttled, throttle_resume,
            stage_wait_check, running, waiting_to_retire, events_lost, run, run_summary;
    };

    unsigned index_;
    run_info info_;
    run_clock clock_;
    std::uint64_t counter_quantum_;
    name_table names_;
    fixed_names n_{};
    track_event_sequence run_seq_;
    std::vector<worker_state> workers_;
    std::vector<bool> lines_described_;
    std::vector<bool> tbb_described_;    // tbb_track()
    std::vector<bool> bts_described_;    // bts_track()
    bool suspended_described_ = false;   // piper-earliest: suspended_track()
    static constexpr std::size_t max_folded_names = 16384;
    std::size_t folded_names_ = 0;
    std::vector<user_arg> user_args_;   // attach_notes(): one END's user annotations
    std::vector<user_value> user_values_;
    std::uint64_t steals_ = 0;
    perfetto_write_stats stats_;
};

// One record of a worker's stream: a slice opens or closes, or one of the kinds below becomes
// instants, counter samples and line states.
void perfetto_writer::run_state::convert(unsigned worker, worker_state& ws, const event_record& r, proto::writer& w) {
    const std::uint64_t ts = clock_.to_ns(r.ticks);
    ws.last_ts = std::max(ws.last_ts, ts);
    if (opens_slice(r.kind)) return open_slice(ws, r, ts, w);
    if (const auto opener = opener_of(r.kind)) return close_slice(ws, r, *opener, ts, w);
    switch (r.kind) {
        case event_kind::steal: return on_steal(worker, ws, r, ts, w);
        case event_kind::unpark: return on_unpark(ws, r, ts, w);
        case event_kind::stage_wait_check:
            return emit(ws.seq,
                        at(ts, event_type::instant, n_.stage_wait_check)
                            .arg(arg_key::iteration, r.a)
                            .arg(arg_key::stage, r.b)
                            .arg(arg_key::value, r.c),
                        w);
        case event_kind::iteration_suspend: return on_suspend(ws, r, ts, w);
        case event_kind::iteration_resume: return on_resume(ws, r, ts, w);
        case event_kind::iteration_start:
        case event_kind::iteration_retire:
        case event_kind::throttle_suspend:
        case event_kind::throttle_resume: return on_loop_state(ws, r, ts, w);
        case event_kind::counter:
        case event_kind::token_acquire:
        case event_kind::token_release:
        case event_kind::queue_put:
        case event_kind::queue_take:
        case event_kind::reorder_buffer:
        case event_kind::suspended_iterations: return on_counter_record(ws, r, ts, w);
        case event_kind::buffer_put:
        case event_kind::buffer_take: return on_buffer(ws, r, ts, w);
        case event_kind::earliest_resume: return on_earliest_resume(ws, r, ts, w);
        case event_kind::stage_exception:   // a stage threw: the loop stops, the exception reaches the caller
            return emit(ws.seq,
                        at(ts, event_type::instant, names_.id(v::stage_exception))
                            .arg(arg_key::iteration, r.a)
                            .arg(arg_key::stage, r.b),
                        w);
        case event_kind::loop_cancelled:   // the caller's stop_token asked the loop to stop
            return emit(ws.seq, at(ts, event_type::instant, names_.id(v::cancelled)).arg(arg_key::live, r.a), w);
        case event_kind::graph_reserve:
        case event_kind::graph_commit:
        case event_kind::graph_blocked:
        case event_kind::graph_preempted:
        case event_kind::graph_stage_done: return on_graph(ws, r, ts, w);
        case event_kind::detail_decision: return on_detail_decision(ws, r, ts, w);
        case event_kind::dropped: return on_loss(ws, r, ts, w);
        case event_kind::annotation: return on_annotation(ws, r);
        default: return;   // worker_start/stop, thread_name (used by describe_extra_thread): nothing to draw
    }
}

void perfetto_writer::run_state::open_slice(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    track_event_packet e;
    switch (r.kind) {
        case event_kind::node_begin:
            // Held back until its end: a node_fold_end makes it a folded run's slice, named and
            // annotated for the whole run (the importer sorts by timestamp, so a BEGIN written
            // after the records that follow it in time is still placed right).
            flush_pending_node(ws, w);
            ws.pending_node = r;
            ws.pending_ts = ts;
            ws.open.push_back(r.kind);
            return;
        case event_kind::idle_begin: e = at(ts, event_type::slice_begin, n_.idle); break;
        case event_kind::park: e = at(ts, event_type::slice_begin, n_.parked); break;
        case event_kind::blocked_begin:   // bind-to-stage: the thread blocks on a full / empty queue
            e = at(ts, event_type::slice_begin, blocked_name(r.a, r.c)).arg(arg_key::stage, r.a);
            break;
        default: {   // a task: its id, its parent's and when it was spawned (docs/analysis.md "Fork-join runs")
            e = at(ts, event_type::slice_begin, n_.task).arg(arg_key::task, r.a).arg(arg_key::parent, r.b);
            const std::uint64_t delay = std::uint64_t{r.d} << 32 | r.c;
            if (delay && delay < r.ticks) e.arg(arg_key::spawn_delay, ts - std::min(ts, clock_.to_ns(r.ticks - delay)));
            break;
        }
    }
    emit(ws.seq, e, w);
    ws.open.push_back(r.kind);
}

// An END record: closes the innermost open slice of its opener's kind, and whatever was opened
// inside it first, so that the track stays properly nested. An END with nothing to close is dropped.
void perfetto_writer::run_state::close_slice(worker_state& ws, const event_record& r, event_kind opener, std::uint64_t ts,
                                             proto::writer& w) {
    const auto it = std::find(ws.open.rbegin(), ws.open.rend(), opener);
    if (it == ws.open.rend()) {
        ++stats_.unmatched_ends;
        return;
    }
    if (r.kind == event_kind::node_fold_end && ws.pending_node && it == ws.open.rbegin()) {
        emit_node_begin(ws, *ws.pending_node, ws.pending_ts, &r, w);
        ws.pending_node.reset();
    } else {
        flush_pending_node(ws, w);
    }
    for (auto inner = it - ws.open.rbegin(); inner > 0; --inner) {
        end_slice(ws, ts, w);
        ++stats_.closed_early;
    }
    track_event_packet e = at(ts, event_type::slice_end, 0);
    if (r.kind == event_kind::idle_end) e.arg(arg_key::failed_steals, r.a);
    if (r.kind == event_kind::node_fold_end)   // its BEGIN went out before the run's end was known
        e.arg(arg_key::nodes, r.c).arg(arg_key::last_iteration, r.a).arg(arg_key::last_stage, r.b);
    attach_notes(ws, e);
    emit(ws.seq, e, w);
    ws.open.pop_back();
    // The wake-up flow ends on an instant right after the parked slice: on the END itself the
    // importer would bind it to the parked slice and draw it backwards.
    if (r.kind == event_kind::park_end && r.a) {
        track_event_packet woken = at(ts, event_type::instant, n_.woken);
        woken.terminating_flow = flow_id(flow_kind::wake, index_, r.a);
        emit(ws.seq, woken, w);
        ++stats_.flows;
    }
}

void perfetto_writer::run_state::on_steal(unsigned worker, worker_state& ws, const event_record& r, std::uint64_t ts,
                                          proto::writer& w) {
    if (r.c != 1) return;   // failed attempts are summed up in idle_end
    track_event_packet thief = at(ts, event_type::instant, n_.steal).arg(arg_key::victim, r.a);
    if (r.a < workers_.size()) {
        // The victim records nothing for the stolen job: mark it on its track here, written
        // first so that at the equal timestamp the flow runs victim -> thief.
        track_event_packet victim = at(ts, event_type::instant, n_.stolen, thread_uuid(index_, static_cast<unsigned>(r.a)));
        victim.arg(arg_key::thief, worker);
        victim.flow = flow_id(flow_kind::steal, index_, ++steals_);
        thief.terminating_flow = victim.flow;
        emit(ws.seq, victim, w);
        ++stats_.flows;
    }
    emit(ws.seq, thief, w);
}

void perfetto_writer::run_state::on_unpark(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    track_event_packet e = at(ts, event_type::instant, wake_name(r.a)).arg(arg_key::worker, r.a);
    if (r.b) e.flow = flow_id(flow_kind::wake, index_, r.b);
    emit(ws.seq, e, w);
}

void perfetto_writer::run_state::on_suspend(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    track_event_packet e = at(ts, event_type::instant, n_.suspend).arg(arg_key::iteration, r.a);
    if (r.c != final_stage_operand) e.arg(arg_key::stage, r.c);
    if (r.a > 0) e.arg(arg_key::waiting_on, r.a - 1);
    emit(ws.seq, e, w);
    line_state(ws, line_track(r.d, w), r.b, ts, n_.running, r.a, w);
}

void perfetto_writer::run_state::on_resume(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    track_event_packet e = at(ts, event_type::instant, n_.resume).arg(arg_key::iteration, r.a);
    if (r.c != final_stage_operand) {   // a stage node follows: the flow ends on its begin
        e.arg(arg_key::stage, r.c);
        e.flow = flow_id(flow_kind::resume, index_, r.a);
    }
    emit(ws.seq, e, w);
    line_state(ws, line_track(r.d, w), r.b, ts, waiting_name(r.c), r.a, w);
}

// The loop's own states: live iterations (start, retire) and the throttle (K reached, going on).
void perfetto_writer::run_state::on_loop_state(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    switch (r.kind) {
        case event_kind::iteration_start: counter(ws, ts, live_counter_uuid(index_), r.c, w); break;
        case event_kind::iteration_retire:
            counter(ws, ts, live_counter_uuid(index_), r.c, w);
            line_state(ws, line_track(r.d, w), r.b, ts, n_.running, r.a, w);
            break;
        case event_kind::throttle_suspend:
            emit(ws.seq, at(ts, event_type::instant, n_.throttled).arg(arg_key::live, r.a).arg(arg_key::K, r.b), w);
            break;
        default:   // throttle_resume
            emit(ws.seq, at(ts, event_type::instant, n_.throttle_resume).arg(arg_key::live, r.a).arg(arg_key::K, r.c), w);
            line_state(ws, control_line_uuid(index_), r.b, ts, n_.throttled, std::nullopt, w);
            break;
    }
}

// Records that are one counter sample: the run's counters, and the policies' own state (tbb's
// tokens, bind-to-stage's queue fills and reorder buffers, piper-earliest's suspended list).
void perfetto_writer::run_state::on_counter_record(worker_state& ws, const event_record& r, std::uint64_t ts,
                                                   proto::writer& w) {
    switch (r.kind) {
        case event_kind::counter:
            if (r.a < info_.counters.size()) counter(ws, ts, counter_uuid(index_, r.a), static_cast<std::int64_t>(r.b), w);
            break;
        case event_kind::token_acquire:   // tbb: tokens in flight, against N (program.K in the metadata)
        case event_kind::token_release: counter(ws, ts, tbb_track(0, w), r.c, w); break;
        case event_kind::queue_put:   // bind-to-stage: the fill of the queue in front of stage b
        case event_kind::queue_take: counter(ws, ts, bts_track(2 * r.b, w), r.c, w); break;
        case event_kind::reorder_buffer:   // bind-to-stage: items early for their turn at stage a
            counter(ws, ts, bts_track(2 * r.a + 1, w), static_cast<std::int64_t>(r.b), w);
            break;
        default:   // suspended_iterations: piper-earliest's suspended list changed
            counter(ws, ts, suspended_track(w), static_cast<std::int64_t>(r.a), w);
            break;
    }
}

// tbb: an item parked in / taken from a serial filter's input buffer.
void perfetto_writer::run_state::on_buffer(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    const bool put = r.kind == event_kind::buffer_put;
    emit(ws.seq,
         at(ts, event_type::instant, names_.id(put ? v::parked_in_buffer : v::taken_from_buffer))
             .arg(arg_key::iteration, r.a)
             .arg(arg_key::stage, r.b)
             .arg(arg_key::value, r.c),
         w);
    counter(ws, ts, tbb_track(r.b + 1, w), r.c, w);
}

// piper-earliest resumed the earliest suspended iteration (its counter track got its sample from
// the claim's suspended_iterations record).
void perfetto_writer::run_state::on_earliest_resume(worker_state& ws, const event_record& r, std::uint64_t ts,
                                                    proto::writer& w) {
    const std::string_view point = r.c < std::size(v::earliest_points) ? v::earliest_points[r.c] : v::earliest_point_unknown;
    emit(ws.seq,
         at(ts, event_type::instant, names_.id(v::resume_earliest))
             .arg(arg_key::iteration, r.a)
             .arg(arg_key::suspended, r.b)
             .text(arg_key::resumed_at, point),
         w);
}

// Stage graphs (seed 004, seed 002): queue operations and stage states as instants on the worker
// that did them; queue fills and the footprint arrive as `counter` records.
void perfetto_writer::run_state::on_graph(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    switch (r.kind) {
        case event_kind::graph_reserve:
        case event_kind::graph_commit: {
            const bool pop = (r.c & graph_op_pop) != 0, ok = (r.c & graph_op_ok) != 0;
            const bool reserve = r.kind == event_kind::graph_reserve;
            static constexpr std::string_view names[2][2] = {{v::reserve_push, v::reserve_pop},
                                                             {v::commit_push, v::commit_pop}};
            track_event_packet e = at(ts, event_type::instant, names_.id(names[reserve ? 0 : 1][pop ? 1 : 0]))
                                       .arg(arg_key::queue, r.a)
                                       .arg(reserve ? arg_key::packets : arg_key::elements, r.b)
                                       .arg(reserve ? arg_key::granted : arg_key::published, ok ? 1 : 0)
                                       .arg(arg_key::stage, r.d);
            emit(ws.seq, e, w);
            break;
        }
        case event_kind::graph_blocked: {
            static constexpr std::string_view names[] = {v::stage_blocked_full, v::stage_blocked_empty,
                                                         v::stage_blocked_order};
            const std::string_view name = r.c < 3 ? names[r.c] : v::stage_blocked;
            emit(ws.seq, at(ts, event_type::instant, names_.id(name)).arg(arg_key::stage, r.a).arg(arg_key::queue, r.b), w);
            break;
        }
        case event_kind::graph_preempted:
            emit(ws.seq,
                 at(ts, event_type::instant, names_.id(v::preempted)).arg(arg_key::stage, r.a).arg(arg_key::packets, r.b),
                 w);
            break;
        default:   // graph_stage_done
            emit(ws.seq, at(ts, event_type::instant, names_.id(v::stage_done)).arg(arg_key::stage, r.a), w);
            break;
    }
}

// trace_detail::automatic measured the nodes and decided.
void perfetto_writer::run_state::on_detail_decision(worker_state& ws, const event_record& r, std::uint64_t ts,
                                                    proto::writer& w) {
    track_event_packet e = at(ts, event_type::instant, names_.id(r.c ? v::detail_folded : v::detail_nodes));
    if (r.a != all_stages) e.arg(arg_key::stage, r.a);
    e.arg(arg_key::value, r.b).arg(arg_key::nodes, r.d);
    emit(ws.seq, e, w);
}

// Events were lost before this record. What was open may never see its end: close it here, and
// restart the sequence's incremental state with previous_packet_dropped on the marker.
void perfetto_writer::run_state::on_loss(worker_state& ws, const event_record& r, std::uint64_t ts, proto::writer& w) {
    while (!ws.open.empty()) {
        end_slice(ws, ts, w);
        ++stats_.closed_at_loss;
    }
    stats_.dropped_events += r.a;
    flush_counters(ws, w);
    ws.seq.mark_loss();
    emit(ws.seq, at(ts, event_type::instant, n_.events_lost).arg(arg_key::dropped, r.a), w);
}

// A user annotation (pipescope::annotate) for the innermost slice open on the track, kept until
// that slice's END carries it (Perfetto merges an END's annotations into its slice's args). With
// no slice open there is nothing to attach it to: it is counted and ignored. The key is read here,
// once per distinct pointer: the runtime records the pointer to a string of static storage duration.
void perfetto_writer::run_state::on_annotation(worker_state& ws, const event_record& r) {
    const auto depth = static_cast<std::uint32_t>(ws.open.size());
    if (depth == 0 || r.a == 0) {
        ++stats_.annotations_unattached;
        return;
    }
    if (ws.notes.size() < max_pending_notes) {
        const char* key = reinterpret_cast<const char*>(static_cast<std::uintptr_t>(r.a));
        const std::uint32_t name = names_.keyed((7ull << 60) | r.a, [&] { return v::user_arg_name(key); });
        ws.notes.push_back({name, depth, r.b, static_cast<annotation_value>(r.c)});
        return;
    }
    if (ws.notes.back().name != 0 || ws.notes.back().depth != depth)
        ws.notes.push_back({0, depth, 0, annotation_value::int64});
    ++ws.notes.back().bits;
    ++stats_.annotations_lost;
}

perfetto_writer::perfetto_writer(std::ostream& out, writer_options options) : out_(&out), options_(options) {}

perfetto_writer::perfetto_writer(const std::filesystem::path& path, writer_options options)
    : file_(std::make_unique<atomic_output>(path)), options_(options) {}

// Without finish() the atomic_output's destructor removes the temporary file.
perfetto_writer::~perfetto_writer() = default;

void perfetto_writer::begin_run(run_info info, run_clock clock) {
    if (finished_) throw std::logic_error("perfetto_writer: begin_run after finish");
    if (run_) throw std::logic_error("perfetto_writer: begin_run while a run is open");
    if (info.workers == 0 || info.workers > max_workers)
        throw std::invalid_argument("perfetto_writer: a run needs 1.." + std::to_string(max_workers) + " workers");
    if (run_index_ >= max_runs) throw std::length_error("perfetto_writer: too many runs in one trace");
    run_ = std::make_unique<run_state>(run_index_, std::move(info), clock, options_.counter_quantum_ns);
    proto::writer w(packets_);
    run_->write_start(w);
    write_packets(packets_);
}

void perfetto_writer::add_chunk(unsigned worker, const event_record* records, std::size_t count) {
    if (!run_) throw std::logic_error("perfetto_writer: add_chunk outside a run");
    proto::writer w(packets_);
    run_->convert(worker, records, count, w);
    write_packets(packets_);
}

recorder::sink_fn perfetto_writer::sink() {
    return [this](unsigned worker, const event_record* records, std::size_t count) { add_chunk(worker, records, count); };
}

void perfetto_writer::end_run(std::string_view outcome, std::string_view end_metadata) {
    if (!run_) throw std::logic_error("perfetto_writer: end_run without begin_run");
    proto::writer w(packets_);
    run_->write_end(outcome, end_metadata, w);
    write_packets(packets_);
    add(stats_, run_->stats());
    run_.reset();
    ++run_index_;
}

// Writes the packets converted so far, as they are or as one compressed_packets packet, and
// flushes: a run killed later leaves a readable partial file ("NAME.XXXXXX.tmp", without its "run
// summary").
void perfetto_writer::write_packets(std::vector<std::uint8_t>& packets) {
    if (packets.empty()) return;
    const std::vector<std::uint8_t>* payload = &packets;
    std::vector<std::uint8_t> header;
    if (options_.compress) {
        // libdeflate, zlib format (packet_compressor.hpp); one compressor per level and thread, reused.
        thread_local detail::packet_compressor compressor;
        compressor.compress(packets, options_.compression_level, compressed_);
        const std::size_t size = compressed_.size();
        proto::writer h(header);
        h.tag(f::trace_packet, proto::wire::len);
        h.varint(proto::varint_size((f::compressed_packets << 3) | 2) + proto::varint_size(size) + size);
        h.tag(f::compressed_packets, proto::wire::len);
        h.varint(size);
        payload = &compressed_;
    }
    write_bytes(header, *payload);
    stats_.bytes += header.size() + payload->size();
    packets.clear();
}

// One write(2) of whole packets per call (a killed process leaves whole packets only), straight to
// the file: what the drain thread converted is on disk before it converts the next chunk.
void perfetto_writer::write_bytes(const std::vector<std::uint8_t>& header, const std::vector<std::uint8_t>& payload) {
    if (failure_) std::rethrow_exception(failure_);
    try {
        if (file_) {
            file_->write({{header.data(), header.size()}, {payload.data(), payload.size()}});
            return;
        }
        out_->write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size()));
        out_->write(reinterpret_cast<const char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
        out_->flush();
        if (!*out_) throw std::runtime_error("perfetto_writer: write failed");
    } catch (...) {
        failure_ = std::current_exception();
        throw;
    }
}

void perfetto_writer::finish() {
    if (finished_) return;
    // A failed write is what the caller must hear about, not the run it left open.
    if (failure_) std::rethrow_exception(failure_);
    if (run_) throw std::logic_error("perfetto_writer: finish with a run still open (call end_run)");
    try {
        if (file_) {
            file_->commit();
        } else {
            out_->flush();
            if (!*out_) throw std::runtime_error("perfetto_writer: flush failed");
        }
    } catch (...) {
        failure_ = std::current_exception();
        throw;
    }
    finished_ = true;
}

}   // namespace pipescope::trace
