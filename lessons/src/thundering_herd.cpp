// Lesson "thundering-herd": DANBI's queue-event scheduling (QES) against QES plus probabilistic
// speculative scheduling (PSS) on a stage graph with deep queues (seed 002 §III-A2–A3, Figs. 4–5).
//
// The paper: under QES a worker keeps running a parallel kernel until one of its queues is empty or
// full, so QES "tends to maximize the degree of data parallelism as far as the sizes of input/output
// queues are available" (§III-A3); with 40 threads many make the same decision at once and crowd the
// kernel with the most input — the thundering herd, contending on its queues and stalling on ticket
// order (Fig. 5c; RG spends 51 % in queue operations and 13.3 % stalled, Fig. 4). PSS leaves a kernel
// "before the corresponding queue becomes completely empty or full", spreading the threads over the
// pipeline (Fig. 5d; 14 % and 0.03 %).
//
// What a 2-core machine can show, from the traces: the mechanism — how long a worker stays on a
// kernel, and how much of the time queues sit completely full — but not the herd itself, which
// needs more threads than the graph has kernels with work. The herd is still measured (workers on
// the same kernel at the same moment) and reported honestly. Two more runs put QES and QES+PSS on 40
// virtual workers (docs/virtual.md), the paper's thread count, where it does show: QES runs fewer
// kernels at once with more workers on each.
#include <pipescope/lessons/lesson.hpp>

#include <pipescope/analysis/scope.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pipescope::lessons {

