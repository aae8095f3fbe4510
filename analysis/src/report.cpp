// The run report: analyze(), JSON and text (report.hpp).
#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/report.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <string_view>

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
    } else if (r.is_tasks()) {
        // Task groups outside any loop: no iterations, stages or throttle; work and span come
        // from the spawn tree (docs/analysis.md, "Fork-join runs").
        r.dag.workers = P;
    } else {
        // A virtual run's times are its nodes' costs (CPU time, or a recording's) on simulated
        // cores; its serial reference's wall time is another clock (23.6x next to a bound of 12.0):
        // its speedup is T1 / makespan, its own work over its own span (docs/virtual.md).
        r.dag = compute_dag_bounds(scope, P, r.meta.is_virtual() ? std::nullopt : r.meta.reference_seconds);
        r.queueing = compute_queueing(scope, r.meta, r.stats);
    }
    r.tasks = compute_task_stats(scope, r.breakdown, r.stats);
    r.verdicts = r.is_tasks() ? compute_task_verdicts(scope, r.meta, r.breakdown, r.stats, r.tasks)
                              : compute_verdicts(scope, r.meta, r.breakdown, r.stats, r.dag, r.queueing);
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

// An index or worker, -1 when unknown: null then.
template <class T>
json known(T v) {
    return v >= 0 ? json(v) : json(nullptr);
}

json place_json(const place& p) {
    return {{"begin_ns", p.begin},
            {"end_ns", p.end},
            {"worker", known(p.worker)},
            {"stage", known(p.stage)},
            {"iteration", known(p.iteration)}};
}

json split_json(const time_split& t) {
    json j = json::object();
    for (int c = 0; c < time_category_count; ++c) j[std::string(to_string(static_cast<time_category>(c))) + "_ns"] = t.ns[c];
    j["span_ns"] = t.span;
    json f = json::object();
    for (int c = 0; c < time_category_count; ++c)
        f[to_string(static_cast<time_category>(c))] = t.fraction(static_cast<time_category>(c));
    j["fractions"] = f;
    return j;
}

json worker_json(const worker_breakdown& w, int worker) {
    json j = split_json(w.time);
    j["name"] = w.name;
    j["worker"] = known(worker);
    j["nodes"] = w.nodes;
    j["folded_runs"] = w.folded_runs;
    j["steals"] = w.steals;
    j["failed_steals"] = w.failed_steals;
    j["cpu_ns"] = w.cpu_ns ? json(*w.cpu_ns) : json(nullptr);
    j["descheduled_ns"] = w.descheduled_ns ? json(*w.descheduled_ns) : json(nullptr);
    j["descheduled"] = w.descheduled_ns ? json(w.descheduled_fraction()) : json(nullptr);
    j["core_share"] = w.core_share() ? json(*w.core_share()) : json(nullptr);
    return j;
}

// The report's sections, one function each, in the order to_json writes them (docs/analysis.md, "JSON
// schema").

json run_json(const run_report& r) {
    return {{"title", r.title},
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
            {"reference_seconds", opt(r.meta.reference_seconds)},
            // A run on virtual workers: its times are virtual ns (docs/virtual.md).
            {"virtual", r.meta.virtual_run
                            ? json{{"workers", r.meta.virtual_run->workers}, {"job_costs", r.meta.virtual_run->job_costs}}
                            : json(nullptr)}};
}

// The trace's detail level and where trace_detail "auto" decided.
json trace_json(const run_report& r) {
    json decisions = json::array();
    for (const auto& dd : r.stats.detail_decisions)
        decisions.push_back({{"folded", dd.folded},
                             {"mean_node_ns", dd.mean_node_ns},
                             {"nodes_measured", dd.nodes_measured},
                             {"stage", known(dd.stage)},
                             {"at_ns", dd.where.begin},
                             {"worker", known(dd.where.worker)}});
    return {{"detail", r.meta.trace_detail.empty() ? json(nullptr) : json(r.meta.trace_detail)},
            {"fold_below_ns", opt(r.meta.fold_below_ns)},
            {"folded_runs", r.stats.folded_runs},
            {"folded_nodes", r.stats.folded_nodes},
            {"decisions", decisions}};
}

