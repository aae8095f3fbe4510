// The time breakdown (breakdown.hpp).
#include <pipescope/analysis/breakdown.hpp>

#include <algorithm>

namespace pipescope::analysis {

const char* to_string(time_category c) {
    switch (c) {
        case time_category::work: return "work";
        case time_category::queue: return "queue";
        case time_category::scheduler: return "scheduler";
        case time_category::stealing: return "stealing";
        case time_category::idle: return "idle";
        case time_category::stall: return "stall";
        case time_category::parked: return "parked";
        case time_category::untraced: return "untraced";
    }
    return "?";
}

const char* describe(time_category c) {
    switch (c) {
        case time_category::work: return "running node slices (stage j) and fork-join tasks";
        case time_category::queue: return "queue operations (push/pop/reserve/commit slices; none in pipeline runs)";
        case time_category::scheduler:
            return "between slices (not after a steal): stage boundaries, suspending/resuming iterations, the worker loop";
        case time_category::stealing: return "after a successful steal until the stolen work starts running";
        case time_category::idle: return "looking for work (failed steal attempts) while the run had nothing waiting";
        case time_category::stall:
            return "blocked on a queue, or idle while work existed but could not run: an iteration waited at a stage "
                   "(cross edge) or the loop was throttled at K";
        case time_category::parked: return "asleep until woken";
        case time_category::untraced:
            return "before the worker's first event or after its last: nothing recorded (e.g. parked since before the recording began)";
    }
    return "";
}

std::uint64_t time_split::sum() const {
    std::uint64_t s = 0;
    for (auto v : ns) s += v;
    return s;
}

std::uint64_t run_breakdown::busy_ns() const noexcept {
    const time_split& t = total.time;
    const std::uint64_t waiting =
        t[time_category::idle] + t[time_category::stall] + t[time_category::parked] + t[time_category::untraced];
    return t.span > waiting ? t.span - waiting : 0;
}

namespace {

struct interval {
    std::uint64_t a, b;
};

// The union of the run's waiting/throttled line states, sorted and disjoint.
std::vector<interval> waiting_union(const run_scope& r, bool& any_lines) {
    std::vector<interval> v;
    any_lines = false;
    for (auto ti : r.lines) {
        for (const tm::slice& s : r.model->tracks[ti].slices) {
            const slice_kind k = s.kind;
            if (k == slice_kind::running || k == slice_kind::waiting || k == slice_kind::throttled) any_lines = true;
            if ((k == slice_kind::waiting || k == slice_kind::throttled) && s.end > s.begin) v.push_back({s.begin, s.end});
        }
    }
    std::sort(v.begin(), v.end(), [](const interval& x, const interval& y) { return x.a < y.a; });
    std::vector<interval> u;
    for (const interval& x : v) {
        if (!u.empty() && x.a <= u.back().b) u.back().b = std::max(u.back().b, x.b);
        else u.push_back(x);
    }
    return u;
}

// Length of [a, b) covered by the union.
std::uint64_t overlap(const std::vector<interval>& u, std::uint64_t a, std::uint64_t b) {
    auto it = std::upper_bound(u.begin(), u.end(), a, [](std::uint64_t t, const interval& x) { return t < x.b; });
    std::uint64_t n = 0;
    for (; it != u.end() && it->a < b; ++it) n += std::min(b, it->b) - std::max(a, it->a);
    return n;
}

struct open_slice {
    std::uint64_t end;
    slice_kind kind;
};

// The part of the run a worker was traced: its first to its last event. Slices open when the
// recording stopped run to the end (see the header), and so does the interval then.
struct traced_span {
    std::uint64_t first = 0, last = 0;   // within the run
    std::uint64_t last_event = 0;

