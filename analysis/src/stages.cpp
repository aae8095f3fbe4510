// Per-stage and per-run counts (stages.hpp).
#include <pipescope/analysis/stages.hpp>

#include "stage_runs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <cstdlib>
#include <set>
#include <tuple>

namespace pipescope::analysis {

using vocab::arg_key;

service_stats summarize(std::vector<std::uint64_t> d) {
    service_stats s;
    s.count = d.size();
    if (d.empty()) return s;
    std::sort(d.begin(), d.end());
    for (auto v : d) s.total += v;
    s.mean = static_cast<double>(s.total) / static_cast<double>(d.size());
    auto rank = [&](double q) {
        auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(d.size())));
        return d[std::clamp<std::size_t>(k, 1, d.size()) - 1];
    };
    s.p50 = rank(0.50);
    s.p95 = rank(0.95);
    s.max = d.back();
    return s;
}

namespace {

// A number after `key` in `name` ("… of 8", "… / 8", "… capacity 8"), if any.
std::optional<double> number_after(const std::string& name, std::string_view key) {
    const auto p = name.rfind(key);
    if (p == std::string::npos) return std::nullopt;
    std::size_t b = p + key.size();
    while (b < name.size() && name[b] == ' ') ++b;
    double v = 0;
    const auto r = std::from_chars(name.data() + b, name.data() + name.size(), v);
    if (r.ec != std::errc{} || r.ptr == name.data() + b || v <= 0) return std::nullopt;
    return v;
}

// The names of the instants and annotations compute_stats looks for, looked up once per run
// (tm::no_index when the trace has none: a name the trace never interned cannot match).
struct stats_names {
    tm::string_id victim, failed, steal, suspend, resume, woken, throttled, lost, detail_folded, detail_nodes;
    explicit stats_names(const tm::trace_model& m)
        : victim(find_string(m, vocab::key(arg_key::victim))),
          failed(find_string(m, vocab::key(arg_key::failed_steals))),
          steal(find_string(m, vocab::steal)),
          suspend(find_string(m, vocab::suspend)),
          resume(find_string(m, vocab::resume)),
          woken(find_string(m, vocab::woken)),
          throttled(find_string(m, vocab::throttled)),
          lost(find_string(m, vocab::events_lost)),
          detail_folded(find_string(m, vocab::detail_folded)),
          detail_nodes(find_string(m, vocab::detail_nodes)) {}
};

using count_and_total = std::pair<std::uint64_t, std::uint64_t>;

// The walk over one run's worker tracks and lines. Most counts go straight into run_stats; what
// the stages need (their executions, which nodes waited, suspensions and waiting states per stage)
// is kept here, as the stages can only be built once every track has been seen.
class stats_walk {
public:
    stats_walk(const run_scope& r, run_stats& out) : r_(r), m_(*r.model), names_(m_), out_(out) {}

    // A worker's slices (nodes, failed steals) and instants (steals, suspensions, ...).
    void worker(std::size_t wi) {
        const std::uint32_t ti = r_.workers[wi];
        const tm::track& t = m_.tracks[ti];
        worker_steals ws;
        ws.worker = t.worker >= 0 ? t.worker : static_cast<int>(wi);
        for (const tm::slice& s : t.slices) {
            if (s.kind == slice_kind::idle && names_.failed != tm::no_index) ws.failed += failed_steals(s);
            if (s.kind == slice_kind::node) node(s, ws.worker, ti);
        }
        for (const tm::instant& in : t.instants) instant(in, ws, ti);
        out_.steals_made += ws.made;
        out_.steals_failed += ws.failed;
        out_.steals.push_back(ws);
    }

    // The lines' waiting states: per stage, at retirement, throttled.
    void line(std::uint32_t ti) {
        for (const tm::slice& s : m_.tracks[ti].slices) {
            if (s.kind == slice_kind::waiting) {
                const long j = m_.stage_of(s.name);
                if (j >= 0) {
                    auto& w = waits[static_cast<std::uint64_t>(j)];
                    ++w.first;
                    w.second += s.duration();
                } else {
                    ++out_.retire_waits;
                    out_.retire_wait_ns += s.duration();
                }
            } else if (s.kind == slice_kind::throttled) {
                out_.throttled_ns += s.duration();
                if (!control_throttles_) out_.throttle_waits = 0;   // count the control's states, not instants
                control_throttles_ = true;
                ++out_.throttle_waits;
            }
        }
    }