json breakdown_json(const run_breakdown& b) {
    json workers = json::array();
    for (const auto& w : b.workers) workers.push_back(worker_json(w, static_cast<int>(workers.size())));
    json categories = json::array();
    for (int c = 0; c < time_category_count; ++c) categories.push_back(to_string(static_cast<time_category>(c)));
    return {{"categories", categories},
            {"total", worker_json(b.total, -1)},
            {"workers", workers},
            {"stall_derived", b.stall_derived}};
}

json stages_json(const run_stats& st) {
    json stages = json::array();
    for (const auto& s : st.stages)
        stages.push_back({{"index", s.index},
                          {"name", s.name},
                          {"kind", s.kind},
                          {"kind_source", s.kind_source},
                          {"serial", s.serial},
                          {"executions", s.service.count},
                          {"shares", s.shares},
                          {"service_ns",
                           {{"total", s.service.total},
                            {"mean", s.service.mean},
                            {"p50", s.service.p50},
                            {"p95", s.service.p95},
                            {"max", s.service.max}}},
                          {"busy_fraction", s.busy_fraction},
                          {"suspensions", s.suspensions},
                          {"waits", s.waits},
                          {"wait_ns", s.wait_ns},
                          {"longest", place_json(s.longest)}});
    return stages;
}

json steals_json(const run_stats& st) {
    json per_worker = json::array(), pairs = json::array();
    for (const auto& w : st.steals)
        per_worker.push_back({{"worker", w.worker}, {"made", w.made}, {"failed", w.failed}, {"tried", w.tried()}});
    for (const auto& p : st.steal_pairs)
        pairs.push_back({{"thief", p.thief}, {"victim", known(p.victim)}, {"made", p.made}});
    return {{"made", st.steals_made},
            {"failed", st.steals_failed},
            {"tried", st.steals_made + st.steals_failed},
            {"per_worker", per_worker},
            {"pairs", pairs}};
}

json events_json(const run_stats& st) {
    return {{"suspensions", st.suspensions},       {"resumptions", st.resumptions},   {"wakeups", st.wakeups},
            {"throttle_waits", st.throttle_waits}, {"throttled_ns", st.throttled_ns}, {"retire_waits", st.retire_waits},
            {"retire_wait_ns", st.retire_wait_ns}, {"events_lost", st.events_lost}};
}

// Every counter's peak against its limit.
json limits_json(const run_stats& st) {
    json counters = json::array();
    for (const auto& c : st.counters)
        counters.push_back({{"name", c.name},
                            {"peak", c.peak},
                            {"peak_ts_ns", c.peak_ts},
                            {"capacity", opt(c.capacity)},
                            {"capacity_from", c.capacity ? json(c.capacity_from) : json(nullptr)}});
    return {{"peak_live", opt(st.peak_live)},           {"K", opt(st.K)},
            {"peak_tokens", opt(st.peak_tokens)},       {"N", opt(st.N)},
            {"peak_footprint", opt(st.peak_footprint)}, {"counters", counters}};
}