    bool open_at_end(const tm::slice& s) const {
        const slice_kind k = s.kind;
        return s.unterminated || ((k == slice_kind::idle || k == slice_kind::parked) && s.end >= last_event);
    }
};

traced_span traced_span_of(const tm::track& t, std::uint64_t start, std::uint64_t end) {
    traced_span sp;
    std::uint64_t first = ~0ull;
    for (const tm::slice& s : t.slices) {
        first = std::min(first, s.begin);
        sp.last_event = std::max(sp.last_event, s.end);
    }
    if (!t.instants.empty()) {
        first = std::min(first, t.instants.front().ts);
        sp.last_event = std::max(sp.last_event, t.instants.back().ts);
    }
    std::uint64_t last = sp.last_event;
    for (auto it = t.slices.rbegin(); it != t.slices.rend() && last < end; ++it)
        if (sp.open_at_end(*it)) last = end;
    sp.first = std::clamp(first, start, end);
    sp.last = std::clamp(last, sp.first, end);
    return sp;
}

// One worker's time over the run, split into categories by a sweep over its slices in begin order:
// a stack holds the slices still open, the innermost one owns the time, and the time outside every
// slice is a gap (scheduler, stealing or untraced).
class time_sweep {
public:
    time_sweep(const tm::track& t, tm::string_id steal_id, const std::vector<interval>& waiting, std::uint64_t start,
               std::uint64_t end, std::vector<open_slice>& stack, time_split& ts)
        : t_(t),
          steal_id_(steal_id),
          waiting_(waiting),
          start_(start),
          end_(end),
          span_(traced_span_of(t, start, end)),
          stack_(stack),
          ts_(ts),
          top_begin_(start),
          cursor_(start) {}

    void run() {
        stack_.clear();
        for (const tm::slice& s : t_.slices) {
            std::uint64_t b = std::clamp(s.begin, start_, end_),
                          e = span_.open_at_end(s) ? end_ : std::clamp(s.end, b, end_);
            while (!stack_.empty() && stack_.back().end <= b) close_innermost();
            if (stack_.empty()) {
                gap(cursor_, b);
                top_begin_ = b;
            } else {
                inside(cursor_, b, stack_.back().kind);
                e = std::min(e, stack_.back().end);   // a nested slice ends with its parent
            }
            cursor_ = std::max(cursor_, b);
            stack_.push_back({e, s.kind});
        }
        while (!stack_.empty()) close_innermost();
        gap(cursor_, end_);
    }

private:
    void close_innermost() {
        inside(cursor_, stack_.back().end, stack_.back().kind);
        cursor_ = std::max(cursor_, stack_.back().end);
        stack_.pop_back();
    }

    // Successful steals, in time order.
    const tm::instant* next_steal() {
        while (si_ < t_.instants.size() && t_.instants[si_].name != steal_id_) ++si_;
        return si_ < t_.instants.size() ? &t_.instants[si_] : nullptr;
    }

    // [a, b) inside no slice: untraced outside the traced span; stealing from a steal made since the
    // latest outermost slice began to the end of the gap; scheduler otherwise.
    void gap(std::uint64_t a, std::uint64_t b) {
        if (b <= a) return;
        if (a < span_.first) {   // before the first event
            const std::uint64_t u = std::min(b, span_.first);
            ts_[time_category::untraced] += u - a;
            a = u;
        }
        if (b > span_.last) {   // after the last event
            const std::uint64_t u = std::max(a, span_.last);
            ts_[time_category::untraced] += b - u;
            b = u;
        }
        if (b <= a) return;
        for (const tm::instant* s = next_steal(); s && s->ts <= b; s = next_steal()) {
            last_steal_ = s->ts;
            have_steal_ = true;
            ++si_;
        }
        if (have_steal_ && last_steal_ >= top_begin_) {
            const std::uint64_t s = std::clamp(last_steal_, a, b);
            ts_[time_category::scheduler] += s - a;
            ts_[time_category::stealing] += b - s;
            have_steal_ = false;   // one steal explains one gap
        } else {
            ts_[time_category::scheduler] += b - a;
        }
    }

    // [a, b) inside a slice of kind k.
    void inside(std::uint64_t a, std::uint64_t b, slice_kind k) {
        if (b <= a) return;
        switch (k) {
            case slice_kind::idle: {
                const std::uint64_t st = overlap(waiting_, a, b);
                ts_[time_category::stall] += st;
                ts_[time_category::idle] += (b - a) - st;
                break;
            }
            case slice_kind::parked: ts_[time_category::parked] += b - a; break;
            case slice_kind::blocked: ts_[time_category::stall] += b - a; break;
            case slice_kind::waiting: ts_[time_category::idle] += b - a; break;   // bind-to-stage: input queue empty
            case slice_kind::queue: ts_[time_category::queue] += b - a; break;
            default: ts_[time_category::work] += b - a; break;
        }
    }

