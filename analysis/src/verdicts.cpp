// The verdict rules (verdicts.hpp; docs/analysis.md, "Verdicts"): one function per rule, listed in
// two tables (limits, cautions), and compute_verdicts, which runs the tables and orders what they find.
#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/verdicts.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace pipescope::analysis {

namespace {

// Items per second in a sentence: "97087 items/s", "12.5 items/s".
std::string items_per_second(double r) {
    return r >= 100 ? fmt::format("{:.0f} items/s", r) : fmt::format("{:.3g} items/s", r);
}

// "stage 2", or "stage 2 'output'" when the stage has a name.
std::string stage_label(std::uint64_t index, const std::string& name) {
    return name.empty() ? fmt::format("stage {}", index) : fmt::format("stage {} '{}'", index, name);
}

constexpr std::uint32_t no_track = tm::no_index;   // a place that selects no track

verdict limit(std::string rule, double severity) {
    verdict v;
    v.rule = std::move(rule);
    v.severity = severity;
    return v;
}

verdict caution(std::string rule) {
    verdict v = limit(std::move(rule), 1);
    v.limiting = false;
    return v;
}

// A setting the advice asks to change, phrased for how the run was recorded (docs/analysis.md,
// "Advice for how the run was recorded"): a `pipescope run` user changes options, a PIPESCOPE_TRACE
// user environment variables, a program with its own trace_session its code. Traces without
// "recorded_by" (older ones) came from `pipescope run`, whose options the advice used to name.
enum class setting { throttle, stage_threads, trace_buffer, detail_nodes };

std::string how_to_set(const run_meta& meta, setting what) {
    const bool environment = meta.recorded_by == "PIPESCOPE_TRACE";
    const bool code = environment || meta.recorded_by == "trace_session";
    switch (what) {
        case setting::throttle: return code ? "pipeline_options::throttle" : "--param K=...";
        case setting::stage_threads: return code ? "pipeline_options::stage_threads" : "--param c=...";
        case setting::trace_buffer:
            return environment ? "PIPESCOPE_TRACE_BUFFER=MiB"
                   : code      ? "trace_session_options::buffer_mib"
                               : "--trace-buffer MiB";
        case setting::detail_nodes:
            return environment ? "PIPESCOPE_TRACE_DETAIL=nodes"
                   : code      ? "trace_session_options::detail = pipescope::trace::trace_detail::nodes"
                               : "--trace-detail nodes";
    }
    return {};
}

place whole_run(const run_scope& r) {
    place p;
    p.begin = r.start;
    p.end = r.end;
    return p;
}

// The whole run, on the track of the worker that spent the most time in `category`.
place worker_with_most(const run_scope& r, const run_breakdown& b, time_category category) {
    place p = whole_run(r);
    std::uint64_t most = 0;
    for (const auto& w : b.workers)
        if (w.time[category] >= most) {
            most = w.time[category];
            p.track = w.track;
            p.worker = r.model->tracks[w.track].worker;
        }
    return p;
}

// The longest waiting (or throttled) state on the lines for `stage` (-1: to retire, -2: throttled).
place longest_wait(const run_scope& r, long stage) {
    const tm::trace_model& m = *r.model;
    place best = whole_run(r);
    std::uint64_t best_d = 0;
    for (auto ti : r.lines)
        for (const tm::slice& s : m.tracks[ti].slices) {
            const bool match =
                stage == -2 ? s.kind == slice_kind::throttled : s.kind == slice_kind::waiting && m.stage_of(s.name) == stage;
            if (!match || s.duration() < best_d) continue;
            best_d = s.duration();
            best = {s.begin, s.end, -1, stage >= 0 ? stage : -1, -1, ti};
            if (auto it = m.uint_arg(s, vocab::arg_key::iteration)) best.iteration = static_cast<long long>(*it);
        }
    return best;
}

// --- limits ---------------------------------------------------------------------------------------

// A serial stage busy most of the run: the pipeline cannot go faster than it.
std::vector<verdict> serial_bottleneck(const verdict_inputs& in) {
    std::vector<verdict> out;
    for (const auto& s : in.stats.stages) {
        if (!s.serial || s.service.count == 0 || s.busy_fraction < threshold::serial_busy) continue;
        verdict v = limit("serial_bottleneck", s.busy_fraction);
        v.text =
            fmt::format("serial {} was busy {} of the run", stage_label(s.index, s.name), numbers::percent(s.busy_fraction));
        for (const auto& sr : in.queueing.stages)
            if (sr.index == s.index && sr.tser > 0)
                v.text += fmt::format("; it bounds throughput at 1/T{} = {}", s.index, items_per_second(1.0 / sr.tser));
        if (in.queueing.available) v.text += "; observed " + items_per_second(in.queueing.observed);
        v.suggestion = "collapse it with a neighbouring stage's work elsewhere, make it cheaper, or parallelize it";
        v.where = whole_run(in.scope);
        v.where.stage = static_cast<long>(s.index);
        v.where.worker = s.longest.worker;
        v.where.iteration = s.longest.iteration;
        out.push_back(std::move(v));
    }
    return out;
}

// Throttling stretched the span enough to matter, and the workers were not busy anyway (busy
// workers ran at T1/P, whatever the span says). low_parallelism reads it too.
bool throttle_limits(const verdict_inputs& in) {
    return in.span_known() && in.dag.K && in.throttle_span_ratio() >= threshold::throttle_span_ratio &&
           in.dag.parallelism < threshold::parallel_slack * in.workers() &&
           in.fraction(time_category::work) < threshold::busy_enough;
}

std::vector<verdict> throttle_limited(const verdict_inputs& in) {
    if (!throttle_limits(in)) return {};
    const dag_bounds& dag = in.dag;
    const double span_ratio = in.throttle_span_ratio();
    verdict v = limit("throttle_limited", 1.0 - 1.0 / span_ratio);
    v.text = fmt::format("throttle K = {} limited parallelism: span with throttling edges is {} the span without "
                         "(parallelism {:.2f} instead of {:.2f}; {} throttling edges on the critical path)",
                         dag.K, numbers::ratio(span_ratio, 1), dag.parallelism, dag.parallelism_unthrottled,
                         dag.with_throttle.throttle_edges_on_path);
    v.suggestion = fmt::format("raise K ({})", how_to_set(in.meta, setting::throttle));
    if (in.queueing.k_for_span > static_cast<double>(dag.K))
        v.suggestion += fmt::format("; from K >= W/S = {:.0f} throttling no longer lengthens the span (seed 001 §11)",
                                    in.queueing.k_for_span);
    v.where = whole_run(in.scope);
    for (const auto& pn : dag.with_throttle.critical_path)
        if (pn.via == path_edge::throttle) {
            v.where = {pn.begin, pn.end, pn.worker, static_cast<long>(pn.stage), static_cast<long long>(pn.iteration),
                       no_track};
            break;
        }
    return {v};
}

// Not enough parallelism in the DAG for P workers (unless the throttle alone is to blame: then
// throttle_limited said so).
std::vector<verdict> low_parallelism(const verdict_inputs& in) {
    const dag_bounds& dag = in.dag;
    const double P = in.workers();
    if (!in.span_known() || dag.parallelism <= 0 || dag.parallelism >= P) return {};
    if (throttle_limits(in) && dag.parallelism_unthrottled >= P) return {};
    verdict v = limit("low_parallelism", 1.0 - dag.parallelism / P);
    v.text = fmt::format("the pipeline DAG has parallelism T1/Tinf = {0:.2f} < P = {1}: no scheduler can run it more than "
                         "{0:.2f}\xC3\x97 faster than its work",
                         dag.parallelism, static_cast<std::uint64_t>(P));
    // Which stage the critical path spends most time in (a folded block's time shared among its stages).
    const auto per_stage = path_time_by_stage(dag.with_throttle);
    const auto top = per_stage.begin();
    if (top != per_stage.end() && dag.with_throttle.span)
        v.text +=
            fmt::format("; the critical path spends {} of its length in stage {}",
                        numbers::percent(static_cast<double>(top->second) / static_cast<double>(dag.with_throttle.span)),
                        top->first);
    v.suggestion = "shorten the stages on the critical path (serial ones first), or give each iteration more parallel work; "
                   "more workers will not help";
    v.where = whole_run(in.scope);
    if (!dag.with_throttle.critical_path.empty()) {
        v.where.begin = dag.with_throttle.critical_path.front().begin;
        v.where.end = dag.with_throttle.critical_path.back().end;
    }
    if (top != per_stage.end()) v.where.stage = static_cast<long>(top->first);
    return {v};
}

// Workers idle while iterations waited at a stage_wait, to retire, or for the throttle.
std::vector<verdict> stall_heavy(const verdict_inputs& in) {
    const double stall = in.fraction(time_category::stall);
    if (stall < threshold::stall) return {};
    const run_stats& st = in.stats;
    verdict v = limit("stall_heavy", stall);
    long worst = -1;
    std::uint64_t worst_ns = 0, worst_waits = 0;
    for (const auto& s : st.stages)
        if (s.wait_ns > worst_ns) worst_ns = s.wait_ns, worst = static_cast<long>(s.index), worst_waits = s.waits;
    v.text = "workers idled " + numbers::percent(stall);
    if (worst >= 0 && worst_ns >= st.retire_wait_ns && worst_ns >= st.throttled_ns) {
        v.text += fmt::format(" waiting at stage_wait({}) ({} waits)", worst, worst_waits);
        v.where = longest_wait(in.scope, worst);
        v.suggestion = fmt::format("the cross edge into stage {} serializes iterations: shorten what precedes it in "
                                   "iteration i-1, or drop the wait if the dependency allows",
                                   worst);
    } else if (st.throttled_ns >= st.retire_wait_ns) {
        v.text += fmt::format(" while the loop was throttled at K = {}", in.meta.K);
        v.where = longest_wait(in.scope, -2);
        v.suggestion = "raise K so that more iterations can be in flight";
    } else {
        v.text += " while iterations waited to retire in order";
        v.where = longest_wait(in.scope, -1);
        v.suggestion = "a long iteration holds back the ones after it: balance per-iteration work";
    }
    return {v};
}

// A thread blocked on a queue (bind-to-stage backpressure) much of the run: its consumers (or its
// producers) cannot keep up. One verdict per such thread.
std::vector<verdict> blocked_heavy(const verdict_inputs& in) {
    std::vector<verdict> out;
    const run_scope& r = in.scope;
    const tm::trace_model& m = *r.model;
    const double span = static_cast<double>(std::max<std::uint64_t>(1, r.makespan()));
    for (auto ti : r.workers) {
        const tm::track& t = m.tracks[ti];
        std::uint64_t blocked = 0, longest = 0;
        const tm::slice* worst = nullptr;
        for (const tm::slice& s : t.slices) {
            if (s.kind != slice_kind::blocked) continue;
            blocked += s.duration();
            if (!worst || s.duration() > longest) worst = &s, longest = s.duration();
        }
        const double f = static_cast<double>(blocked) / span;
        if (!worst || f < threshold::stall) continue;
        const std::string& worst_name = m.str(worst->name);
        verdict v = limit("blocked_heavy", f);
        v.text = fmt::format("'{}' was blocked {} of the run ({})", t.name, numbers::percent(f), worst_name);
        // "blocked: queue j full": the fill of "queue j fill"
        const auto qp = worst_name.find(vocab::queue_prefix);
        if (const auto q = qp == std::string::npos
                               ? std::nullopt
                               : vocab::leading_number(std::string_view(worst_name).substr(qp), vocab::queue_prefix)) {
            for (const auto& c : in.stats.counters)
                if (vocab::leading_number(c.name, vocab::queue_prefix) == q) {
                    v.text += fmt::format("; its peak fill was {:g}", c.peak);
                    if (c.capacity) v.text += fmt::format(" of {:g}", *c.capacity);
                }
        }
        v.suggestion =
            worst_name.find(vocab::queue_full_suffix.substr(1)) != std::string::npos   // the word "full" anywhere
                ? "the stages after it cannot keep up: give them more threads (--param c=...), collapse stages, or "
                  "use a work-stealing policy; a larger queue (--param queue=...) only absorbs bursts"
                : "it waits on its neighbours: balance the stages' service times";
        v.where = {worst->begin, worst->end, t.worker, t.stage, -1, ti};
        if (auto it = m.uint_arg(*worst, vocab::arg_key::iteration)) v.where.iteration = static_cast<long long>(*it);
        out.push_back(std::move(v));
    }
    return out;
}

// Time looking for work (idle or stealing).
double looking_for_work(const verdict_inputs& in) {
    return in.fraction(time_category::idle) + in.fraction(time_category::stealing);
}

bool bound_threads(const verdict_inputs& in) {
    return vocab::classify_policy(in.meta.policy) == vocab::policy_family::bound_threads;
}

// Bound threads do not steal: their time looking for work is waiting on an empty input queue.
std::vector<verdict> input_starved(const verdict_inputs& in) {
    const double idle = looking_for_work(in);
    if (idle < threshold::idle || !bound_threads(in)) return {};
    verdict v = limit("input_starved", idle);
    v.text = fmt::format("threads spent {} of their time waiting for input (empty queues)", numbers::percent(idle));
    v.where = whole_run(in.scope);
    const stage_rate* slow = nullptr;
    for (const auto& sr : in.queueing.stages)
        if (sr.rate_stage > 0 && (!slow || sr.rate_stage < slow->rate_stage)) slow = &sr;
    if (slow) {
        v.text += fmt::format("; the slowest stage is {} at c/Tser = {}", stage_label(slow->index, slow->name),
                              items_per_second(slow->rate_stage));
        v.where.stage = static_cast<long>(slow->index);
    }
    v.suggestion = fmt::format("give the slowest stage more threads ({}) or collapse stages (seed 000 §3.1), or use a "
                               "work-stealing policy, which balances the load itself",
                               how_to_set(in.meta, setting::stage_threads));
    return {v};
}

// Work-stealing workers looking for work much of their time.
std::vector<verdict> steal_heavy(const verdict_inputs& in) {
    const double idle = looking_for_work(in);
    if (idle < threshold::idle || bound_threads(in)) return {};
    verdict v = limit("steal_heavy", idle);
    v.text = fmt::format("workers spent {} of their time looking for work ({} steals made, {} failed attempts recorded)",
                         numbers::percent(idle), in.stats.steals_made, in.stats.steals_failed);
    if (in.dag.available && in.dag.parallelism >= in.workers()) {
        v.text += fmt::format("; the DAG's parallelism {:.2f} >= P, so the work existed but thieves did not find it",
                              in.dag.parallelism);
        v.suggestion = "the parallel work sat where thieves could not take it: check that ready iterations are "
                       "exposed (stealable) promptly, e.g. lazy enabling, or raise K";
    } else {
        v.suggestion = "more parallel slack: more iterations in flight (raise K), or coarser, fewer nodes";
    }
    v.where = worker_with_most(in.scope, in.breakdown, time_category::idle);
    return {v};
}

// Workers asleep much of their time.
std::vector<verdict> parked_heavy(const verdict_inputs& in) {
    const double parked = in.fraction(time_category::parked);
    if (parked < threshold::parked) return {};
    verdict v = limit("parked_heavy", parked);
    v.text = fmt::format("workers slept (parked) {} of their time; {} wake-ups", numbers::percent(parked), in.stats.wakeups);
    v.suggestion = "the run has too little parallel work for P workers: use fewer workers, or expose more parallelism";
    v.where = worker_with_most(in.scope, in.breakdown, time_category::parked);
    return {v};
}

// Scheduling (and queue operations) took much of the workers' time: nodes too fine-grained.
std::vector<verdict> scheduler_heavy(const verdict_inputs& in) {
    const double sched = in.fraction(time_category::scheduler) + in.fraction(time_category::queue);
    if (sched < threshold::scheduler) return {};
    const worker_breakdown& total = in.breakdown.total;
    verdict v = limit("scheduler_heavy", sched);
    v.text = fmt::format("scheduling overhead took {} of worker time", numbers::percent(sched));
    if (total.nodes && total.time[time_category::work])
        v.text +=
            fmt::format("; nodes ran {:.2f} \xC2\xB5s on average",
                        static_cast<double>(total.time[time_category::work]) / static_cast<double>(total.nodes) * 1e-3);
    if (total.folded_runs)
        v.text +=
            " (a folded trace: the stage boundaries inside folded runs count as work, so the overhead is larger than this)";
    v.suggestion = "nodes are too fine-grained: put more work in each stage (or each iteration)";
    v.where = whole_run(in.scope);
    return {v};
}

// --- cautions -------------------------------------------------------------------------------------

// Events were lost while recording.
std::vector<verdict> events_lost(const verdict_inputs& in) {
    if (!in.stats.events_lost) return {};
    verdict v = caution("events_lost");
    v.text = fmt::format("{} events were lost while recording (the writer fell behind): slices around the losses were "
                         "closed where the loss was marked, so durations, service times and the DAG there are unreliable",
                         in.stats.events_lost);
    v.suggestion = fmt::format("record again with a bigger buffer ({})", how_to_set(in.meta, setting::trace_buffer));
    v.where = in.stats.first_loss;
    return {v};
}

// A folded trace (docs/analysis.md, "Folded traces"): the span rules were not applied.
std::vector<verdict> folded_trace(const verdict_inputs& in) {
    if (!in.dag.approximate) return {};
    const run_stats& st = in.stats;
    verdict v = caution("folded_trace");
    v.text = fmt::format("folded trace: {} folded runs hold {} of the {} nodes, so the DAG's span is only bounded from "
                         "above (T1/Tinf >= {:.2f}) and per-node times are shares of their folded run: whether the DAG's "
                         "parallelism or the throttle limited this run cannot be told from this trace (those rules are "
                         "not applied)",
                         st.folded_runs, st.folded_nodes, st.nodes, in.dag.parallelism);
    // Per-stage totals are equal shares of slices over several stages: up to this much of the time
    // may be counted in another stage than the one that spent it (run_stats::folded_misplaceable_ns).
    if (st.folded_misplaceable_ns > 0)
        v.text += fmt::format("; per-stage times are equal shares of each folded slice, so up to {} ({} of the work) "
                              "may be counted in another stage than the one that spent it",
                              numbers::duration(st.folded_misplaceable_ns),
                              numbers::percent(in.dag.work > 0 ? st.folded_misplaceable_ns / static_cast<double>(in.dag.work)
                                                               : 0));
    // Folding pays for nodes shorter than a clock read or two; above the auto threshold it only blurs.
    const double mean_folded_node = st.folded_nodes ? st.folded_ns / static_cast<double>(st.folded_nodes) : 0;
    const double pays_below = in.meta.fold_below_ns.value_or(2000);
    if (mean_folded_node > 10 * pays_below)
        v.text += fmt::format("; the folded nodes average {}, far above the {} below which folding saves recording cost "
                              "(auto would have recorded every node): here it only blurs the stages",
                              numbers::duration(mean_folded_node), numbers::duration(pays_below));
    v.suggestion =
        fmt::format("record again with {} to measure the span, the critical path and per-node times{}",
                    how_to_set(in.meta, setting::detail_nodes),
                    mean_folded_node > 10 * pays_below ? ""
                                                       : " (a larger trace, and slower to record for nodes this short)");
    v.where = whole_run(in.scope);
    for (const auto& d : st.detail_decisions)
        if (d.folded) {
            v.where = d.where;
            v.where.end = in.scope.end;
            break;
        }
    return {v};
}

// The workers did not get their cores (docs/analysis.md, "Descheduled time"): the machine was busy.
std::vector<verdict> busy_machine(const verdict_inputs& in) {
    const std::optional<double> share = in.breakdown.total.core_share();
    if (!share || *share >= threshold::busy_machine_core_share) return {};
    verdict v = caution("busy_machine");
    v.severity = 1.0 - *share;
    const worker_breakdown& t = in.breakdown.total;
    v.text = fmt::format("workers got {} of a core each: the machine was busy (they waited for a CPU {} of their time, "
                         "which their wall-clock node times include); this run says nothing about more workers",
                         numbers::percent(*share), numbers::percent(t.descheduled_fraction()));
    v.suggestion = "record again on a quiet machine (or with at most as many workers as idle cores)";
    v.where = whole_run(in.scope);
    return {v};
}

constexpr verdict_rule limits[] = {
    {"serial_bottleneck", serial_bottleneck},
    {"throttle_limited", throttle_limited},
    {"low_parallelism", low_parallelism},
    {"stall_heavy", stall_heavy},
    {"blocked_heavy", blocked_heavy},
    {"input_starved", input_starved},
    {"steal_heavy", steal_heavy},
    {"parked_heavy", parked_heavy},
    {"scheduler_heavy", scheduler_heavy},
};

constexpr verdict_rule cautions[] = {
    {"busy_machine", busy_machine},
    {"events_lost", events_lost},
    {"folded_trace", folded_trace},
};

}   // namespace

