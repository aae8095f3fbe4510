// The run report: analyze(), JSON and text (report.hpp).
#include <pipescope/analysis/report.hpp>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

namespace pipescope::analysis {

run_report analyze(const run_scope& scope) {
    run_report r;
    r.title = scope.title;
    r.run = scope.run;
    r.start = scope.start;
    r.end = scope.end;
    r.meta = read_meta(scope);
    r.breakdown = compute_breakdown(scope);
    r.stats = compute_stats(scope, r.meta);
    const unsigned P = static_cast<unsigned>(r.meta.workers ? r.meta.workers : scope.workers.size());
    if (r.meta.program_kind == vocab::graph_program) {
        // Instances of a stage graph are not iterations: no pipeline DAG, no seed-000 queueing model.
        r.dag.workers = P;
        r.graph = compute_graph(scope, r.meta);
    } else {
        r.dag = compute_dag_bounds(scope, P, r.meta.reference_seconds);
        r.queueing = compute_queueing(scope, r.meta, r.stats);
    }
    r.verdicts = compute_verdicts(scope, r.meta, r.breakdown, r.stats, r.dag, r.queueing);
    return r;
}

std::vector<run_report> analyze_all(const tm::trace_model& m) {
    std::vector<run_report> out;
    for (const auto& s : scopes_of(m)) out.push_back(analyze(s));
    return out;
}

namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json place_json(const place& p) {
    return {{"begin_ns", p.begin},
            {"end_ns", p.end},
            {"worker", p.worker >= 0 ? json(p.worker) : json(nullptr)},
            {"stage", p.stage >= 0 ? json(p.stage) : json(nullptr)},
            {"iteration", p.iteration >= 0 ? json(p.iteration) : json(nullptr)}};
}

json split_json(const time_split& t) {
    json j = json::object();
    for (int c = 0; c < time_category_count; ++c) j[std::string(to_string(static_cast<time_category>(c))) + "_ns"] = t.ns[c];
    j["span_ns"] = t.span;
    json f = json::object();
    for (int c = 0; c < time_category_count; ++c) f[to_string(static_cast<time_category>(c))] = t.fraction(static_cast<time_category>(c));
    j["fractions"] = f;
    return j;
}

json worker_json(const worker_breakdown& w, int worker) {
    json j = split_json(w.time);
    j["name"] = w.name;
    j["worker"] = worker >= 0 ? json(worker) : json(nullptr);
    j["nodes"] = w.nodes;
    j["folded_runs"] = w.folded_runs;
    j["steals"] = w.steals;
    j["failed_steals"] = w.failed_steals;
    return j;
}

}  // namespace