json dag_json(const dag_bounds& d) {
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
    return {{"available", d.available},
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
}

json queueing_json(const queueing_bounds& q) {
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
    return {{"available", q.available},
            {"workers", q.workers},
            {"iterations", q.iterations},
            {"makespan_s", q.makespan},
            {"work_per_item_s", q.work_per_item},
            {"lambda_max", q.lambda_max},
            {"critical_serial_stage", known(q.critical_serial_stage)},
            {"bound_bind_to_element", q.bound_element},
            {"bound_bind_to_stage", q.bound_stage},
            {"bottleneck_stage", known(q.bottleneck_stage)},
            {"model", q.model},
            {"predicted", q.predicted},
            {"observed", q.observed},
            {"efficiency", q.efficiency},
            {"tokens_needed", q.tokens_needed},
            {"k_for_span", q.k_for_span},
            {"K", q.K},
            {"stages", qs}};
}

json verdicts_json(const std::vector<verdict>& vs) {
    json verdicts = json::array();
    for (const auto& v : vs)
        verdicts.push_back({{"rule", v.rule},
                            {"limiting", v.limiting},
                            {"severity", v.severity},
                            {"text", v.text},
                            {"suggestion", v.suggestion},
                            {"where", place_json(v.where)}});
    return verdicts;
}

json tasks_json(const task_stats& t) {
    return {{"tasks", t.tasks},
            {"roots", t.roots},
            {"own_mean_ns", t.own_mean_ns},
            {"own_p50_ns", t.own_p50_ns},
            {"own_p95_ns", t.own_p95_ns},
            {"own_max_ns", t.own_max_ns},
            {"work_ns", t.work_ns},
            {"span_ns", t.spawn_tree ? json(t.span_ns) : json(nullptr)},
            {"parallelism", t.spawn_tree && t.span_ns ? json(t.parallelism()) : json(nullptr)},
            {"depth", t.depth},
            {"steals", t.steals},
            {"scheduling_ns", t.scheduling_ns}};
}

json graph_json(const graph_report& g) {
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
    return {{"available", g.available},
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
}

}   // namespace

nlohmann::json to_json(const run_report& r) {
    json out;
    out["format"] = report_format;
    out["run"] = run_json(r);
    out["trace"] = trace_json(r);
    out["breakdown"] = breakdown_json(r.breakdown);
    out["stages"] = stages_json(r.stats);
    out["steals"] = steals_json(r.stats);
    out["events"] = events_json(r.stats);
    out["limits"] = limits_json(r.stats);
    out["dag"] = dag_json(r.dag);
    out["queueing"] = queueing_json(r.queueing);
    out["verdicts"] = verdicts_json(r.verdicts);
    out["tasks"] = tasks_json(r.tasks);
    out["graph"] = graph_json(r.graph);
    return out;
}

namespace {

using numbers::duration;
using numbers::percent;

// A time of the run as a duration from the run's start.
std::string since_start(std::uint64_t t, const run_report& r) {
    return duration(static_cast<double>(t - std::min(t, r.start)));
}

std::string opt_num(const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("-"); }

// The report's lines, appended to one string.
struct text_out {
    std::string text;
    template <typename... Args>
    void line(fmt::format_string<Args...> f, Args&&... args) {
        fmt::format_to(std::back_inserter(text), f, std::forward<Args>(args)...);
        text += '\n';
    }
    template <typename... Args>
    void add(fmt::format_string<Args...> f, Args&&... args) {
        fmt::format_to(std::back_inserter(text), f, std::forward<Args>(args)...);
    }
};

bool is_graph(const run_report& r) { return r.meta.program_kind == vocab::graph_program; }

void header_text(text_out& o, const run_report& r) {
    o.line("== {}", r.title);
    const std::string makespan = duration(static_cast<double>(r.makespan()));
    if (is_graph(r))   // a stage graph's nodes are parallel instances and serial resumptions, not iterations
        o.add("  makespan {}, {} workers, {} nodes (instances and resumptions)", makespan, r.dag.workers, r.stats.nodes);
    else if (r.is_tasks())   // task groups: no iterations, no nodes
        o.add("  makespan {}, {} workers, {} tasks", makespan, r.dag.workers, r.tasks.tasks);
    else
        o.add("  makespan {}, {} workers, {} iterations, {} nodes", makespan, r.dag.workers, r.stats.iterations,
              r.stats.nodes);
    if (r.meta.K) o.add(", K = {}", r.meta.K);
    if (!r.meta.size.empty()) o.add(", size {}", r.meta.size);
    o.line("");
    if (r.meta.virtual_run)
        o.line("  {}: times are virtual, the run simulated on {} cores (job costs: {}; docs/virtual.md)",
               virtual_badge(r.meta), r.meta.virtual_run->workers, r.meta.virtual_run->job_costs);
}

// One line on what the trace records of the nodes when it is not every node one by one (the run
// metadata's trace.detail "auto" or "folded", or folded slices found): how many folded runs and
// nodes, and where trace_detail auto decided, with the mean node time it measured.
void detail_text(text_out& o, const run_report& r) {
    const run_stats& st = r.stats;
    const std::string& level = r.meta.trace_detail;
    if (level != "auto" && level != "folded" && st.folded_runs == 0) return;
    o.add("  trace detail {}: ", level.empty() ? "folded" : level);
    const auto& dv = st.detail_decisions;
    if (dv.size() == 1) {
        const detail_decision& d = dv.front();
        const std::string at = since_start(d.where.begin, r);
        if (d.folded) o.add("folded from {} on", at);
        else o.add("every node recorded (decided at {})", at);
        o.add(" after {} measured {} nodes at a mean of {}",
              d.where.worker >= 0 ? fmt::format("worker {}", d.where.worker) : std::string(), d.nodes_measured,
              duration(d.mean_node_ns));
        if (const double below = r.meta.fold_below_ns.value_or(0); below > 0)
            o.add(" {} {}", d.folded ? "<" : ">=", duration(below));
        if (d.stage >= 0) o.add(" (stage {})", d.stage);
        o.add("; ");
    } else if (dv.size() > 1) {
        const auto folded =
            static_cast<std::size_t>(std::count_if(dv.begin(), dv.end(), [](const auto& d) { return d.folded; }));
        o.add("decided {} times ({} folded, {} kept every node; first at {}); ", dv.size(), folded, dv.size() - folded,
              since_start(dv.front().where.begin, r));
    } else if (level == "auto") {
        o.add("no decision recorded (the loop ended before auto had measured enough nodes); ");
    }
    if (st.folded_runs)
        o.line("{} folded runs hold {} of the {} nodes ({})", st.folded_runs, st.folded_nodes, st.nodes,
               percent(st.nodes ? static_cast<double>(st.folded_nodes) / static_cast<double>(st.nodes) : 0.0, 1));
    else o.line("no folded runs: every node is its own slice");
}

void breakdown_text(text_out& o, const run_report& r) {
    o.line("\nbreakdown (share of each worker's time; total = all workers)");
    o.add("  {:10}", "");
    for (int c = 0; c < time_category_count; ++c) o.add(" {:>9}", to_string(static_cast<time_category>(c)));
    o.line(" {:>7} {:>7} {:>7}", "nodes", "steals", "failed");
    auto row = [&](const worker_breakdown& w) {
        o.add("  {:<10}", w.name);
        for (int c = 0; c < time_category_count; ++c)
            o.add(" {:>9}", percent(w.time.fraction(static_cast<time_category>(c)), 1));
        o.line(" {:7} {:7} {:7}", w.nodes, w.steals, w.failed_steals);
    };
    for (const auto& w : r.breakdown.workers) row(w);
    row(r.breakdown.total);
    if (!r.breakdown.stall_derived) o.line("  (no line tracks: idle time is not split into idle and stall)");
    if (const auto share = r.breakdown.total.core_share()) {
        o.add("  descheduled (runnable, waiting for a CPU; inside the shares above):");
        for (std::size_t i = 0; i < r.breakdown.workers.size(); ++i)
            o.add("{} {} {}", i ? "," : "", r.breakdown.workers[i].name,
                  percent(r.breakdown.workers[i].descheduled_fraction(), 1));
        o.line("; the workers got {} of a core", percent(*share, 1));
    }
    if (r.stats.folded_runs)
        o.line("  (nodes: a folded run counts the nodes it holds; the stage boundaries inside a folded run are inside "
               "its slice, so they count as work, not scheduler)");
}

// The stages the tables list. Many stages (pipe-fib has hundreds): the ones with the most service
// time, in stage order; the others are summed up in one line.
struct stage_rows {
    static constexpr std::size_t max_rows = 16, shown_rows = 12;
    std::vector<std::uint64_t> shown;   // stage indices, sorted
    std::uint64_t hidden = 0, hidden_runs = 0;
    double hidden_busy = 0;
    bool is_shown(std::uint64_t j) const { return std::binary_search(shown.begin(), shown.end(), j); }
};

stage_rows stage_rows_of(const run_stats& st) {
    stage_rows rows;
    std::vector<const stage_stats*> v;
    for (const auto& s : st.stages) v.push_back(&s);
    if (v.size() > stage_rows::max_rows) {
        std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->service.total > b->service.total; });
        v.resize(stage_rows::shown_rows);
    }
    for (auto* s : v) rows.shown.push_back(s->index);
    std::sort(rows.shown.begin(), rows.shown.end());
    for (const auto& s : st.stages)
        if (!rows.is_shown(s.index)) ++rows.hidden, rows.hidden_runs += s.service.count, rows.hidden_busy += s.busy_fraction;
    return rows;
}