double verdict_inputs::workers() const {
    return static_cast<double>(dag.workers ? dag.workers : std::max<std::size_t>(1, scope.workers.size()));
}

double verdict_inputs::fraction(time_category c) const { return breakdown.total.time.fraction(c); }

double verdict_inputs::throttle_span_ratio() const {
    return dag.available && dag.without_throttle.span
               ? static_cast<double>(dag.with_throttle.span) / static_cast<double>(dag.without_throttle.span)
               : 1.0;
}

std::span<const verdict_rule> limit_rules() { return limits; }

std::span<const verdict_rule> caution_rules() { return cautions; }

const verdict_rule* find_verdict_rule(std::string_view id) {
    for (auto table : {limit_rules(), caution_rules()})
        for (const verdict_rule& rule : table)
            if (rule.id == id) return &rule;
    return nullptr;
}

verdict nothing_limiting(const verdict_inputs& in) {
    const dag_bounds& dag = in.dag;
    const double work = in.fraction(time_category::work);
    const bool balanced = work >= threshold::balanced_work;
    verdict v;
    v.limiting = false;
    v.rule = balanced ? "balanced" : "no_single_limit";
    v.severity = 0;
    v.text = fmt::format("{}: workers worked {} of their time", balanced ? "balanced" : "no single limit",
                         numbers::percent(work));
    if (dag.available)
        v.text += fmt::format("; observed speedup {:.2f} against a bound of {}{:.2f}", dag.observed_speedup,
                              dag.approximate ? "at least " : "", dag.speedup_bound);
    // Throttling edges lengthen the span: below P that already costs this run parallelism, above it
    // only more workers would feel it.
    if (in.span_known() && dag.K && in.throttle_span_ratio() >= threshold::throttle_span_ratio)
        v.text += dag.parallelism < in.workers()
                      ? fmt::format("; the throttle K = {} already limits: parallelism {:.2f} with throttling edges, "
                                    "below P = {:.0f} ({:.2f} without)",
                                    dag.K, dag.parallelism, in.workers(), dag.parallelism_unthrottled)
                      : fmt::format("; with more workers the throttle K = {} would limit (parallelism {:.2f} with "
                                    "throttling edges, {:.2f} without)",
                                    dag.K, dag.parallelism, dag.parallelism_unthrottled);
    const std::optional<double> share = in.breakdown.total.core_share();
    const bool busy = share && *share < threshold::busy_machine_core_share;
    v.suggestion = busy       ? "the machine was busy (busy_machine): record again on a quiet one before judging"
                   : balanced ? "more workers (if the DAG's parallelism allows) is the next step"
                              : "no rule fired: look at the breakdown and the stage table";
    v.where = whole_run(in.scope);
    return v;
}

std::vector<verdict> compute_verdicts(const run_scope& scope, const run_meta& meta, const run_breakdown& breakdown,
                                      const run_stats& stats, const dag_bounds& dag, const queueing_bounds& queueing) {
    const verdict_inputs in{scope, meta, breakdown, stats, dag, queueing};
    std::vector<verdict> found;
    for (const verdict_rule& rule : limit_rules())
        for (verdict& v : rule.find(in)) found.push_back(std::move(v));
    std::stable_sort(found.begin(), found.end(), [](const verdict& a, const verdict& b) { return a.severity > b.severity; });

    std::vector<verdict> out;
    for (const verdict_rule& rule : caution_rules())
        for (verdict& v : rule.find(in)) out.push_back(std::move(v));
    const bool any_limit = !found.empty();
    std::move(found.begin(), found.end(), std::back_inserter(out));
    if (!any_limit) out.push_back(nothing_limiting(in));
    return out;
}

}   // namespace pipescope::analysis
