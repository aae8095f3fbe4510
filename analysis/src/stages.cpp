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

}   // namespace

run_stats compute_stats(const run_scope& r, const run_meta& meta) {
    const tm::trace_model& m = *r.model;
    run_stats out;
    const tm::string_id victim_id = find_string(m, vocab::key(arg_key::victim)),
                        failed_id = find_string(m, vocab::key(arg_key::failed_steals)),
                        steal_id = find_string(m, vocab::steal), suspend_id = find_string(m, vocab::suspend),
                        resume_id = find_string(m, vocab::resume), woken_id = find_string(m, vocab::woken),
                        throttled_id = find_string(m, vocab::throttled), lost_id = find_string(m, vocab::events_lost),
                        detail_folded_id = find_string(m, vocab::detail_folded),
                        detail_nodes_id = find_string(m, vocab::detail_nodes);

    // Nodes by stage.
    detail::stage_runs by_stage;
    std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> waited;   // stage -> (waited nodes, nodes)
    std::set<long long> iterations;
    std::map<std::uint64_t, std::uint64_t> suspends_at;
    for (std::size_t wi = 0; wi < r.workers.size(); ++wi) {
        const std::uint32_t ti = r.workers[wi];
        const tm::track& t = m.tracks[ti];
        const int worker = t.worker >= 0 ? t.worker : static_cast<int>(wi);
        worker_steals ws;
        ws.worker = worker;
        for (const tm::slice& s : t.slices) {
            const slice_kind k = s.kind;
            if (k == slice_kind::idle && failed_id != tm::no_index)
                for (auto* a = m.args_begin(s); a != m.args_end(s); ++a)
                    if (a->name == failed_id) ws.failed += a->bits();
            if (k != slice_kind::node) continue;
            const node_extent x = m.node_of(s);
            if (x.stage < 0) continue;
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
            if (x.iteration >= 0) iterations.insert(x.iteration);
            out.nodes += x.nodes;
            if (x.folded()) {
                ++out.folded_runs, out.folded_nodes += x.nodes;
                out.folded_ns += static_cast<double>(s.duration());
                if (x.last_stage > first)   // several stages share it (a graph's run holds one stage)
                    out.folded_misplaceable_ns += share * static_cast<double>(x.nodes - 1);
            }
        }
        for (const tm::instant& in : t.instants) {
            if (in.name == steal_id && steal_id != tm::no_index) {
                ++ws.made;
                int victim = -1;
                if (victim_id != tm::no_index)
                    if (auto v = m.uint_arg(in, arg_key::victim)) victim = static_cast<int>(*v);
                auto p = std::find_if(out.steal_pairs.begin(), out.steal_pairs.end(),
                                      [&](const steal_pair& x) { return x.thief == worker && x.victim == victim; });
                if (p == out.steal_pairs.end()) out.steal_pairs.push_back({worker, victim, 1});
                else ++p->made;
            } else if (in.name == suspend_id && suspend_id != tm::no_index) {
                ++out.suspensions;
                if (auto j = m.uint_arg(in, arg_key::stage)) ++suspends_at[*j];
            } else if (in.name == resume_id && resume_id != tm::no_index) {
                ++out.resumptions;
            } else if (in.name == woken_id && woken_id != tm::no_index) {
                ++out.wakeups;
            } else if (in.name == throttled_id && throttled_id != tm::no_index) {
                ++out.throttle_waits;
            } else if (in.name == detail_folded_id || in.name == detail_nodes_id) {   // ids are valid when they match
                detail_decision dd;
                dd.folded = in.name == detail_folded_id;
                dd.mean_node_ns = static_cast<double>(m.uint_arg(in, arg_key::value).value_or(0));
                dd.nodes_measured = m.uint_arg(in, arg_key::nodes).value_or(0);
                if (auto j = m.uint_arg(in, arg_key::stage)) dd.stage = static_cast<long>(*j);
                dd.where = {in.ts, in.ts, worker, dd.stage, -1, ti};
                out.detail_decisions.push_back(dd);
            } else if (in.name == lost_id && lost_id != tm::no_index) {
                const std::uint64_t n = m.uint_arg(in, arg_key::dropped).value_or(1);
                if (out.events_lost == 0 || in.ts < out.first_loss.begin)
                    out.first_loss = {in.ts, in.ts, worker, -1, -1, ti};
                out.events_lost += n;
            }
        }
        out.steals_made += ws.made;
        out.steals_failed += ws.failed;
        out.steals.push_back(ws);
    }
    std::sort(out.steal_pairs.begin(), out.steal_pairs.end(), [](const steal_pair& a, const steal_pair& b) {
        return std::tie(a.thief, a.victim) < std::tie(b.thief, b.victim);
    });
    std::sort(out.detail_decisions.begin(), out.detail_decisions.end(),
              [](const detail_decision& a, const detail_decision& b) { return a.where.begin < b.where.begin; });
    out.iterations = iterations.size();
    if (const tm::run* ri = r.run_info(); ri && ri->dag.iterations) out.iterations = ri->dag.iterations;

    // Waiting states on the lines.
    std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> waits;   // stage -> (count, ns)
    bool control_throttles = false;
    for (auto ti : r.lines) {
        for (const tm::slice& s : m.tracks[ti].slices) {
            const slice_kind k = s.kind;
            if (k == slice_kind::waiting) {
                const long j = m.stage_of(s.name);
                if (j >= 0) {
                    auto& w = waits[static_cast<std::uint64_t>(j)];
                    ++w.first;
                    w.second += s.duration();
                } else {
                    ++out.retire_waits;
                    out.retire_wait_ns += s.duration();
                }
            } else if (k == slice_kind::throttled) {
                out.throttled_ns += s.duration();
                if (!control_throttles) out.throttle_waits = 0;   // count the control's states, not instants
                control_throttles = true;
                ++out.throttle_waits;
            }
        }
    }

    // Stages: those with nodes, and those the metadata declares.
    const std::vector<detail::stage_runs::result> runs = by_stage.summarize();
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
        // The kind the run's summary recorded wins (how the iterations entered the stage); else the
        // declared one; an on-the-fly stage of an older trace (or none named) is inferred.
        const tm::run* ri = r.run_info();
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
        } else {
            const auto& wv = waited[j];   // seed 001 §1: serial if every node but the first has a cross edge
            st.serial = j == 0 || (wv.second > 1 && wv.first + 1 >= wv.second);
        }
        st.suspensions = suspends_at[j];
        st.waits = waits[j].first;
        st.wait_ns = waits[j].second;
        out.stages.push_back(std::move(st));
    }

    // Counters.
    if (meta.K) out.K = static_cast<double>(meta.K);
    // The "footprint bytes" counter's peak; other footprint counters' only for a trace without it.
    std::optional<double> footprint_bytes, other_footprint;
    for (auto ti : r.counters) {
        const tm::track& t = m.tracks[ti];
        if (t.counters.empty()) continue;
        counter_stats c;
        c.name = t.name;
        c.track = ti;
        c.peak = t.counters.front().value;
        c.peak_ts = t.counters.front().ts;
        for (const auto& v : t.counters)
            if (v.value > c.peak) c.peak = v.value, c.peak_ts = v.ts;
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
        if (!c.capacity) {   // a limit written in the name: "… of 8", "… / 8", "… capacity 8"
            for (std::string_view key : {"capacity", " of ", "/"})
                if (auto v = number_after(n, key)) {
                    c.capacity = v, c.capacity_from = "name";
                    break;
                }
        }
        if (!c.capacity && n.find(vocab::queue_word) != std::string::npos) {
            // "queue j fill": the stage's queue capacity, else the program's.
            const long j = vocab::starts_with(n, vocab::queue_prefix)
                               ? std::strtol(n.c_str() + vocab::queue_prefix.size(), nullptr, 10)
                               : t.stage;
            if (const stage_meta* sm = j >= 0 ? find_stage(meta, static_cast<std::uint64_t>(j)) : nullptr;
                sm && sm->queue_capacity)
                c.capacity = sm->queue_capacity, c.capacity_from = "program.stages[].queue_capacity";
            if (!c.capacity && meta.queue_capacity) c.capacity = meta.queue_capacity, c.capacity_from = "queue capacity";
        }
        out.counters.push_back(std::move(c));
    }
    out.peak_footprint = footprint_bytes ? footprint_bytes : other_footprint;
    if (out.peak_tokens && meta.K) out.N = static_cast<double>(meta.K);
    return out;
}

}   // namespace pipescope::analysis