    // Once every worker is walked: the order the report lists them in, and the iteration count.
    void finish_workers() {
        std::sort(out_.steal_pairs.begin(), out_.steal_pairs.end(), [](const steal_pair& a, const steal_pair& b) {
            return std::tie(a.thief, a.victim) < std::tie(b.thief, b.victim);
        });
        std::sort(out_.detail_decisions.begin(), out_.detail_decisions.end(),
                  [](const detail_decision& a, const detail_decision& b) { return a.where.begin < b.where.begin; });
        out_.iterations = iterations_.size();
        if (const tm::run* ri = r_.run_info(); ri && ri->dag.iterations) out_.iterations = ri->dag.iterations;
    }

    detail::stage_runs by_stage;
    std::map<std::uint64_t, count_and_total> waited;      // stage -> (waited nodes, nodes)
    std::map<std::uint64_t, std::uint64_t> suspends_at;   // stage -> `suspend` instants
    std::map<std::uint64_t, count_and_total> waits;       // stage -> (waiting states, ns)

private:
    std::uint64_t failed_steals(const tm::slice& s) const {
        std::uint64_t n = 0;
        for (auto* a = m_.args_begin(s); a != m_.args_end(s); ++a)
            if (a->name == names_.failed) n += a->bits();
        return n;
    }

    void node(const tm::slice& s, int worker, std::uint32_t ti) {
        const node_extent x = m_.node_of(s);
        if (x.stage < 0) return;
        const auto first = static_cast<std::uint64_t>(x.stage);
        // One execution per node it holds, each with an equal share of the slice's duration.
        const detail::run_place at{s.begin, s.end, worker, x.iteration, ti};
        const double share = static_cast<double>(s.duration()) / static_cast<double>(x.nodes);
        if (!x.folded()) by_stage.add(first, static_cast<double>(s.duration()), 1, false, at);
        else if (x.last_stage - first + 1 == x.nodes)
            by_stage.add_range(first, x.last_stage, share, at);   // a pipeline block
        else
            for (std::uint64_t j = first; j <= x.last_stage; ++j) by_stage.add(j, share, x.nodes_of_stage(j), true, at);
        // Only a slice's first node says whether it waited (folded: the others are unknown).
        auto& wv = waited[first];
        ++wv.second;
        if (x.waited) ++wv.first;
        if (x.iteration >= 0) iterations_.insert(x.iteration);
        out_.nodes += x.nodes;
        if (x.folded()) {
            ++out_.folded_runs, out_.folded_nodes += x.nodes;
            out_.folded_ns += static_cast<double>(s.duration());
            if (x.last_stage > first)   // several stages share it (a graph's run holds one stage)
                out_.folded_misplaceable_ns += share * static_cast<double>(x.nodes - 1);
        }
    }