void stages_text(text_out& o, const run_report& r, const stage_rows& rows) {
    o.line("\nstages");
    o.line("  {:5} {:28} {:9} {:>8} {:>11} {:>11} {:>11} {:>11} {:>7} {:>7} {:>8}", "stage", "name", "kind", "runs", "mean",
           "p50", "p95", "max", "busy", "susp", "waits");
    for (const auto& s : r.stats.stages) {
        if (!rows.is_shown(s.index)) continue;
        const std::string name = s.name.size() > 28 ? s.name.substr(0, 27) + "~" : s.name;
        const std::string kind = s.kind.empty() ? (s.serial ? "serial?" : "parallel?") : s.kind;
        o.line("  {:<5} {:<28} {:<9} {:7}{} {:>11} {:>11} {:>11} {:>11} {:>7} {:7} {:8}", s.index, name, kind,
               s.service.count, s.shares ? '*' : ' ', duration(s.service.mean), duration(static_cast<double>(s.service.p50)),
               duration(static_cast<double>(s.service.p95)), duration(static_cast<double>(s.service.max)),
               percent(s.busy_fraction, 1), s.suspensions, s.waits);
    }
    if (rows.hidden)
        o.line("  ... {} more stages ({} runs, {} busy together; --json lists every stage)", rows.hidden, rows.hidden_runs,
               percent(rows.hidden_busy, 1));
    o.line("  (busy: the stage's total service time / makespan; above 100 % for a parallel stage = more than one worker "
           "on average)");
    if (r.stats.folded_runs)
        o.line("  (* runs inside folded runs: each node gets an equal share of its folded run's time, so mean, p50, p95 "
               "and max there are shares, not measured node times; totals and busy are exact)");
}