namespace {

namespace an = pipescope::analysis;
namespace ptm = pipescope::trace;

// fm-radio: 47 kernels (StreamIt's FMRadio as DANBI ports it, seed 002 Table II, its source split into a
// serial sampler and a parallel antenna), peeking filters
// on ordered queues. 64 packets per queue: DANBI sizes a queue for every thread to work on it at
// once (§IV-A: max(P·T, C·T)); deep queues leave QES room to keep a worker on one kernel.
constexpr const char* workload = "fm-radio";
constexpr const char* queue_capacity = "capacity=64";
// The paper's 40 threads, on virtual workers (docs/virtual.md). 40 workers drain 64-packet queues
// within a few instances each; 256 packets give QES's visits room again (§IV-A: DANBI sizes a queue
// for all its threads).
constexpr unsigned herd_workers = 40;
constexpr const char* herd_capacity = "capacity=256";
// When the virtual runs count as Fig. 5c against 5d: QES has this many times the workers per running
// kernel, and PSS this many times the kernels running at once (measured 1.16-1.29 and 1.11-1.70).
constexpr double crowd_holds = 1.1, kernels_holds = 1.05;

// What one run shows, all counted from its trace.
struct herd_measures {
    std::uint64_t parallel_steps = 0;   // node slices of parallel kernels
    std::uint64_t visits = 0;           // maximal runs of one parallel kernel on one worker
    double steps_per_visit = 0;
    double overlap_share = 0;                 // share of the run with two or more nodes running at once
    double same_kernel_share = 0;             // of that time, the share with two or more on one kernel
    double kernels_at_once = 0;               // of that time, the mean number of kernels running
    double workers_per_kernel = 0;            // ... and of nodes running per running kernel
    double full_share = 0, empty_share = 0;   // of bounded queues' time: completely full / empty
    double outside_bodies = 0;                // breakdown: worker time not in stage bodies (queue ops, decisions, waiting)
    std::uint64_t commits = 0, held_commits = 0;   // "commit push" instants; published = 0 (behind a ticket)
    std::uint64_t blocked_full = 0, blocked_empty = 0, blocked_order = 0;
    std::uint64_t failed_reserves = 0;   // serial stages' "reserve push/pop" with granted = 0
};

bool is_parallel(const an::run_meta& meta, long stage) {
    const an::stage_meta* s = stage >= 0 ? an::find_stage(meta, static_cast<std::uint64_t>(stage)) : nullptr;
    return s && s->kind == "parallel";
}

// Visits: on each worker, consecutive node slices of the same parallel kernel are one visit. Under
// QES a visit ends only at a queue event; PSS may end it after any instance.
void count_visits(const ptm::trace_model& m, const an::run_scope& scope, const an::run_meta& meta, herd_measures& out) {
    for (std::uint32_t w : scope.workers) {
        long previous = -1;
        for (const ptm::slice& s : m.tracks[w].slices) {
            if (s.kind != an::slice_kind::node) continue;
            const long stage = m.stage_of(s.name);
            if (is_parallel(meta, stage)) {
                ++out.parallel_steps;
                if (stage != previous) ++out.visits;
            }
            previous = stage;
        }
    }
    out.steps_per_visit = out.visits ? static_cast<double>(out.parallel_steps) / static_cast<double>(out.visits) : 0;
}

// The herd itself (Fig. 5): sweep the node slices of all workers in time; while two or more run,
// is some kernel run by two of them?
void sweep_concurrency(const ptm::trace_model& m, const an::run_scope& scope, herd_measures& out) {
    struct edge {
        std::uint64_t ts;
        int delta;
        long stage;
    };
    std::vector<edge> edges;
    for (std::uint32_t w : scope.workers)
        for (const ptm::slice& s : m.tracks[w].slices)
            if (s.kind == an::slice_kind::node) {
                const long stage = m.stage_of(s.name);
                edges.push_back({s.begin, +1, stage});
                edges.push_back({s.end, -1, stage});
            }
    std::sort(edges.begin(), edges.end(),
              [](const edge& a, const edge& b) { return a.ts < b.ts || (a.ts == b.ts && a.delta < b.delta); });
    std::map<long, int> running;             // kernel -> nodes running now
    int busy = 0, crowded = 0, active = 0;   // nodes running; kernels with two or more; kernels with one or more
    std::uint64_t previous = scope.start;
    double overlap = 0, same = 0, kernels = 0, nodes = 0;   // time, and time-weighted counts, while two or more run
    for (const edge& e : edges) {
        const double dt = e.ts > previous ? static_cast<double>(e.ts - previous) : 0;
        if (busy >= 2) {
            overlap += dt;
            if (crowded > 0) same += dt;
            kernels += dt * active;
            nodes += dt * busy;
        }
        previous = std::max(previous, e.ts);
        int& n = running[e.stage];
        if (e.delta > 0 && ++n == 2) ++crowded;
        if (e.delta > 0 && n == 1) ++active;
        if (e.delta < 0 && n-- == 2) --crowded;
        if (e.delta < 0 && n == 0) --active;
        busy += e.delta;
    }
    const double span = static_cast<double>(scope.makespan());
    out.overlap_share = span > 0 ? overlap / span : 0;
    out.same_kernel_share = overlap > 0 ? same / overlap : 0;
    out.kernels_at_once = overlap > 0 ? kernels / overlap : 0;
    out.workers_per_kernel = kernels > 0 ? nodes / kernels : 0;
}

// Time each bounded queue spent completely full or completely empty (its packets-in-use counter),
// over all bounded queues' time.
void queue_extremes(const ptm::trace_model& m, const an::run_scope& scope, const an::run_meta& meta, herd_measures& out) {
    double total = 0, full = 0, empty = 0;
    for (const an::queue_meta& q : meta.queues) {
        if (q.unbounded || q.capacity_packets <= 0) continue;
        const std::string name = q.counter.empty() ? an::vocab::queue_packets(q.name) : q.counter;
        for (std::uint32_t t : scope.counters) {
            if (m.tracks[t].name != name) continue;
            const std::vector<ptm::counter_sample>& c = m.tracks[t].counters;
            for (std::size_t i = 0; i < c.size(); ++i) {
                const std::uint64_t from = std::max(c[i].ts, scope.start);
                const std::uint64_t to = i + 1 < c.size() ? std::min(c[i + 1].ts, scope.end) : scope.end;
                if (to <= from) continue;
                const double dt = static_cast<double>(to - from);
                total += dt;
                if (c[i].value >= q.capacity_packets) full += dt;
                else if (c[i].value <= 0) empty += dt;
            }
        }
    }
    out.full_share = total > 0 ? full / total : 0;
    out.empty_share = total > 0 ? empty / total : 0;
}

void queue_operations(const ptm::trace_model& m, const an::run_scope& scope, herd_measures& out) {
    const ptm::string_id reserve_push = an::find_string(m, an::vocab::reserve_push),
                         reserve_pop = an::find_string(m, an::vocab::reserve_pop),
                         commit_push = an::find_string(m, an::vocab::commit_push);
    for (std::uint32_t w : scope.workers)
        for (const ptm::instant& i : m.tracks[w].instants) {
            if (i.name == reserve_push || i.name == reserve_pop) {
                if (const auto granted = m.uint_arg(i, an::vocab::arg_key::granted); granted && *granted == 0)
                    ++out.failed_reserves;
            } else if (i.name == commit_push) {
                ++out.commits;
                if (const auto published = m.uint_arg(i, an::vocab::arg_key::published); published && *published == 0)
                    ++out.held_commits;
            }
        }
}

herd_measures measure(const recorded& r) {
    herd_measures out;
    const ptm::trace_model& m = *r.model;
    const an::run_scope scope = an::scope_of(m, r.report.run);
    count_visits(m, scope, r.report.meta, out);
    sweep_concurrency(m, scope, out);
    queue_extremes(m, scope, r.report.meta, out);
    queue_operations(m, scope, out);
    const an::time_split& t = r.report.breakdown.total.time;
    using an::time_category;
    out.outside_bodies = t.fraction(time_category::queue) + t.fraction(time_category::scheduler) +
                         t.fraction(time_category::stealing) + t.fraction(time_category::idle) +
                         t.fraction(time_category::stall) + t.fraction(time_category::parked);
    out.blocked_full = r.report.graph.blocked_full;
    out.blocked_empty = r.report.graph.blocked_empty;
    out.blocked_order = r.report.graph.blocked_order;
    return out;
}

double ratio_of(double a, double b) { return b > 0 ? a / b : (a > 0 ? 1e9 : 1); }

// "1 worker", "2 workers".
std::string count(unsigned n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// "1.2%" for small shares, where percent() would print 0% or 1%.
std::string share(double fraction) { return percent(fraction, fraction < 0.1 ? 1 : 0); }

// A 2 ms window of run r where every worker ran the most nodes (so the zoomed timeline shows work,
// not a worker the OS had descheduled), as fractions of the aligned axis of length `longest`.
std::pair<double, double> busy_window(const recorded& r, double longest) {
    constexpr std::uint64_t width = 2'000'000, stride = 500'000;   // ns
    const ptm::trace_model& m = *r.model;
    const an::run_scope scope = an::scope_of(m, r.report.run);
    std::vector<std::vector<std::uint64_t>> starts;   // per worker, node starts since the run's start
    for (std::uint32_t w : scope.workers) {
        starts.emplace_back();
        for (const ptm::slice& s : m.tracks[w].slices)
            if (s.kind == an::slice_kind::node && s.begin >= scope.start) starts.back().push_back(s.begin - scope.start);
    }
    std::uint64_t best_at = 0;
    std::size_t best = 0;
    for (std::uint64_t at = 0; at + width <= scope.makespan(); at += stride) {
        std::size_t fewest = SIZE_MAX;
        for (const auto& w : starts)   // slices are sorted by begin
            fewest =
                std::min<std::size_t>(fewest, static_cast<std::size_t>(std::lower_bound(w.begin(), w.end(), at + width) -
                                                                       std::lower_bound(w.begin(), w.end(), at)));
        if (fewest != SIZE_MAX && fewest > best) {
            best = fewest;
            best_at = at;
        }
    }
    if (longest <= 0) return {0.0, 1.0};
    const double a = std::clamp(static_cast<double>(best_at) / longest, 0.0, 1.0);
    const double b = std::clamp(static_cast<double>(best_at + width) / longest, 0.0, 1.0);
    return b > a ? std::pair{a, b} : std::pair{0.0, 1.0};
}

// What the story compares: both runs' measures, and the ratios and positions drawn from them.
struct comparison {
    herd_measures q, p;     // QES, QES+PSS
    herd_measures vq, vp;   // the same on 40 virtual workers
    unsigned workers = 0;
    double stay = 0, full = 0, outside = 0;   // QES ÷ QES+PSS (outside: QES+PSS ÷ QES)
    bool herd = false;                        // the herd showed under QES (Fig. 5c vs 5d)
    double held_q = 0, held_p = 0;            // commits held behind an earlier ticket, share of all
    std::pair<double, double> zoom;           // a busy 2 ms of the QES run, on the aligned axis
    double mid = 0.5;                         // halfway through the shorter run
    // On 40 virtual workers: visits QES ÷ QES+PSS, kernels running at once QES+PSS ÷ QES, workers
    // per running kernel QES ÷ QES+PSS.
    double v_stay = 0, v_kernels = 0, v_crowd = 0;
    std::pair<double, double> v_window;   // the virtual runs' span on the aligned axis
};

double held_share(const herd_measures& m) {
    return m.commits ? static_cast<double>(m.held_commits) / static_cast<double>(m.commits) : 0;
}

comparison compare(const lesson_data& data) {
    const recorded& qes_run = data.run("qes");
    const recorded& pss_run = data.run("qes-pss");
    comparison c;
    c.q = measure(qes_run);
    c.p = measure(pss_run);
    c.workers = qes_run.spec.workers;
    c.stay = ratio_of(c.q.steps_per_visit, c.p.steps_per_visit);
    c.full = ratio_of(c.q.full_share, c.p.full_share);
    c.outside = ratio_of(c.p.outside_bodies, c.q.outside_bodies);
    c.herd =
        c.q.overlap_share >= 0.2 && c.q.same_kernel_share >= 0.25 && c.q.same_kernel_share >= 1.5 * c.p.same_kernel_share;
    c.held_q = held_share(c.q);
    c.held_p = held_share(c.p);
    c.vq = measure(data.run("qes-40"));
    c.vp = measure(data.run("qes-pss-40"));
    c.v_stay = ratio_of(c.vq.steps_per_visit, c.vp.steps_per_visit);
    c.v_kernels = ratio_of(c.vp.kernels_at_once, c.vq.kernels_at_once);
    c.v_crowd = ratio_of(c.vq.workers_per_kernel, c.vp.workers_per_kernel);
    // Positions on the aligned axis (fractions of the longer run).
    const double longest = static_cast<double>(std::max(qes_run.report.makespan(), pss_run.report.makespan()));
    const double shortest = static_cast<double>(std::min(qes_run.report.makespan(), pss_run.report.makespan()));
    c.zoom = busy_window(qes_run, longest);
    // The virtual runs last a few % of the real ones (40 workers, and no load in virtual time): the
    // step showing them zooms to their span, with a margin.
    const double virtual_span =
        static_cast<double>(std::max(data.run("qes-40").report.makespan(), data.run("qes-pss-40").report.makespan()));
    c.v_window = {0.0, longest > 0 ? std::min(1.0, 1.1 * virtual_span / longest) : 1.0};
    c.mid = longest > 0 ? 0.5 * shortest / longest : 0.5;
    return c;
}

story_values values_of(const comparison& c) {
    const herd_measures &q = c.q, &p = c.p;
    story_values v;
    v.push_back(fmt::arg("workers", count(c.workers, "worker")));
    v.push_back(fmt::arg("cores", std::max(1u, std::thread::hardware_concurrency())));
    v.push_back(fmt::arg("q_steps", fixed(q.steps_per_visit, 1)));
    v.push_back(fmt::arg("p_steps", fixed(p.steps_per_visit, 1)));
    v.push_back(fmt::arg("q_full", share(q.full_share)));
    v.push_back(fmt::arg("p_full", share(p.full_share)));
    v.push_back(fmt::arg("q_empty", share(q.empty_share)));
    v.push_back(fmt::arg("p_empty", share(p.empty_share)));
    v.push_back(fmt::arg("q_same", share(q.same_kernel_share)));
    v.push_back(fmt::arg("p_same", share(p.same_kernel_share)));
    v.push_back(fmt::arg("q_overlap", share(q.overlap_share)));
    v.push_back(fmt::arg("q_outside", percent(q.outside_bodies)));
    v.push_back(fmt::arg("p_outside", percent(p.outside_bodies)));
    v.push_back(fmt::arg("q_failed", q.failed_reserves));
    v.push_back(fmt::arg("p_failed", p.failed_reserves));
    v.push_back(fmt::arg("q_blocked_full", q.blocked_full));
    v.push_back(fmt::arg("p_blocked_full", p.blocked_full));
    v.push_back(fmt::arg("held_q", share(c.held_q)));
    v.push_back(fmt::arg("held_p", share(c.held_p)));
    v.push_back(fmt::arg("stay", ratio(c.stay)));
    v.push_back(fmt::arg("full", ratio(std::min(c.full, 999.0))));
    v.push_back(fmt::arg("herd_or_not", c.herd ? "So does the herd: " : "The herd does not: "));
    const herd_measures &vq = c.vq, &vp = c.vp;
    v.push_back(fmt::arg("herd_workers", herd_workers));
    v.push_back(fmt::arg("vq_steps", fixed(vq.steps_per_visit, 1)));
    v.push_back(fmt::arg("vp_steps", fixed(vp.steps_per_visit, 1)));
    v.push_back(fmt::arg("v_stay", ratio(c.v_stay)));
    v.push_back(fmt::arg("vq_kernels", fixed(vq.kernels_at_once, 1)));
    v.push_back(fmt::arg("vp_kernels", fixed(vp.kernels_at_once, 1)));
    v.push_back(fmt::arg("v_kernels", ratio(c.v_kernels)));
    v.push_back(fmt::arg("vq_crowd", fixed(vq.workers_per_kernel, 2)));
    v.push_back(fmt::arg("vp_crowd", fixed(vp.workers_per_kernel, 2)));
    v.push_back(fmt::arg("v_crowd", ratio(c.v_crowd)));
    v.push_back(fmt::arg("v_herd", c.v_crowd >= crowd_holds && c.v_kernels >= kernels_holds
                                       ? "QES crowds its workers onto fewer kernels, PSS spreads them — Fig. 5c against 5d"
                                       : "in this run QES crowded its workers hardly more than PSS did"));
    v.push_back(fmt::arg("vq_same", share(vq.same_kernel_share)));
    v.push_back(fmt::arg("vp_same", share(vp.same_kernel_share)));
    v.push_back(fmt::arg("vq_full", share(vq.full_share)));
    v.push_back(fmt::arg("vp_full", share(vp.full_share)));
    return v;
}

std::vector<finding_measure> findings_of(const comparison& c) {
    const herd_measures& q = c.q;
    return {
        {"steps_per_visit_ratio", c.stay, ratio(c.stay), c.stay >= 1.4},
        {"full_queue_time_ratio", c.full, ratio(std::min(c.full, 999.0)), c.full >= 2 && q.full_share > 0.005},
        {"same_kernel_share", q.same_kernel_share, share(q.same_kernel_share), c.herd},
        // the paper's RG: 64% -> 14% (0.22x); run-to-run noise here is about ±30%
        {"outside_bodies_ratio", c.outside, ratio(c.outside), c.outside <= 0.5},
        {"held_commit_share_qes", c.held_q, share(c.held_q),
         c.held_q >= 0.05 && c.held_q >= 10 * c.held_p},   // 13.3% -> 0.03%
        // On 40 virtual workers. The margins are above the run-to-run spread measured (docs/lessons).
        {"virtual_steps_per_visit_ratio", c.v_stay, ratio(c.v_stay), c.v_stay >= 1.4},
        {"virtual_kernels_at_once_ratio", c.v_kernels, ratio(c.v_kernels), c.v_kernels >= kernels_holds},
        {"virtual_workers_per_kernel_ratio", c.v_crowd, ratio(c.v_crowd), c.v_crowd >= crowd_holds},
    };
}

const finding_text findings[] = {
    // 1. The mechanism: how long a worker stays on one kernel (§III-A3).
    {"steps_per_visit_ratio",
     "parallel-kernel instances a worker runs in a row before it changes kernel, QES ÷ QES+PSS (QES {q_steps}, QES+PSS "
     "{p_steps})",
     "§III-A3: QES keeps a thread on its kernel until a queue event, so it \"tends to maximize the degree of data "
     "parallelism as far as the sizes of input/output queues are available\"; PSS moves on earlier, exploiting pipeline "
     "parallelism more aggressively",
     "QES and PSS changed kernels about equally often: with shallow queues (capacity 4) a queue event ends a QES visit "
     "almost as soon as PSS would"},
    // 2. PSS leaves before the queue is completely full (§III-A3).
    {"full_queue_time_ratio",
     "share of the queues' time spent completely full, QES ÷ QES+PSS (QES {q_full}, QES+PSS {p_full})",
     "§III-A3: PSS schedules another kernel \"before the corresponding queue becomes completely empty or full\", "
     "steering towards half-full queues",
     "the queues were rarely full under either configuration in this run"},
    // 3. The herd itself (Fig. 5c vs 5d): two or more workers on one kernel at the same moment.
    {"same_kernel_share",
     "while two or more workers ran nodes, the share of that time two of them ran the same kernel, under QES (QES+PSS: "
     "{p_same})",
     "Fig. 5c (RG, 40 cores): under QES \"most threads work for a kernel at the same time\"; Fig. 5d: under PSS "
     "\"various kernels are executed at the same time\"",
     "{workers} among 47 kernels: each QES worker settles on a kernel of its own, so no two crowd one (two nodes ran at "
     "once {q_overlap} of the run, mostly of different kernels; where they shared one it was mostly the antenna, a "
     "parallel source kernel that carries about half the work, under QES and PSS alike). The herd needs more threads "
     "than kernels with work: the paper's 40 threads on RG's 6 kernels, with queues sized for all of them. The step "
     "\"On 40 virtual workers\" measures what {herd_workers} threads do"},
    // 4. Queue operations and stalls in the breakdown (Fig. 4).
    {"outside_bodies_ratio",
     "worker time outside stage bodies (queue operations, decisions, failed steps, waiting), QES+PSS ÷ QES (QES "
     "{q_outside}, QES+PSS {p_outside})",
     "Fig. 4, RG on 40 cores: PSS cuts queue operations from 51% to 14% and stall from 13.3% to 0.03% of the time; "
     "MergeSort improves only marginally",
     "there is no herd here to break up, so PSS removes no contention; its extra kernel switches cost queue operations "
     "of their own (failed reserves: QES {q_failed}, QES+PSS {p_failed})"},
    // 5. Ticket-order stalls: commits held behind an earlier ticket on ordered queues.
    {"held_commit_share_qes",
     "pushes committed behind an earlier ticket (ordered queues) under QES, share of all pushes (QES+PSS: {held_p})",
     "§IV-B: under QES the herd \"increases the contention of the data queues and the stall induced by ticket "
     "synchronization\" (13.3% stall on RG; 0.03% with PSS)",
     "ticket stalls come from many instances of one kernel finishing out of order; without a herd there are few of them "
     "under either configuration"},
    // 6-8. The same on 40 virtual workers (the paper's thread count), queues of 256 packets.
    {"virtual_steps_per_visit_ratio",
     "on {herd_workers} virtual workers: parallel-kernel instances a worker runs in a row, QES ÷ QES+PSS (QES {vq_steps}, "
     "QES+PSS {vp_steps})",
     "§III-A3: QES keeps a thread on its kernel until a queue event; PSS moves on before the queue is completely empty "
     "or full",
     "with {herd_workers} workers on one kernel its queues fill and drain within a few instances, under QES as under "
     "PSS"},
    {"virtual_kernels_at_once_ratio",
     "on {herd_workers} virtual workers, while two or more ran nodes: kernels running at once, QES+PSS ÷ QES (QES "
     "{vq_kernels}, QES+PSS {vp_kernels})",
     "Fig. 5d (RG, 40 cores): under PSS \"various kernels are executed at the same time\"",
     "the workers spread over as many kernels under QES as under PSS in this run"},
    {"virtual_workers_per_kernel_ratio",
     "on {herd_workers} virtual workers: nodes running per running kernel, QES ÷ QES+PSS (QES {vq_crowd}, QES+PSS "
     "{vp_crowd})",
     "Fig. 5c (RG, 40 cores): under QES \"most threads work for a kernel at the same time\" — the thundering herd",
     "QES did not crowd its workers onto fewer kernels than PSS in this run; the antenna, a parallel kernel with about "
     "half the work, holds the largest crowd under both"},
};

std::vector<step_text> steps(const comparison& c) {
    const step_text the_herd{
        "The herd",
        "Under QES, while two or more workers ran nodes, two of them ran the same kernel {q_same} of that time, against "
        "{p_same} under QES+PSS: the crowding of Fig. 5c against the spread of Fig. 5d. The breakdown shows what it cost "
        "(time outside stage bodies {q_outside} vs {p_outside}; commits held behind a ticket {held_q} vs {held_p}).",
        aligned("breakdown")};
    const step_text no_herd{
        "Why no herd here",
        "A herd needs more threads than kernels with work, running at the same time. Here {workers} share 47 kernels on "
        "a {cores}-core machine, so QES parks each worker on a kernel of its own instead of piling them onto one. With no "
        "contention to remove, PSS's extra switches cost queue operations instead (failed reserves {q_failed} vs "
        "{p_failed}; commits held behind a ticket {held_q} vs {held_p}). The next step runs {herd_workers} virtual "
        "workers.",
        aligned("breakdown")};
    return {
        {"What to look at",
         "The compare view shows fm-radio's 47 kernels under DANBI, QES on top and QES+PSS below, {workers} each, one row "
         "per worker and one colour per kernel (the palette repeats every ten stages): the per-core kernel timeline of "
         "the paper's Fig. 5. At this scale both look equally busy; the difference is how long a worker stays on one "
         "colour. Under QES it keeps a kernel until one of its queues is empty or full; under QES+PSS it moves on after a "
         "few instances. Step 3 zooms in.",
         aligned("compare")},
        {"What the paper found",
         "DANBI on 40 cores (seed 002 §IV-B): with QES alone, threads that decide at about the same time make the same "
         "decision and crowd the kernel with the most input — the thundering herd. They contend on its queues and wait "
         "for ticket order: RG spends 51% of its time in queue operations and 13.3% stalled (Fig. 4), and Fig. 5c shows "
         "most cores on one kernel. PSS leaves a kernel before its queue is completely empty or full: queue operations "
         "drop to 14%, stalls to 0.03%, and Fig. 5d shows many kernels at once. The breakdown view is this run's version "
         "of Fig. 4.",
         aligned("breakdown")},
        {"What this run shows",
         "The timeline, zoomed into 2 ms of the QES run (its workers are the top rows; QES+PSS follows below its queue "
         "counters). The mechanism shows: QES: {q_steps} instances per visit, queues full {q_full} of the time; QES+PSS: "
         "{p_steps} instances per visit, queues full {p_full} of the time ({stay} longer visits, {full} more full-queue "
         "time under QES). {herd_or_not}while two workers ran nodes, they ran the same kernel {q_same} of that time "
         "under QES ({p_same} under QES+PSS). Time outside stage bodies: QES {q_outside}, QES+PSS {p_outside}. Stages "
         "stopped by a full queue: {q_blocked_full} vs {p_blocked_full}.",
         aligned("timeline", {}, c.zoom)},
        {"The queues",
         "The stage graph halfway through the shorter run (QES first; scroll for QES+PSS): each queue's bar is its fill "
         "against its 64 packets (orange: full). Under QES a worker drains or fills a queue completely before it moves, "
         "so more bars sit at an end; PSS steers towards half-full queues (full {q_full} vs {p_full} of the time, empty "
         "{q_empty} vs {p_empty}).",
         aligned("graph", c.mid)},
        c.herd ? the_herd : no_herd,
        {"On 40 virtual workers",
         "The last two runs put QES and QES+PSS on {herd_workers} virtual workers (docs/virtual.md), the paper's thread "
         "count, with queues of 256 packets: the real stage bodies and DANBI's real decisions, one worker running at a "
         "time, each node charged its measured CPU time, so this {cores}-core machine shows {herd_workers} rows (the "
         "viewer marks them \"virtual 40 cores\"). QES keeps a worker on a kernel for {vq_steps} instances, QES+PSS for "
         "{vp_steps} ({v_stay}). While two or more workers ran, QES had {vq_kernels} kernels running at once with "
         "{vq_crowd} workers on each, QES+PSS {vp_kernels} kernels with {vp_crowd} ({v_kernels} more kernels, {v_crowd} "
         "fewer workers per kernel): {v_herd}, milder than on RG because fm-radio's 47 kernels leave room and its antenna, "
         "half the work, draws a crowd under both (two workers on one kernel: {vq_same} of the time under QES, {vp_same} under QES+PSS). Queues "
         "completely full: {vq_full} against {vp_full}. Virtual workers have no cache and no lock contention, so the "
         "herd's cost in queue operations (Fig. 4) is not charged.",
         aligned("compare", {}, c.v_window)},
        {"Try next",
         "On a many-core machine: `pipescope lesson thundering-herd --workers 40` (the paper's 40 threads). On virtual "
         "workers, other queue depths: `pipescope run fm-radio --policy danbi --param config=qes --param capacity=1024 "
         "--workers 40 --virtual`. Here, oversubscribed: `--workers 4` keeps the mechanism but the OS time-slices the threads. With queues sized for few "
         "threads the difference between QES and PSS shrinks: `pipescope run fm-radio --policy danbi --param config=qes "
         "--param capacity=4 --workers 2`. The random work-stealing baseline of Fig. 3a: `--param config=ws`.",
         aligned("compare")},
    };
}

class thundering_herd final : public lesson {
public:
    const char* name() const override { return "thundering-herd"; }
    const char* title() const override { return "DANBI's QES vs QES+PSS: does every worker rush to the same kernel?"; }
    const char* seeds() const override { return "002 §III-A2–A3, §IV-B, Figs. 4–5"; }

    std::vector<run_spec> runs(const options&) const override {
        return {{.key = "qes", .workload = workload, .policy = "danbi", .params = {"config=qes", queue_capacity}},
                {.key = "qes-pss", .workload = workload, .policy = "danbi", .params = {"config=qes+pss", queue_capacity}},
                {.key = "qes-40",
                 .workload = workload,
                 .policy = "danbi",
                 .params = {"config=qes", herd_capacity},
                 .workers = herd_workers,
                 .virtual_time = true},
                {.key = "qes-pss-40",
                 .workload = workload,
                 .policy = "danbi",
                 .params = {"config=qes+pss", herd_capacity},
                 .workers = herd_workers,
                 .virtual_time = true}};
    }

    story tell(const lesson_data& data) const override {
        const comparison c = compare(data);
        return tell_story(findings, findings_of(c), steps(c), values_of(c));
    }
};

}   // namespace

std::unique_ptr<lesson> make_thundering_herd_lesson() { return std::make_unique<thundering_herd>(); }

}   // namespace pipescope::lessons