    // A name the trace never interned is tm::no_index: the checks keep it from matching anything.
    void instant(const tm::instant& in, worker_steals& ws, std::uint32_t ti) {
        const int worker = ws.worker;
        if (in.name == names_.steal && names_.steal != tm::no_index) {
            ++ws.made;
            steal(in, worker);
        } else if (in.name == names_.suspend && names_.suspend != tm::no_index) {
            ++out_.suspensions;
            if (auto j = m_.uint_arg(in, arg_key::stage)) ++suspends_at[*j];
        } else if (in.name == names_.resume && names_.resume != tm::no_index) {
            ++out_.resumptions;
        } else if (in.name == names_.woken && names_.woken != tm::no_index) {
            ++out_.wakeups;
        } else if (in.name == names_.throttled && names_.throttled != tm::no_index) {
            ++out_.throttle_waits;
        } else if (in.name == names_.detail_folded || in.name == names_.detail_nodes) {   // valid when they match
            detail_decision dd;
            dd.folded = in.name == names_.detail_folded;
            dd.mean_node_ns = static_cast<double>(m_.uint_arg(in, arg_key::value).value_or(0));
            dd.nodes_measured = m_.uint_arg(in, arg_key::nodes).value_or(0);
            if (auto j = m_.uint_arg(in, arg_key::stage)) dd.stage = static_cast<long>(*j);
            dd.where = {in.ts, in.ts, worker, dd.stage, -1, ti};
            out_.detail_decisions.push_back(dd);
        } else if (in.name == names_.lost && names_.lost != tm::no_index) {
            const std::uint64_t n = m_.uint_arg(in, arg_key::dropped).value_or(1);
            if (out_.events_lost == 0 || in.ts < out_.first_loss.begin) out_.first_loss = {in.ts, in.ts, worker, -1, -1, ti};
            out_.events_lost += n;
        }
    }

    // A steal made by `thief`, into its thief -> victim pair.
    void steal(const tm::instant& in, int thief) {
        int victim = -1;
        if (names_.victim != tm::no_index)
            if (auto v = m_.uint_arg(in, arg_key::victim)) victim = static_cast<int>(*v);
        auto p = std::find_if(out_.steal_pairs.begin(), out_.steal_pairs.end(),
                              [&](const steal_pair& x) { return x.thief == thief && x.victim == victim; });
        if (p == out_.steal_pairs.end()) out_.steal_pairs.push_back({thief, victim, 1});
        else ++p->made;
    }