    const tm::track& t_;
    const tm::string_id steal_id_;
    const std::vector<interval>& waiting_;
    const std::uint64_t start_, end_;
    const traced_span span_;
    std::vector<open_slice>& stack_;   // the caller's, reused from worker to worker
    time_split& ts_;
    std::uint64_t top_begin_;   // begin of the latest outermost slice
    std::uint64_t cursor_;      // time up to here is counted
    std::size_t si_ = 0;        // the next instant to look at for a steal
    bool have_steal_ = false;   // a steal not yet used to explain a gap
    std::uint64_t last_steal_ = 0;
};

// A worker's nodes, folded slices, successful and failed steals.
void count_worker_events(const tm::trace_model& m, const tm::track& t, tm::string_id steal_id, tm::string_id failed_id,
                         worker_breakdown& w) {
    for (const auto& in : t.instants) w.steals += in.name == steal_id;
    for (const tm::slice& s : t.slices) {
        if (s.kind == slice_kind::node) {
            const node_extent x = m.node_of(s);
            w.nodes += x.nodes;
            w.folded_runs += x.folded();
        }
        if (s.kind == slice_kind::idle && failed_id != tm::no_index)
            for (auto* a = m.args_begin(s); a != m.args_end(s); ++a)
                if (a->name == failed_id) w.failed_steals += a->bits();
    }
}

void add_to_total(const worker_breakdown& w, worker_breakdown& total) {
    for (int c = 0; c < time_category_count; ++c) total.time.ns[c] += w.time.ns[c];
    total.time.span += w.time.span;
    total.nodes += w.nodes;
    total.folded_runs += w.folded_runs;
    total.steals += w.steals;
    total.failed_steals += w.failed_steals;
}

// CPU and descheduled time per worker, from the run summary: the total only when every worker has them.
void add_worker_times(const run_scope& r, run_breakdown& out) {
    const tm::run* ri = r.run_info();
    if (!ri || ri->worker_times.empty()) return;
    bool all = !out.workers.empty();
    std::uint64_t cpu = 0, off = 0;
    for (std::size_t i = 0; i < out.workers.size(); ++i) {
        const tm::track& t = r.model->tracks[r.workers[i]];
        const std::uint64_t w = t.worker >= 0 ? static_cast<std::uint64_t>(t.worker) : i;
        const auto x = std::find_if(ri->worker_times.begin(), ri->worker_times.end(),
                                    [&](const tm::worker_time& wt) { return wt.worker == w; });
        if (x == ri->worker_times.end()) {
            all = false;
            continue;
        }
        out.workers[i].cpu_ns = x->cpu_ns;
        out.workers[i].descheduled_ns = x->descheduled_ns;
        cpu += x->cpu_ns;
        off += x->descheduled_ns;
    }
    if (all) out.total.cpu_ns = cpu, out.total.descheduled_ns = off;
}

}   // namespace

std::optional<double> worker_breakdown::core_share() const noexcept {
    if (!cpu_ns || !descheduled_ns || *cpu_ns + *descheduled_ns == 0) return std::nullopt;
    return static_cast<double>(*cpu_ns) / static_cast<double>(*cpu_ns + *descheduled_ns);
}

double worker_breakdown::descheduled_fraction() const noexcept {
    return descheduled_ns && time.span ? static_cast<double>(*descheduled_ns) / static_cast<double>(time.span) : 0.0;
}

run_breakdown compute_breakdown(const run_scope& r) {
    const tm::trace_model& m = *r.model;
    run_breakdown out;
    out.title = r.title;
    out.span = r.makespan();
    out.total.name = "total";
    bool any_lines = false;
    const std::vector<interval> waiting = waiting_union(r, any_lines);
    out.stall_derived = any_lines;

    const tm::string_id failed_id = find_string(m, vocab::key(vocab::arg_key::failed_steals));
    const tm::string_id steal_id = find_string(m, vocab::steal);
    const std::uint64_t start = r.start, end = std::max(r.start, r.end);
    std::vector<open_slice> stack;
    for (auto ti : r.workers) {
        const tm::track& t = m.tracks[ti];
        worker_breakdown w;
        w.name = t.name;
        w.track = ti;
        w.time.span = end - start;
        count_worker_events(m, t, steal_id, failed_id, w);
        time_sweep(t, steal_id, waiting, start, end, stack, w.time).run();
        add_to_total(w, out.total);
        out.workers.push_back(std::move(w));
    }
    add_worker_times(r, out);
    return out;
}

}   // namespace pipescope::analysis