// Who stole from whom: " thief<-victim: 0<-1:19 1<-0:21".
void steal_pairs_text(text_out& o, const run_stats& st) {
    if (st.steal_pairs.empty()) return;
    o.add(" thief<-victim:");
    for (const auto& p : st.steal_pairs)
        o.add(" {}<-{}:{}", p.thief, p.victim >= 0 ? std::to_string(p.victim) : "?", p.made);
}

// Steals, suspensions and the other events; a pipeline's limits and counters.
void events_text(text_out& o, const run_report& r) {
    const run_stats& st = r.stats;
    o.add("\nsteals {} made of {} tried;", st.steals_made, st.steals_made + st.steals_failed);
    steal_pairs_text(o, st);
    o.line("");
    o.line("suspensions {}, resumptions {}, wake-ups {}, throttle waits {} ({}), retire waits {} ({})", st.suspensions,
           st.resumptions, st.wakeups, st.throttle_waits, duration(static_cast<double>(st.throttled_ns)), st.retire_waits,
           duration(static_cast<double>(st.retire_wait_ns)));
    if (st.events_lost) o.line("WARNING: {} events were lost while recording", st.events_lost);
    if (is_graph(r)) return;   // a graph's limits and counters are its queues and footprint (graph_text)
    o.add("limits: peak live {} of K {}", opt_num(st.peak_live), opt_num(st.K));
    if (st.peak_tokens) o.add(", tokens {} of N {}", opt_num(st.peak_tokens), opt_num(st.N));
    if (st.peak_footprint) o.add(", peak footprint {}", numbers::bytes(*st.peak_footprint));
    o.line("");
    for (const auto& c : st.counters)
        o.line("  counter {:<24} peak {:<8g}{}", c.name, c.peak,
               c.capacity ? fmt::format(" of {:g} ({})", *c.capacity, c.capacity_from) : std::string());
}

// A fork-join run: its tasks, their own time, and work, span and parallelism of the spawn tree.
void tasks_text(text_out& o, const run_report& r) {
    const task_stats& t = r.tasks;
    const auto ns = [](auto v) { return duration(static_cast<double>(v)); };
    o.line("\ntasks {} ({} spawned outside any task), own time per task: mean {}, p50 {}, p95 {}, max {}",
           numbers::count(t.tasks), numbers::count(t.roots), ns(t.own_mean_ns), ns(t.own_p50_ns), ns(t.own_p95_ns),
           ns(t.own_max_ns));
    if (t.spawn_tree)
        o.line("work T1 {}, span T\u221e {}, parallelism T1/T\u221e {} (spawn tree depth {}; docs/analysis.md, "
               "\"Fork-join runs\")",
               ns(t.work_ns), ns(t.span_ns), t.span_ns ? numbers::fixed(t.parallelism(), 2) : std::string("-"), t.depth);
    else o.line("work T1 {}; span unknown: the task slices name no parent (a trace of an older version)", ns(t.work_ns));
    const run_stats& st = r.stats;
    o.add("steals {} made of {} tried", st.steals_made, st.steals_made + st.steals_failed);
    steal_pairs_text(o, st);
    o.line("; the workers spent {} between tasks ({} per task)", ns(t.scheduling_ns), ns(t.scheduling_per_task_ns()));
    if (st.events_lost) o.line("WARNING: {} events were lost while recording", st.events_lost);
}