    const run_scope& r_;
    const tm::trace_model& m_;
    const stats_names names_;
    run_stats& out_;
    std::set<long long> iterations_;   // distinct iterations with nodes
    bool control_throttles_ = false;   // the lines have throttled states: they, not instants, count
};

// Whether stage j is serial, and where that comes from. The kind the run's summary recorded wins
// (how the iterations entered the stage); else the declared one; an on-the-fly stage of an older
// trace (or none named) is inferred.
void classify_stage(stage_stats& st, const tm::run* ri, const count_and_total& waited) {
    const std::uint64_t j = st.index;
    if (std::string used = ri ? tm::recorded_stage_kind(*ri, j) : std::string(); !used.empty()) {
        st.kind = std::move(used);
        st.kind_source = "recorded";
    } else if (!st.kind.empty() && st.kind != on_the_fly_kind) {
        st.kind_source = "declared";
    } else {
        st.kind.clear();
        st.kind_source = "inferred";
    }
    if (st.kind_source != "inferred") {
        st.serial = is_serial_kind(st.kind);
    } else if (const std::string seen = ri ? tm::inferred_stage_kind(*ri, j) : std::string(); !seen.empty()) {
        st.serial = seen == "serial";
    } else {   // seed 001 §1: serial if every node but the first has a cross edge
        st.serial = j == 0 || (waited.second > 1 && waited.first + 1 >= waited.second);
    }
}

// The stages: those with nodes, and those the metadata declares.
void build_stages(const run_scope& r, const run_meta& meta, stats_walk& walk, run_stats& out) {
    const std::vector<detail::stage_runs::result> runs = walk.by_stage.summarize();
    std::set<std::uint64_t> indices;
    for (const auto& x : runs) indices.insert(x.stage);
    for (const auto& s : meta.stages)
        if (!s.all_from) indices.insert(s.index);
    const double makespan = static_cast<double>(r.makespan());
    for (auto j : indices) {
        stage_stats st;
        st.index = j;
        if (const stage_meta* sm = find_stage(meta, j)) st.name = sm->name, st.kind = sm->kind;
        const auto x =
            std::lower_bound(runs.begin(), runs.end(), j, [](const auto& a, std::uint64_t b) { return a.stage < b; });
        if (x != runs.end() && x->stage == j) {
            st.service = x->service;
            st.shares = x->shares;
            st.longest = {x->longest.begin,     x->longest.end,       x->longest.worker,
                          static_cast<long>(j), x->longest.iteration, x->longest.track};
        }
        st.busy_fraction = makespan > 0 ? static_cast<double>(st.service.total) / makespan : 0.0;
        classify_stage(st, r.run_info(), walk.waited[j]);
        st.suspensions = walk.suspends_at[j];
        st.waits = walk.waits[j].first;
        st.wait_ns = walk.waits[j].second;
        out.stages.push_back(std::move(st));
    }
}

// A counter track's peak (the first among equals).
counter_stats counter_peak(const tm::track& t, std::uint32_t ti) {
    counter_stats c;
    c.name = t.name;
    c.track = ti;
    c.peak = t.counters.front().value;
    c.peak_ts = t.counters.front().ts;
    for (const auto& v : t.counters)
        if (v.value > c.peak) c.peak = v.value, c.peak_ts = v.ts;
    return c;
}

// A limit the name gives ("… of 8", "… / 8", "… capacity 8"), else, for a queue's fill, the
// queue's capacity: "queue j fill" is the stage's queue, else the program's.
void find_capacity(counter_stats& c, const tm::track& t, const run_meta& meta) {
    const std::string& n = t.name;
    for (std::string_view key : {"capacity", " of ", "/"})
        if (auto v = number_after(n, key)) {
            c.capacity = v, c.capacity_from = "name";
            return;
        }
    if (n.find(vocab::queue_word) == std::string::npos) return;
    const long j = vocab::starts_with(n, vocab::queue_prefix)
                       ? std::strtol(n.c_str() + vocab::queue_prefix.size(), nullptr, 10)
                       : t.stage;
    if (const stage_meta* sm = j >= 0 ? find_stage(meta, static_cast<std::uint64_t>(j)) : nullptr; sm && sm->queue_capacity)
        c.capacity = sm->queue_capacity, c.capacity_from = "program.stages[].queue_capacity";
    if (!c.capacity && meta.queue_capacity) c.capacity = meta.queue_capacity, c.capacity_from = "queue capacity";
}

// Every counter's peak against its limit; the run's live iterations, tokens and footprint peaks.
void count_counters(const run_scope& r, const run_meta& meta, run_stats& out) {
    if (meta.K) out.K = static_cast<double>(meta.K);
    // The "footprint bytes" counter's peak; other footprint counters' only for a trace without it.
    std::optional<double> footprint_bytes, other_footprint;
    for (auto ti : r.counters) {
        const tm::track& t = r.model->tracks[ti];
        if (t.counters.empty()) continue;
        counter_stats c = counter_peak(t, ti);
        const std::string& n = t.name;
        if (n == vocab::live_iterations) {
            if (meta.K) c.capacity = static_cast<double>(meta.K), c.capacity_from = "program.K";
            out.peak_live = std::max(out.peak_live.value_or(c.peak), c.peak);
        } else if (n == vocab::tokens_in_flight) {
            if (meta.K) c.capacity = static_cast<double>(meta.K), c.capacity_from = "program.K";
            out.peak_tokens = std::max(out.peak_tokens.value_or(c.peak), c.peak);
        } else if (n == vocab::footprint_bytes) {
            footprint_bytes = c.peak;
        } else if (n.find(vocab::footprint) != std::string::npos) {
            other_footprint = std::max(other_footprint.value_or(c.peak), c.peak);
        }
        if (!c.capacity) find_capacity(c, t, meta);
        out.counters.push_back(std::move(c));
    }
    out.peak_footprint = footprint_bytes ? footprint_bytes : other_footprint;
    if (out.peak_tokens && meta.K) out.N = static_cast<double>(meta.K);
}

}   // namespace

run_stats compute_stats(const run_scope& r, const run_meta& meta) {
    run_stats out;
    stats_walk walk(r, out);
    for (std::size_t wi = 0; wi < r.workers.size(); ++wi) walk.worker(wi);
    walk.finish_workers();
    for (auto ti : r.lines) walk.line(ti);
    build_stages(r, meta, walk, out);
    count_counters(r, meta, out);
    return out;
}

}   // namespace pipescope::analysis