nlohmann::json to_json(const run_report& r) {
    json out;
    out["format"] = report_format;
    out["run"] = {{"title", r.title},
                  {"workload", r.meta.workload},
                  {"policy", r.meta.policy},
                  {"size", r.meta.size},
                  {"workers", r.meta.workers},
                  {"K", r.meta.K ? json(r.meta.K) : json(nullptr)},
                  {"start_ns", r.start},
                  {"end_ns", r.end},
                  {"makespan_ns", r.makespan()},
                  {"iterations", r.stats.iterations},
                  {"nodes", r.stats.nodes},
                  {"reference_seconds", opt(r.meta.reference_seconds)}};
    json decisions = json::array();
    for (const auto& dd : r.stats.detail_decisions)
        decisions.push_back({{"folded", dd.folded},
                             {"mean_node_ns", dd.mean_node_ns},
                             {"nodes_measured", dd.nodes_measured},
                             {"stage", dd.stage >= 0 ? json(dd.stage) : json(nullptr)},
                             {"at_ns", dd.where.begin},
                             {"worker", dd.where.worker >= 0 ? json(dd.where.worker) : json(nullptr)}});
    out["trace"] = {{"detail", r.meta.trace_detail.empty() ? json(nullptr) : json(r.meta.trace_detail)},
                    {"fold_below_ns", opt(r.meta.fold_below_ns)},
                    {"folded_runs", r.stats.folded_runs},
                    {"folded_nodes", r.stats.folded_nodes},
                    {"decisions", decisions}};

    json workers = json::array();
    for (const auto& w : r.breakdown.workers) workers.push_back(worker_json(w, static_cast<int>(workers.size())));
    json categories = json::array();
    for (int c = 0; c < time_category_count; ++c) categories.push_back(to_string(static_cast<time_category>(c)));
    out["breakdown"] = {{"categories", categories},
                        {"total", worker_json(r.breakdown.total, -1)},
                        {"workers", workers},
                        {"stall_derived", r.breakdown.stall_derived}};

    json stages = json::array();
    for (const auto& s : r.stats.stages)
        stages.push_back({{"index", s.index},
                          {"name", s.name},
                          {"kind", s.kind},
                          {"serial", s.serial},
                          {"executions", s.service.count},
                          {"shares", s.shares},
                          {"service_ns",
                           {{"total", s.service.total}, {"mean", s.service.mean}, {"p50", s.service.p50}, {"p95", s.service.p95}, {"max", s.service.max}}},
                          {"busy_fraction", s.busy_fraction},
                          {"suspensions", s.suspensions},
                          {"waits", s.waits},
                          {"wait_ns", s.wait_ns},
                          {"longest", place_json(s.longest)}});
    out["stages"] = stages;

    json per_worker = json::array(), pairs = json::array();
    for (const auto& w : r.stats.steals)
        per_worker.push_back({{"worker", w.worker}, {"made", w.made}, {"failed", w.failed}, {"tried", w.tried()}});
    for (const auto& p : r.stats.steal_pairs)
        pairs.push_back({{"thief", p.thief}, {"victim", p.victim >= 0 ? json(p.victim) : json(nullptr)}, {"made", p.made}});
    out["steals"] = {{"made", r.stats.steals_made},
                     {"failed", r.stats.steals_failed},
                     {"tried", r.stats.steals_made + r.stats.steals_failed},
                     {"per_worker", per_worker},
                     {"pairs", pairs}};
    out["events"] = {{"suspensions", r.stats.suspensions},     {"resumptions", r.stats.resumptions},
                     {"wakeups", r.stats.wakeups},             {"throttle_waits", r.stats.throttle_waits},
                     {"throttled_ns", r.stats.throttled_ns},   {"retire_waits", r.stats.retire_waits},
                     {"retire_wait_ns", r.stats.retire_wait_ns},   {"events_lost", r.stats.events_lost}};

    json counters = json::array();
    for (const auto& c : r.stats.counters)
        counters.push_back({{"name", c.name},
                            {"peak", c.peak},
                            {"peak_ts_ns", c.peak_ts},
                            {"capacity", opt(c.capacity)},
                            {"capacity_from", c.capacity ? json(c.capacity_from) : json(nullptr)}});
    out["limits"] = {{"peak_live", opt(r.stats.peak_live)},
                     {"K", opt(r.stats.K)},
                     {"peak_tokens", opt(r.stats.peak_tokens)},
                     {"N", opt(r.stats.N)},
                     {"peak_footprint", opt(r.stats.peak_footprint)},
                     {"counters", counters}};

    const dag_bounds& d = r.dag;
    json path = json::array();
    for (const auto& n : d.with_throttle.critical_path)
        path.push_back({{"iteration", n.iteration},
                        {"stage", n.stage},
                        {"last_stage", n.last_stage},
                        {"nodes", n.nodes},
                        {"begin_ns", n.begin},
                        {"end_ns", n.end},
                        {"worker", n.worker},
                        {"via", to_string(n.via)}});
    out["dag"] = {{"available", d.available},
                  {"nodes", d.nodes},
                  {"blocks", d.blocks},
                  {"folded_blocks", d.folded_blocks},
                  {"approximate", d.approximate},
                  {"approximate_reason", d.approximate ? json(d.approximate_reason) : json(nullptr)},
                  {"edges", d.edges},
                  {"iterations", d.iterations},
                  {"K", d.K},
                  {"workers", d.workers},
                  {"work_ns", d.work},
                  {"span_ns", d.with_throttle.span},
                  {"span_unthrottled_ns", d.without_throttle.span},
                  {"parallelism", d.parallelism},
                  {"parallelism_unthrottled", d.parallelism_unthrottled},
                  {"speedup_bound", d.speedup_bound},
                  {"observed_speedup", d.observed_speedup},
                  {"observed_from_reference", d.observed_from_reference},
                  {"makespan_ns", d.makespan},
                  {"throttle_edges_on_path", d.with_throttle.throttle_edges_on_path},
                  {"critical_path", path}};

    const queueing_bounds& q = r.queueing;
    json qs = json::array();
    for (const auto& s : q.stages)
        qs.push_back({{"index", s.index},
                      {"name", s.name},
                      {"serial", s.serial},
                      {"tser_s", s.tser},
                      {"c_element", s.c_element},
                      {"c_stage", s.c_stage},
                      {"rate_element", s.rate_element},
                      {"rate_stage", s.rate_stage}});
    out["queueing"] = {{"available", q.available},
                       {"workers", q.workers},
                       {"iterations", q.iterations},
                       {"makespan_s", q.makespan},
                       {"work_per_item_s", q.work_per_item},
                       {"lambda_max", q.lambda_max},
                       {"critical_serial_stage", q.critical_serial_stage >= 0 ? json(q.critical_serial_stage) : json(nullptr)},
                       {"bound_bind_to_element", q.bound_element},
                       {"bound_bind_to_stage", q.bound_stage},
                       {"bottleneck_stage", q.bottleneck_stage >= 0 ? json(q.bottleneck_stage) : json(nullptr)},
                       {"model", q.model},
                       {"predicted", q.predicted},
                       {"observed", q.observed},
                       {"efficiency", q.efficiency},
                       {"tokens_needed", q.tokens_needed},
                       {"k_for_span", q.k_for_span},
                       {"K", q.K},
                       {"stages", qs}};

    json verdicts = json::array();
    for (const auto& v : r.verdicts)
        verdicts.push_back({{"rule", v.rule},
                            {"limiting", v.limiting},
                            {"severity", v.severity},
                            {"text", v.text},
                            {"suggestion", v.suggestion},
                            {"where", place_json(v.where)}});
    out["verdicts"] = verdicts;
    const graph_report& g = r.graph;
    json queues = json::array();
    for (const auto& q : g.queues)
        queues.push_back({{"name", q.name},
                          {"capacity_packets", q.capacity_packets},
                          {"unbounded", q.unbounded},
                          {"ordered", q.ordered},
                          {"backward", q.backward},
                          {"peak_packets", q.peak_packets},
                          {"mean_packets", q.mean_packets},
                          {"samples", q.samples},
                          {"over_capacity", q.over_capacity}});
    out["graph"] = {{"available", g.available},
                    {"queues", queues},
                    {"footprint",
                     {{"peak_packets", static_cast<std::uint64_t>(g.peak_packets)},   // counts: whole numbers
                      {"mean_packets", g.mean_packets},
                      {"peak_bytes", static_cast<std::uint64_t>(g.peak_bytes)},
                      {"mean_bytes", g.mean_bytes},
                      {"derived", g.footprint_derived}}},
                    {"blocked", {{"full", g.blocked_full}, {"empty", g.blocked_empty}, {"order", g.blocked_order}}},
                    {"preemptions", g.preemptions},
                    {"stages_done", g.stages_done},
                    {"queue_operations", g.queue_operations}};
    return out;
}