// The critical path: its size, its time by stage, its edges, then its first max_path nodes.
void critical_path_text(text_out& o, const dag_bounds& d, std::size_t max_path) {
    const auto& path = d.with_throttle.critical_path;
    std::map<std::string, std::uint64_t> per_edge;
    std::size_t folded_on_path = 0;
    for (const auto& n : path) ++per_edge[to_string(n.via)], folded_on_path += n.nodes > 1;
    if (folded_on_path)
        o.add("  critical path: {} nodes in {} blocks ({} folded runs), {} throttling edges; time by stage (shares):",
              path_nodes(d.with_throttle), path.size(), folded_on_path, d.with_throttle.throttle_edges_on_path);
    else
        o.add("  critical path: {} nodes, {} throttling edges; time by stage:", path.size(),
              d.with_throttle.throttle_edges_on_path);
    constexpr std::size_t stages_listed = 6;
    const auto by_time = path_time_by_stage(d.with_throttle);
    for (std::size_t i = 0; i < by_time.size() && i < stages_listed; ++i)
        o.add(" stage {} {}", by_time[i].first,
              percent(d.with_throttle.span
                          ? static_cast<double>(by_time[i].second) / static_cast<double>(d.with_throttle.span)
                          : 0.0));
    if (by_time.size() > stages_listed) o.add(" (+{} stages)", by_time.size() - stages_listed);
    o.add("; edges:");
    for (const auto& [k, n] : per_edge) o.add(" {} {}", k, n);
    o.add("\n   ");
    for (std::size_t i = 0; i < path.size() && i < max_path; ++i) {
        o.add(" {}({},{}", i ? "-> " : "", path[i].iteration, path[i].stage);
        if (path[i].last_stage > path[i].stage) o.add("\xE2\x80\x93{})", path[i].last_stage);   // "(i,j–k)": a folded block
        else o.add(")");
    }
    if (path.size() > max_path) o.add(" ... {} more", path.size() - max_path);
    o.line("");
}

void dag_text(text_out& o, const dag_bounds& d, std::size_t max_path) {
    o.line("\nDAG bounds ({} weight = measured duration{})", d.approximate ? "block" : "node",
           d.approximate ? " of a node or of a folded run" : "");
    if (!d.available) return o.line("  no pipeline DAG in this run");
    if (d.approximate) o.line("  approximate: {}", d.approximate_reason);
    const char* at_most = d.approximate ? "<= " : "";
    const char* at_least = d.approximate ? ">= " : "";
    o.line("  work T1 {}; span Tinf {}{} (without throttling edges {}{}, ratio {:.2f})",
           duration(static_cast<double>(d.work)), at_most, duration(static_cast<double>(d.with_throttle.span)), at_most,
           duration(static_cast<double>(d.without_throttle.span)),
           d.without_throttle.span ? static_cast<double>(d.with_throttle.span) / static_cast<double>(d.without_throttle.span)
                                   : 0.0);
    o.line(
        "  parallelism T1/Tinf {}{:.2f} (unthrottled {}{:.2f}); speedup bound min(P, T1/Tinf) {} {:.2f}; observed {:.2f} ({})",
        at_least, d.parallelism, at_least, d.parallelism_unthrottled, d.approximate ? ">=" : "=", d.speedup_bound,
        d.observed_speedup, d.observed_from_reference ? "serial reference / makespan" : "T1 / makespan");
    critical_path_text(o, d, max_path);
}

