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

    std::vector<open_slice> stack;
    for (auto ti : r.workers) {
        const tm::track& t = m.tracks[ti];
        worker_breakdown w;
        w.name = t.name;
        w.track = ti;
        time_split& ts = w.time;
        const std::uint64_t start = r.start, end = std::max(r.start, r.end);
        ts.span = end - start;

        // Successful steals, in time order.
        std::size_t si = 0;
        bool have_steal = false;
        std::uint64_t last_steal = 0;
        auto next_steal = [&]() -> const tm::instant* {
            while (si < t.instants.size() && t.instants[si].name != steal_id) ++si;
            return si < t.instants.size() ? &t.instants[si] : nullptr;
        };
        for (const auto& in : t.instants) w.steals += in.name == steal_id;

        // The worker's traced interval: its first to its last event. Slices open when the
        // recording stopped run to the end (see the header), and so does the interval then.
        std::uint64_t first = ~0ull, last_event = 0;
        for (const tm::slice& s : t.slices) {
            first = std::min(first, s.begin);
            last_event = std::max(last_event, s.end);
        }
        if (!t.instants.empty()) {
            first = std::min(first, t.instants.front().ts);
            last_event = std::max(last_event, t.instants.back().ts);
        }
        auto open_at_end = [&](const tm::slice& s) {
            const slice_kind k = s.kind;
            return s.unterminated || ((k == slice_kind::idle || k == slice_kind::parked) && s.end >= last_event);
        };
        std::uint64_t last = last_event;
        for (auto it = t.slices.rbegin(); it != t.slices.rend() && last < end; ++it)
            if (open_at_end(*it)) last = end;
        first = std::clamp(first, start, end);
        last = std::clamp(last, first, end);

        std::uint64_t top_begin = start;   // begin of the latest outermost slice
        auto emit_gap = [&](std::uint64_t a, std::uint64_t b) {
            if (b <= a) return;
            if (a < first) {   // before the first event
                const std::uint64_t u = std::min(b, first);
                ts[time_category::untraced] += u - a;
                a = u;
            }
            if (b > last) {   // after the last event
                const std::uint64_t u = std::max(a, last);
                ts[time_category::untraced] += b - u;
                b = u;
            }
            if (b <= a) return;
            for (const tm::instant* s = next_steal(); s && s->ts <= b; s = next_steal()) {
                last_steal = s->ts;
                have_steal = true;
                ++si;
            }
            if (have_steal && last_steal >= top_begin) {
                const std::uint64_t s = std::clamp(last_steal, a, b);
                ts[time_category::scheduler] += s - a;
                ts[time_category::stealing] += b - s;
                have_steal = false;   // one steal explains one gap
            } else {
                ts[time_category::scheduler] += b - a;
            }
        };
        auto emit_slice = [&](std::uint64_t a, std::uint64_t b, slice_kind k) {
            if (b <= a) return;
            switch (k) {
                case slice_kind::idle: {
                    const std::uint64_t st = overlap(waiting, a, b);
                    ts[time_category::stall] += st;
                    ts[time_category::idle] += (b - a) - st;
                    break;
                }
                case slice_kind::parked: ts[time_category::parked] += b - a; break;
                case slice_kind::blocked: ts[time_category::stall] += b - a; break;
                case slice_kind::waiting: ts[time_category::idle] += b - a; break;   // bind-to-stage: input queue empty
                case slice_kind::queue: ts[time_category::queue] += b - a; break;
                default: ts[time_category::work] += b - a; break;
            }
        };

        stack.clear();
        std::uint64_t cursor = start;
        for (const tm::slice& s : t.slices) {
            std::uint64_t b = std::clamp(s.begin, start, end), e = open_at_end(s) ? end : std::clamp(s.end, b, end);
            const slice_kind k = s.kind;
            if (k == slice_kind::node) {
                const node_extent x = m.node_of(s);
                w.nodes += x.nodes;
                w.folded_runs += x.folded();
            }
            if (k == slice_kind::idle && failed_id != tm::no_index)
                for (auto* a = m.args_begin(s); a != m.args_end(s); ++a)
                    if (a->name == failed_id) w.failed_steals += a->bits();
            while (!stack.empty() && stack.back().end <= b) {
                emit_slice(cursor, stack.back().end, stack.back().kind);
                cursor = std::max(cursor, stack.back().end);
                stack.pop_back();
            }
            if (stack.empty()) {
                emit_gap(cursor, b);
                top_begin = b;
            } else {
                emit_slice(cursor, b, stack.back().kind);
                e = std::min(e, stack.back().end);
            }
            cursor = std::max(cursor, b);
            stack.push_back({e, k});
        }
        while (!stack.empty()) {
            emit_slice(cursor, stack.back().end, stack.back().kind);
            cursor = std::max(cursor, stack.back().end);
            stack.pop_back();
        }
        emit_gap(cursor, end);

        for (int c = 0; c < time_category_count; ++c) out.total.time.ns[c] += ts.ns[c];
        out.total.time.span += ts.span;
        out.total.nodes += w.nodes;
        out.total.folded_runs += w.folded_runs;
        out.total.steals += w.steals;
        out.total.failed_steals += w.failed_steals;
        out.workers.push_back(std::move(w));
    }
    // CPU and descheduled time per worker, from the run summary: the total only when every worker has them.
    if (const tm::run* ri = r.run_info(); ri && !ri->worker_times.empty()) {
        bool all = !out.workers.empty();
        std::uint64_t cpu = 0, off = 0;
        for (std::size_t i = 0; i < out.workers.size(); ++i) {
            const tm::track& t = m.tracks[r.workers[i]];
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
    return out;
}

}   // namespace pipescope::analysis