namespace {

std::string sfmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string sfmt(const char* f, ...) {
    char b[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(b, sizeof b, f, ap);
    va_end(ap);
    return b;
}

// ns as a readable duration.
std::string dur(double ns) {
    if (ns >= 1e9) return sfmt("%.3f s", ns * 1e-9);
    if (ns >= 1e6) return sfmt("%.3f ms", ns * 1e-6);
    if (ns >= 1e3) return sfmt("%.2f us", ns * 1e-3);
    return sfmt("%.0f ns", ns);
}

// items/s, readably.
std::string rate(double r) {
    if (r >= 1e6) return sfmt("%.2f M", r * 1e-6);
    if (r >= 1e3) return sfmt("%.2f k", r * 1e-3);
    return sfmt("%.1f", r);
}

std::string opt_num(const std::optional<double>& v) { return v ? sfmt("%g", *v) : std::string("-"); }

// bytes, readably.
std::string bytes(double b) {
    if (b >= 1024.0 * 1024.0) return sfmt("%.2f MiB", b / (1024.0 * 1024.0));
    if (b >= 1024.0) return sfmt("%.1f KiB", b / 1024.0);
    return sfmt("%.0f B", b);
}

// A stage graph's queues and footprint (seed 004 Table III: average and maximum footprint).
std::string graph_text(const graph_report& g) {
    std::string o = "\nqueues (stage graph; packets in use, time-weighted mean and peak)\n";
    if (!g.available) return o + "  not available (the run recorded no footprint counters)\n";
    o += sfmt("  %-24s %9s %9s %10s  %s\n", "queue", "mean", "peak", "capacity", "");
    for (const auto& q : g.queues) {
        std::string notes;
        if (q.unbounded) notes += " unbounded";
        if (q.backward) notes += " backward";
        if (q.ordered) notes += " ordered";
        if (q.over_capacity) notes += " OVER CAPACITY";
        o += sfmt("  %-24s %9.2f %9.0f %10.0f %s\n", q.name.c_str(), q.mean_packets, q.peak_packets, q.capacity_packets,
                  notes.c_str());
    }
    o += sfmt("  footprint: mean %.1f packets (%s), peak %.0f packets (%s)%s\n", g.mean_packets, bytes(g.mean_bytes).c_str(),
              g.peak_packets, bytes(g.peak_bytes).c_str(),
              g.footprint_derived ? "; the sum of the queue counters (exact peak: `pipescope run`'s output)" : "");
    o += sfmt("  stages stopped by a queue: %llu full (backpressure), %llu empty, %llu waiting for commit order; %llu "
              "preemptions\n",
              (unsigned long long)g.blocked_full, (unsigned long long)g.blocked_empty, (unsigned long long)g.blocked_order,
              (unsigned long long)g.preemptions);
    if (g.queue_operations)
        o += sfmt("  queue operations recorded: %llu reserves and commits (every one at trace detail nodes; only the refused reserves at auto and folded)\n",
                  (unsigned long long)g.queue_operations);
    return o;
}

// One line on what the trace records of the nodes when it is not every node one by one (the run
// metadata's trace.detail "auto" or "folded", or folded slices found): how many folded runs and
// nodes, and where trace_detail auto decided, with the mean node time it measured.
std::string detail_text(const run_report& r) {
    const run_stats& st = r.stats;
    const std::string& level = r.meta.trace_detail;
    if (level != "auto" && level != "folded" && st.folded_runs == 0) return {};
    std::string o = "  trace detail " + (level.empty() ? std::string("folded") : level) + ": ";
    const double below = r.meta.fold_below_ns.value_or(0);
    const auto& dv = st.detail_decisions;
    auto at = [&](const detail_decision& d) { return dur(static_cast<double>(d.where.begin - std::min(d.where.begin, r.start))); };
    if (dv.size() == 1) {
        const detail_decision& d = dv.front();
        o += d.folded ? "folded from " + at(d) + " on" : "every node recorded (decided at " + at(d) + ")";
        o += sfmt(" after %s%s measured %llu nodes at a mean of %s", d.where.worker >= 0 ? "worker " : "",
                  d.where.worker >= 0 ? std::to_string(d.where.worker).c_str() : "", (unsigned long long)d.nodes_measured,
                  dur(d.mean_node_ns).c_str());
        if (below > 0) o += std::string(d.folded ? " < " : " >= ") + dur(below);
        if (d.stage >= 0) o += sfmt(" (stage %ld)", d.stage);
        o += "; ";
    } else if (dv.size() > 1) {
        std::size_t folded = 0;
        for (const auto& d : dv) folded += d.folded;
        o += sfmt("decided %zu times (%zu folded, %zu kept every node; first at %s); ", dv.size(), folded, dv.size() - folded,
                  at(dv.front()).c_str());
    } else if (level == "auto") {
        o += "no decision recorded (the loop ended before auto had measured enough nodes); ";
    }
    if (st.folded_runs)
        o += sfmt("%llu folded runs hold %llu of the %llu nodes (%.1f %%)", (unsigned long long)st.folded_runs,
                  (unsigned long long)st.folded_nodes, (unsigned long long)st.nodes,
                  st.nodes ? 100.0 * static_cast<double>(st.folded_nodes) / static_cast<double>(st.nodes) : 0.0);
    else
        o += "no folded runs: every node is its own slice";
    return o + "\n";
}

}  // namespace

std::string to_text(const run_report& r, std::size_t max_path) {
    std::string o;
    o += "== ";
    o += r.title;
    o += "\n";
    const bool graph = r.meta.program_kind == vocab::graph_program;
    if (graph)   // a stage graph's nodes are parallel instances and serial resumptions, not iterations
        o += sfmt("  makespan %s, %u workers, %llu nodes (instances and resumptions)", dur(static_cast<double>(r.makespan())).c_str(),
                  r.dag.workers, (unsigned long long)r.stats.nodes);
    else
        o += sfmt("  makespan %s, %u workers, %llu iterations, %llu nodes", dur(static_cast<double>(r.makespan())).c_str(),
                  r.dag.workers, (unsigned long long)r.stats.iterations, (unsigned long long)r.stats.nodes);
    if (r.meta.K) o += sfmt(", K = %llu", (unsigned long long)r.meta.K);
    if (!r.meta.size.empty()) o += ", size " + r.meta.size;
    o += "\n";
    o += detail_text(r);
    const bool folded = r.stats.folded_runs > 0;

    // Breakdown.
    o += "\nbreakdown (share of each worker's time; total = all workers)\n";
    o += sfmt("  %-10s", "");
    for (int c = 0; c < time_category_count; ++c) o += sfmt(" %9s", to_string(static_cast<time_category>(c)));
    o += sfmt(" %7s %7s %7s\n", "nodes", "steals", "failed");
    auto row = [&](const worker_breakdown& w) {
        o += sfmt("  %-10s", w.name.c_str());
        for (int c = 0; c < time_category_count; ++c)
            o += sfmt(" %8.1f%%", 100.0 * w.time.fraction(static_cast<time_category>(c)));
        o += sfmt(" %7llu %7llu %7llu\n", (unsigned long long)w.nodes, (unsigned long long)w.steals,
                      (unsigned long long)w.failed_steals);
    };
    for (const auto& w : r.breakdown.workers) row(w);
    row(r.breakdown.total);
    if (!r.breakdown.stall_derived) o += "  (no line tracks: idle time is not split into idle and stall)\n";
    if (folded)
        o += "  (nodes: a folded run counts the nodes it holds; the stage boundaries inside a folded run are inside its "
             "slice, so they count as work, not scheduler)\n";

    // Stages.
    o += "\nstages\n";
    o += sfmt("  %-5s %-28s %-9s %8s %11s %11s %11s %11s %7s %7s %8s\n", "stage", "name", "kind", "runs", "mean", "p50",
                  "p95", "max", "busy", "susp", "waits");
    // Many stages (pipe-fib has hundreds): the ones with the most service time, in stage order.
    constexpr std::size_t max_rows = 16, shown_rows = 12;
    std::vector<std::uint64_t> shown;
    {
        std::vector<const stage_stats*> v;
        for (const auto& s : r.stats.stages) v.push_back(&s);
        if (v.size() > max_rows) {
            std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->service.total > b->service.total; });
            v.resize(shown_rows);
        }
        for (auto* s : v) shown.push_back(s->index);
        std::sort(shown.begin(), shown.end());
    }
    auto is_shown = [&](std::uint64_t j) { return std::binary_search(shown.begin(), shown.end(), j); };
    std::uint64_t hidden_runs = 0, hidden_n = 0;
    double hidden_busy = 0;
    for (const auto& s : r.stats.stages) {
        if (!is_shown(s.index)) {
            ++hidden_n, hidden_runs += s.service.count, hidden_busy += s.busy_fraction;
            continue;
        }
        std::string name = s.name.size() > 28 ? s.name.substr(0, 27) + "~" : s.name;
        std::string kind = s.kind.empty() ? (s.serial ? "serial?" : "parallel?") : s.kind;
        o += sfmt("  %-5llu %-28s %-9s %7llu%c %11s %11s %11s %11s %6.1f%% %7llu %8llu\n", (unsigned long long)s.index,
                      name.c_str(), kind.c_str(), (unsigned long long)s.service.count, s.shares ? '*' : ' ', dur(s.service.mean).c_str(),
                      dur(static_cast<double>(s.service.p50)).c_str(), dur(static_cast<double>(s.service.p95)).c_str(),
                      dur(static_cast<double>(s.service.max)).c_str(), 100.0 * s.busy_fraction,
                      (unsigned long long)s.suspensions, (unsigned long long)s.waits);
    }
    if (hidden_n)
        o += sfmt("  ... %llu more stages (%llu runs, %.1f%% busy together; --json lists every stage)\n",
                  (unsigned long long)hidden_n, (unsigned long long)hidden_runs, 100.0 * hidden_busy);
    o += "  (busy: the stage's total service time / makespan; above 100 % for a parallel stage = more than one worker on average)\n";
    if (folded)
        o += "  (* runs inside folded runs: each node gets an equal share of its folded run's time, so mean, p50, p95 and max "
             "there are shares, not measured node times; totals and busy are exact)\n";

    // Events, steals, limits.
    const auto& st = r.stats;
    o += sfmt("\nsteals %llu made of %llu tried;", (unsigned long long)st.steals_made,
                  (unsigned long long)(st.steals_made + st.steals_failed));
    if (!st.steal_pairs.empty()) {
        o += " thief<-victim:";
        for (const auto& p : st.steal_pairs)
            o += sfmt(" %d<-%s:%llu", p.thief, p.victim >= 0 ? std::to_string(p.victim).c_str() : "?",
                          (unsigned long long)p.made);
    }
    o += "\n";
    o += sfmt("suspensions %llu, resumptions %llu, wake-ups %llu, throttle waits %llu (%s), retire waits %llu (%s)\n",
                  (unsigned long long)st.suspensions, (unsigned long long)st.resumptions, (unsigned long long)st.wakeups,
                  (unsigned long long)st.throttle_waits, dur(static_cast<double>(st.throttled_ns)).c_str(),
                  (unsigned long long)st.retire_waits, dur(static_cast<double>(st.retire_wait_ns)).c_str());
    if (st.events_lost) o += sfmt("WARNING: %llu events were lost while recording\n", (unsigned long long)st.events_lost);
    if (!graph) {   // a graph's limits are its queues' capacities: the queues section below
        o += "limits: peak live " + opt_num(st.peak_live) + " of K " + opt_num(st.K);
        if (st.peak_tokens) o += ", tokens " + opt_num(st.peak_tokens) + " of N " + opt_num(st.N);
        if (st.peak_footprint) o += ", peak footprint " + opt_num(st.peak_footprint);
        o += "\n";
    }
    if (!graph)   // a graph's counters are its queues and footprint, summarised below
        for (const auto& c : st.counters)
            o += sfmt("  counter %-24s peak %-8g%s\n", c.name.c_str(), c.peak,
                      c.capacity ? sfmt(" of %g (%s)", *c.capacity, c.capacity_from.c_str()).c_str() : "");

    // DAG bounds and the queueing model: pipelines only.
    auto dag_text = [&] {
        std::string o;
        const auto& d = r.dag;
        o += d.approximate ? "\nDAG bounds (block weight = measured duration of a node or of a folded run)\n"
                           : "\nDAG bounds (node weight = measured duration)\n";
        if (!d.available) {
        o += "  no pipeline DAG in this run\n";
    } else {
        if (d.approximate) o += "  approximate: " + d.approximate_reason + "\n";
        const char* le = d.approximate ? "<= " : "";
        o += sfmt("  work T1 %s; span Tinf %s%s (without throttling edges %s%s, ratio %.2f)\n", dur(static_cast<double>(d.work)).c_str(),
                      le, dur(static_cast<double>(d.with_throttle.span)).c_str(), le,
                      dur(static_cast<double>(d.without_throttle.span)).c_str(),
                      d.without_throttle.span ? static_cast<double>(d.with_throttle.span) / static_cast<double>(d.without_throttle.span) : 0.0);
        o += sfmt("  parallelism T1/Tinf %s%.2f (unthrottled %s%.2f); speedup bound min(P, T1/Tinf) %s %.2f; observed %.2f (%s)\n",
                      d.approximate ? ">= " : "", d.parallelism, d.approximate ? ">= " : "", d.parallelism_unthrottled,
                      d.approximate ? ">=" : "=", d.speedup_bound, d.observed_speedup,
                      d.observed_from_reference ? "serial reference / makespan" : "T1 / makespan");
        const auto& path = d.with_throttle.critical_path;
        std::map<std::string, std::uint64_t> per_edge;
        std::size_t folded_on_path = 0;
        for (const auto& n : path) ++per_edge[to_string(n.via)], folded_on_path += n.nodes > 1;
        if (folded_on_path)
            o += sfmt("  critical path: %llu nodes in %zu blocks (%zu folded runs), %llu throttling edges; time by stage (shares):",
                      (unsigned long long)path_nodes(d.with_throttle), path.size(), folded_on_path,
                      (unsigned long long)d.with_throttle.throttle_edges_on_path);
        else
            o += sfmt("  critical path: %zu nodes, %llu throttling edges; time by stage:", path.size(),
                      (unsigned long long)d.with_throttle.throttle_edges_on_path);
        const auto by_time = path_time_by_stage(d.with_throttle);
        for (std::size_t i = 0; i < by_time.size() && i < 6; ++i)
            o += sfmt(" stage %llu %.0f%%", (unsigned long long)by_time[i].first,
                      d.with_throttle.span ? 100.0 * static_cast<double>(by_time[i].second) / static_cast<double>(d.with_throttle.span) : 0.0);
        if (by_time.size() > 6) o += sfmt(" (+%zu stages)", by_time.size() - 6);
        o += "; edges:";
        for (const auto& [k, n] : per_edge) o += sfmt(" %s %llu", k.c_str(), (unsigned long long)n);
        o += "\n   ";
        for (std::size_t i = 0; i < path.size() && i < max_path; ++i) {
            o += sfmt(" %s(%llu,%llu", i ? "-> " : "", (unsigned long long)path[i].iteration, (unsigned long long)path[i].stage);
            o += path[i].last_stage > path[i].stage ? sfmt("\xE2\x80\x93%llu)", (unsigned long long)path[i].last_stage) : std::string(")");
        }
        if (path.size() > max_path) o += sfmt(" ... %zu more", path.size() - max_path);
        o += "\n";
    }

        return o;
    };
    auto queueing_text = [&] {
        std::string o;
    // Queueing.
    const auto& q = r.queueing;
    o += "\nqueueing bounds (seed 000 §3; items/s)\n";
    if (!q.available) {
        o += "  not available (no timed stages or iterations)\n";
    } else {
        o += sfmt("  %-5s %-9s %12s %9s %12s %9s %12s\n", "stage", "kind", "Tser/item", "c (ws)", "c/Tser (ws)", "c (bts)",
                      "c/Tser (bts)");
        for (const auto& s : q.stages)
            if (is_shown(s.index))
                o += sfmt("  %-5llu %-9s %12s %9.2f %12s %9.2f %12s\n", (unsigned long long)s.index,
                          s.serial ? "serial" : "parallel", dur(s.tser * 1e9).c_str(), s.c_element, rate(s.rate_element).c_str(),
                          s.c_stage, rate(s.rate_stage).c_str());
        if (hidden_n) o += "  ... the other stages: see --json\n";
        o += sfmt("  lambda_max = 1/max(T serial) = %s (stage %ld); work per item W = %s\n", rate(q.lambda_max).c_str(),
                  q.critical_serial_stage, dur(q.work_per_item * 1e9).c_str());
        o += sfmt("  bound bind-to-element min(P/W, lambda_max) = %s; bind-to-stage min(c_i/Tser_i, P/W) = %s (%s)\n",
                  rate(q.bound_element).c_str(), rate(q.bound_stage).c_str(),
                  q.bottleneck_stage >= 0 ? sfmt("stage %ld", q.bottleneck_stage).c_str() : "P/W: the cores");
        o += sfmt("  predicted (%s) %s, observed %s (%.0f %% of predicted); items in flight needed ~%.1f",
                  q.model.c_str(), rate(q.predicted).c_str(), rate(q.observed).c_str(), 100.0 * q.efficiency, q.tokens_needed);
        if (q.k_for_span > 0) o += sfmt("; K >= W/S = %.0f keeps throttling off the span", q.k_for_span);
        if (q.K) o += sfmt(" (K = %llu)", (unsigned long long)q.K);
        o += "\n";
    }

        return o;
    };
    if (r.meta.program_kind == vocab::graph_program) {
        o += graph_text(r.graph);
    } else {
        o += dag_text() + queueing_text();
    }

    // Verdicts.
    o += "\nverdicts\n";
    for (const auto& v : r.verdicts) {
        o += "  * " + v.text + "\n";
        o += "    -> " + v.suggestion + "\n";
        o += sfmt("    at %s..%s from the run's start", dur(static_cast<double>(v.where.begin - std::min(v.where.begin, r.start))).c_str(),
                      dur(static_cast<double>(v.where.end - std::min(v.where.end, r.start))).c_str());
        if (v.where.worker >= 0) o += sfmt(", worker %d", v.where.worker);
        if (v.where.stage >= 0) o += sfmt(", stage %ld", v.where.stage);
        if (v.where.iteration >= 0) o += sfmt(", iteration %lld", v.where.iteration);
        o += sfmt(" [%s]\n", v.rule.c_str());
    }
    return o;
}

}  // namespace pipescope::analysis