// The seed-000 queueing model: per-stage rates under both models, the bounds, the prediction.
void queueing_text(text_out& o, const queueing_bounds& q, const stage_rows& rows) {
    o.line("\nqueueing bounds (seed 000 §3; items/s)");
    if (!q.available) return o.line("  not available (no timed stages or iterations)");
    o.line("  {:5} {:9} {:>12} {:>9} {:>12} {:>9} {:>12}", "stage", "kind", "Tser/item", "c (ws)", "c/Tser (ws)", "c (bts)",
           "c/Tser (bts)");
    for (const auto& s : q.stages)
        if (rows.is_shown(s.index))
            o.line("  {:<5} {:9} {:>12} {:9.2f} {:>12} {:9.2f} {:>12}", s.index, s.serial ? "serial" : "parallel",
                   duration(s.tser * 1e9), s.c_element, numbers::rate(s.rate_element), s.c_stage,
                   numbers::rate(s.rate_stage));
    if (rows.hidden) o.line("  ... the other stages: see --json");
    o.line("  lambda_max = 1/max(T serial) = {} (stage {}); work per item W = {}", numbers::rate(q.lambda_max),
           q.critical_serial_stage, duration(q.work_per_item * 1e9));
    o.line("  bound bind-to-element min(P/W, lambda_max) = {}; bind-to-stage min(c_i/Tser_i, P/W) = {} ({})",
           numbers::rate(q.bound_element), numbers::rate(q.bound_stage),
           q.bottleneck_stage >= 0 ? fmt::format("stage {}", q.bottleneck_stage) : "P/W: the cores");
    o.add("  predicted ({}) {}, observed {} ({} of predicted); items in flight needed ~{:.1f}", q.model,
          numbers::rate(q.predicted), numbers::rate(q.observed), percent(q.efficiency), q.tokens_needed);
    if (q.k_for_span > 0) o.add("; K >= W/S = {:.0f} keeps throttling off the span", q.k_for_span);
    if (q.K) o.add(" (K = {})", q.K);
    o.line("");
}

// A stage graph's queues and footprint (seed 004 Table III: average and maximum footprint).
void graph_text(text_out& o, const graph_report& g) {
    o.line("\nqueues (stage graph; packets in use, time-weighted mean and peak)");
    if (!g.available) return o.line("  not available (the run recorded no footprint counters)");
    o.line("  {:24} {:>9} {:>9} {:>10}  ", "queue", "mean", "peak", "capacity");
    for (const auto& q : g.queues) {
        std::string notes;
        if (q.unbounded) notes += " unbounded";
        if (q.backward) notes += " backward";
        if (q.ordered) notes += " ordered";
        if (q.over_capacity) notes += " OVER CAPACITY";
        o.line("  {:<24} {:9.2f} {:9.0f} {:10.0f} {}", q.name, q.mean_packets, q.peak_packets, q.capacity_packets, notes);
    }
    o.line("  footprint: mean {:.1f} packets ({}), peak {:.0f} packets ({}){}", g.mean_packets, numbers::bytes(g.mean_bytes),
           g.peak_packets, numbers::bytes(g.peak_bytes),
           g.footprint_derived ? "; the sum of the queue counters (exact peak: `pipescope run`'s output)" : "");
    o.line("  stages stopped by a queue: {} full (backpressure), {} empty, {} waiting for commit order; {} preemptions",
           g.blocked_full, g.blocked_empty, g.blocked_order, g.preemptions);
    if (g.queue_operations)
        o.line("  queue operations recorded: {} reserves and commits (every one at trace detail nodes; only the refused "
               "reserves at auto and folded)",
               g.queue_operations);
}

void verdicts_text(text_out& o, const run_report& r) {
    o.line("\nverdicts");
    for (const auto& v : r.verdicts) {
        o.line("  * {}", v.text);
        o.line("    -> {}", v.suggestion);
        o.add("    at {}..{} from the run's start", since_start(v.where.begin, r), since_start(v.where.end, r));
        if (v.where.worker >= 0) o.add(", worker {}", v.where.worker);
        if (v.where.stage >= 0) o.add(", stage {}", v.where.stage);
        if (v.where.iteration >= 0) o.add(", iteration {}", v.where.iteration);
        o.line(" [{}]", v.rule);
    }
}

}   // namespace

std::string to_text(const run_report& r, std::size_t max_path) {
    const stage_rows rows = stage_rows_of(r.stats);
    text_out o;
    header_text(o, r);
    if (!r.is_tasks()) detail_text(o, r);   // trace detail is about pipeline nodes
    breakdown_text(o, r);
    if (r.is_tasks()) {   // no stages, iterations or throttle: the tasks instead
        tasks_text(o, r);
        verdicts_text(o, r);
        return std::move(o.text);
    }
    stages_text(o, r, rows);
    events_text(o, r);
    if (is_graph(r)) {
        graph_text(o, r.graph);
    } else {   // DAG bounds and the queueing model: pipelines only
        dag_text(o, r.dag, max_path);
        queueing_text(o, r.queueing, rows);
    }
    verdicts_text(o, r);
    return std::move(o.text);
}

}   // namespace pipescope::analysis
