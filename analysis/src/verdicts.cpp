// The verdict rules (verdicts.hpp; docs/analysis.md, "Verdicts").
#include <pipescope/analysis/verdicts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pipescope::analysis {

namespace {

std::string fmt(const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}
std::string pct(double f) { return fmt("%.0f", f * 100) + " %"; }
std::string rate(double r) { return (r >= 100 ? fmt("%.0f", r) : fmt("%.3g", r)) + " items/s"; }
std::string times(double x) { return fmt("%.1f", x) + "\xC3\x97"; }   // "3.1×"
std::string num(std::uint64_t v) { return std::to_string(v); }

std::string stage_label(const stage_stats& s) {
    std::string out = "stage ";
    out += num(s.index);
    if (!s.name.empty()) {
        out += " '";
        out += s.name;
        out += "'";
    }
    return out;
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
            const std::string& n = m.str(s.name);
            const slice_kind k = classify_slice(n);
            const bool match = stage == -2 ? k == slice_kind::throttled
                                           : k == slice_kind::waiting && stage_of_name(n) == stage;
            if (!match || s.duration() < best_d) continue;
            best_d = s.duration();
            best = {s.begin, s.end, -1, stage >= 0 ? stage : -1, -1, ti};
            if (auto it = m.uint_arg(s, vocab::arg_key::iteration)) best.iteration = static_cast<long long>(*it);
        }
    return best;
}

}  // namespace

std::vector<verdict> compute_verdicts(const run_scope& r, const run_meta& meta, const run_breakdown& b,
                                      const run_stats& st, const dag_bounds& dag, const queueing_bounds& q) {
    std::vector<verdict> out;
    const double P = static_cast<double>(dag.workers ? dag.workers : std::max<std::size_t>(1, r.workers.size()));
    const auto& total = b.total.time;

    // 1. A saturated serial stage.
    for (const auto& s : st.stages) {
        if (!s.serial || s.service.count == 0 || s.busy_fraction < threshold::serial_busy) continue;
        verdict v;
        v.rule = "serial_bottleneck";
        v.severity = s.busy_fraction;
        v.text = "serial ";
        v.text += stage_label(s);
        v.text += " was busy ";
        v.text += pct(s.busy_fraction);
        v.text += " of the run";
        for (const auto& sr : q.stages)
            if (sr.index == s.index && sr.tser > 0) {
                v.text += "; it bounds throughput at 1/T";
                v.text += num(s.index);
                v.text += " = ";
                v.text += rate(1.0 / sr.tser);
            }
        if (q.available) {
            v.text += "; observed ";
            v.text += rate(q.observed);
        }
        v.suggestion = "collapse it with a neighbouring stage's work elsewhere, make it cheaper, or parallelize it";
        v.where = whole_run(r);
        v.where.stage = static_cast<long>(s.index);
        v.where.worker = s.longest.worker;
        v.where.iteration = s.longest.iteration;
        out.push_back(std::move(v));
    }

    // 2. Throttling stretched the span.
    const double span_ratio = dag.available && dag.without_throttle.span
                                  ? static_cast<double>(dag.with_throttle.span) / static_cast<double>(dag.without_throttle.span)
                                  : 1.0;
    bool throttle_fired = false;
    const double work_f = total.fraction(time_category::work);
    // The span rules (2, 3) need the span: over folded blocks it is only bounded from above, so they
    // stay silent there and the folded_trace caution says why (0b below).
    const bool span_known = dag.available && !dag.approximate;
    if (span_known && dag.K && span_ratio >= threshold::throttle_span_ratio && dag.parallelism < threshold::parallel_slack * P &&
        work_f < threshold::busy_enough) {
        verdict v;
        v.rule = "throttle_limited";
        v.severity = 1.0 - 1.0 / span_ratio;
        v.text = "throttle K = ";
        v.text += num(dag.K);
        v.text += " limited parallelism: span with throttling edges is ";
        v.text += times(span_ratio);
        v.text += " the span without (parallelism ";
        v.text += fmt("%.2f", dag.parallelism);
        v.text += " instead of ";
        v.text += fmt("%.2f", dag.parallelism_unthrottled);
        v.text += "; ";
        v.text += num(dag.with_throttle.throttle_edges_on_path);
        v.text += " throttling edges on the critical path)";
        v.suggestion = "raise K (--param K=...)";
        if (q.k_for_span > static_cast<double>(dag.K)) {
            v.suggestion += "; from K >= W/S = ";
            v.suggestion += fmt("%.0f", q.k_for_span);
            v.suggestion += " throttling no longer lengthens the span (seed 001 \xC2\xA7" "11)";
        }
        v.where = whole_run(r);
        for (const auto& pn : dag.with_throttle.critical_path)
            if (pn.via == path_edge::throttle) {
                v.where = {pn.begin, pn.end, pn.worker, static_cast<long>(pn.stage), static_cast<long long>(pn.iteration), tm::no_index};
                break;
            }
        throttle_fired = true;
        out.push_back(std::move(v));
    }

    // 3. Not enough parallelism in the DAG for P workers.
    if (span_known && dag.parallelism > 0 && dag.parallelism < P &&
        !(throttle_fired && dag.parallelism_unthrottled >= P)) {
        verdict v;
        v.rule = "low_parallelism";
        v.severity = 1.0 - dag.parallelism / P;
        // Which stage the critical path spends most time in (a folded block's time shared among its stages).
        const auto per_stage = path_time_by_stage(dag.with_throttle);
        const auto top = per_stage.begin();
        v.text = "the pipeline DAG has parallelism T1/Tinf = ";
        v.text += fmt("%.2f", dag.parallelism);
        v.text += " < P = ";
        v.text += num(static_cast<std::uint64_t>(P));
        v.text += ": no scheduler can run it more than ";
        v.text += fmt("%.2f", dag.parallelism);
        v.text += "\xC3\x97 faster than its work";
        if (top != per_stage.end() && dag.with_throttle.span) {
            v.text += "; the critical path spends ";
            v.text += pct(static_cast<double>(top->second) / static_cast<double>(dag.with_throttle.span));
            v.text += " of its length in stage ";
            v.text += num(top->first);
        }
        v.suggestion = "shorten the stages on the critical path (serial ones first), or give each iteration more parallel work; more workers will not help";
        v.where = whole_run(r);
        if (!dag.with_throttle.critical_path.empty()) {
            v.where.begin = dag.with_throttle.critical_path.front().begin;
            v.where.end = dag.with_throttle.critical_path.back().end;
        }
        if (top != per_stage.end()) v.where.stage = static_cast<long>(top->first);
        out.push_back(std::move(v));
    }

    // 4. Workers stalled: idle while iterations waited at a stage_wait (or the loop was throttled).
    const double stall_f = total.fraction(time_category::stall);
    if (stall_f >= threshold::stall) {
        verdict v;
        v.rule = "stall_heavy";
        v.severity = stall_f;
        long worst = -1;
        std::uint64_t worst_ns = 0, worst_waits = 0;
        for (const auto& s : st.stages)
            if (s.wait_ns > worst_ns) worst_ns = s.wait_ns, worst = static_cast<long>(s.index), worst_waits = s.waits;
        v.text = "workers idled ";
        v.text += pct(stall_f);
        if (worst >= 0 && worst_ns >= st.retire_wait_ns && worst_ns >= st.throttled_ns) {
            v.text += " waiting at stage_wait(";
            v.text += num(static_cast<std::uint64_t>(worst));
            v.text += ") (";
            v.text += num(worst_waits);
            v.text += " waits)";
            v.where = longest_wait(r, worst);
            v.suggestion = "the cross edge into stage " + std::to_string(worst) +
                           " serializes iterations: shorten what precedes it in iteration i-1, or drop the wait if the dependency allows";
        } else if (st.throttled_ns >= st.retire_wait_ns) {
            v.text += " while the loop was throttled at K = ";
            v.text += num(meta.K);
            v.where = longest_wait(r, -2);
            v.suggestion = "raise K so that more iterations can be in flight";
        } else {
            v.text += " while iterations waited to retire in order";
            v.where = longest_wait(r, -1);
            v.suggestion = "a long iteration holds back the ones after it: balance per-iteration work";
        }
        out.push_back(std::move(v));
    }

    // 4b. A thread blocked on a full queue (bind-to-stage backpressure): its consumers cannot keep up.
    {
        const tm::trace_model& m = *r.model;
        const double span = static_cast<double>(std::max<std::uint64_t>(1, r.makespan()));
        for (auto ti : r.workers) {
            const tm::track& t = m.tracks[ti];
            std::uint64_t blocked = 0, longest = 0;
            const tm::slice* worst = nullptr;
            for (const tm::slice& s : t.slices) {
                if (classify_slice(m.str(s.name)) != slice_kind::blocked) continue;
                blocked += s.duration();
                if (!worst || s.duration() > longest) worst = &s, longest = s.duration();
            }
            const double f = static_cast<double>(blocked) / span;
            if (!worst || f < threshold::stall) continue;
            verdict v;
            v.rule = "blocked_heavy";
            v.severity = f;
            v.text = "'";
            v.text += t.name;
            v.text += "' was blocked ";
            v.text += pct(f);
            v.text += " of the run (";
            v.text += m.str(worst->name);
            v.text += ")";
            const std::string& wn = m.str(worst->name);
            // "blocked: queue j full": the fill of "queue j fill"
            const auto qp = wn.find(vocab::queue_prefix);
            if (const auto q = qp == std::string::npos ? std::nullopt
                                                       : vocab::leading_number(std::string_view(wn).substr(qp), vocab::queue_prefix)) {
                for (const auto& c : st.counters)
                    if (vocab::leading_number(c.name, vocab::queue_prefix) == q) {
                        v.text += "; its peak fill was ";
                        v.text += fmt("%g", c.peak);
                        if (c.capacity) {
                            v.text += " of ";
                            v.text += fmt("%g", *c.capacity);
                        }
                    }
            }
            v.suggestion = wn.find(vocab::queue_full_suffix.substr(1)) != std::string::npos   // the word "full" anywhere
                               ? "the stages after it cannot keep up: give them more threads (--param c=...), collapse stages, or "
                                 "use a work-stealing policy; a larger queue (--param queue=...) only absorbs bursts"
                               : "it waits on its neighbours: balance the stages' service times";
            v.where = {worst->begin, worst->end, t.worker, stage_of_name(t.name), -1, ti};
            if (auto it = m.uint_arg(*worst, vocab::arg_key::iteration)) v.where.iteration = static_cast<long long>(*it);
            out.push_back(std::move(v));
        }
    }

    // 5. Looking for work.
    const double idle_f = total.fraction(time_category::idle) + total.fraction(time_category::stealing);
    if (idle_f >= threshold::idle && vocab::classify_policy(meta.policy) == vocab::policy_family::bound_threads) {
        // Bound threads do not steal: their idle time is waiting on an empty input queue.
        verdict v;
        v.rule = "input_starved";
        v.severity = idle_f;
        v.text = "threads spent ";
        v.text += pct(idle_f);
        v.text += " of their time waiting for input (empty queues)";
        const stage_rate* slow = nullptr;
        for (const auto& sr : q.stages)
            if (sr.rate_stage > 0 && (!slow || sr.rate_stage < slow->rate_stage)) slow = &sr;
        if (slow) {
            v.text += "; the slowest stage is stage ";
            v.text += num(slow->index);
            if (!slow->name.empty()) {
                v.text += " '";
                v.text += slow->name;
                v.text += "'";
            }
            v.text += " at c/Tser = ";
            v.text += rate(slow->rate_stage);
            v.where = whole_run(r);
            v.where.stage = static_cast<long>(slow->index);
        } else {
            v.where = whole_run(r);
        }
        v.suggestion = "give the slowest stage more threads (--param c=...) or collapse stages (seed 000 \xC2\xA7" "3.1), or use "
                       "a work-stealing policy, which balances the load itself";
        out.push_back(std::move(v));
    } else if (idle_f >= threshold::idle) {
        verdict v;
        v.rule = "steal_heavy";
        v.severity = idle_f;
        v.text = "workers spent ";
        v.text += pct(idle_f);
        v.text += " of their time looking for work (";
        v.text += num(st.steals_made);
        v.text += " steals made, ";
        v.text += num(st.steals_failed);
        v.text += " failed attempts recorded)";
        if (dag.available && dag.parallelism >= P) {
            v.text += "; the DAG's parallelism ";
            v.text += fmt("%.2f", dag.parallelism);
            v.text += " >= P, so the work existed but thieves did not find it";
            v.suggestion = "the parallel work sat where thieves could not take it: check that ready iterations are "
                           "exposed (stealable) promptly, e.g. lazy enabling, or raise K";
        } else {
            v.suggestion = "more parallel slack: more iterations in flight (raise K), or coarser, fewer nodes";
        }
        v.where = worker_with_most(r, b, time_category::idle);
        out.push_back(std::move(v));
    }

    // 6. Asleep.
    const double parked_f = total.fraction(time_category::parked);
    if (parked_f >= threshold::parked) {
        verdict v;
        v.rule = "parked_heavy";
        v.severity = parked_f;
        v.text = "workers slept (parked) ";
        v.text += pct(parked_f);
        v.text += " of their time; ";
        v.text += num(st.wakeups);
        v.text += " wake-ups";
        v.suggestion = "the run has too little parallel work for P workers: use fewer workers, or expose more parallelism";
        v.where = worker_with_most(r, b, time_category::parked);
        out.push_back(std::move(v));
    }

    // 7. Scheduling overhead.
    const double sched_f = total.fraction(time_category::scheduler) + total.fraction(time_category::queue);
    if (sched_f >= threshold::scheduler) {
        verdict v;
        v.rule = "scheduler_heavy";
        v.severity = sched_f;
        v.text = "scheduling overhead took ";
        v.text += pct(sched_f);
        v.text += " of worker time";
        if (b.total.nodes && total[time_category::work]) {
            v.text += "; nodes ran ";
            v.text += fmt("%.2f", static_cast<double>(total[time_category::work]) / static_cast<double>(b.total.nodes) * 1e-3);
            v.text += " \xC2\xB5s on average";
        }
        if (b.total.folded_runs)
            v.text += " (a folded trace: the stage boundaries inside folded runs count as work, so the overhead is larger than this)";
        v.suggestion = "nodes are too fine-grained: put more work in each stage (or each iteration)";
        v.where = whole_run(r);
        out.push_back(std::move(v));
    }

    std::stable_sort(out.begin(), out.end(), [](const verdict& a, const verdict& c) { return a.severity > c.severity; });

    // 0. A caution first: events were lost while recording.
    if (st.events_lost) {
        verdict v;
        v.rule = "events_lost";
        v.limiting = false;
        v.severity = 1;
        v.text = num(st.events_lost);
        v.text += " events were lost while recording (the writer fell behind): slices around the losses were closed "
                  "where the loss was marked, so durations, service times and the DAG there are unreliable";
        v.suggestion = "record again with a bigger --trace-buffer";
        v.where = st.first_loss;
        out.insert(out.begin(), std::move(v));
    }

    // 0b. A caution: a folded trace (docs/analysis.md, "Folded traces").
    if (dag.approximate) {
        verdict v;
        v.rule = "folded_trace";
        v.limiting = false;
        v.severity = 1;
        v.text = "folded trace: ";
        v.text += num(st.folded_runs);
        v.text += " folded runs hold ";
        v.text += num(st.folded_nodes);
        v.text += " of the ";
        v.text += num(st.nodes);
        v.text += " nodes, so the DAG's span is only bounded from above (T1/Tinf >= ";
        v.text += fmt("%.2f", dag.parallelism);
        v.text += ") and per-node times are shares of their folded run: whether the DAG's parallelism or the throttle "
                  "limited this run cannot be told from this trace (those rules are not applied)";
        v.suggestion = "record again with --trace-detail nodes to measure the span, the critical path and per-node times "
                       "(a larger trace, and slower to record for nodes this short)";
        v.where = whole_run(r);
        for (const auto& d : st.detail_decisions)
            if (d.folded) {
                v.where = d.where;
                v.where.end = r.end;
                break;
            }
        out.insert(out.begin() + (st.events_lost ? 1 : 0), std::move(v));
    }

    // 8. Nothing limiting.
    if (std::none_of(out.begin(), out.end(), [](const verdict& x) { return x.limiting; })) {
        verdict v;
        v.limiting = false;
        v.rule = work_f >= threshold::balanced_work ? "balanced" : "no_single_limit";
        v.severity = 0;
        v.text = v.rule == "balanced" ? "balanced: workers worked " : "no single limit: workers worked ";
        v.text += pct(work_f);
        v.text += " of their time";
        if (dag.available) {
            v.text += "; observed speedup ";
            v.text += fmt("%.2f", dag.observed_speedup);
            v.text += dag.approximate ? " against a bound of at least " : " against a bound of ";
            v.text += fmt("%.2f", dag.speedup_bound);
        }
        if (span_known && dag.K && span_ratio >= threshold::throttle_span_ratio) {
            v.text += "; with more workers the throttle K = ";
            v.text += num(dag.K);
            v.text += " would limit (parallelism ";
            v.text += fmt("%.2f", dag.parallelism);
            v.text += " with throttling edges, ";
            v.text += fmt("%.2f", dag.parallelism_unthrottled);
            v.text += " without)";
        }
        v.suggestion = v.rule == "balanced" ? "more workers (if the DAG's parallelism allows) is the next step"
                                            : "no rule fired: look at the breakdown and the stage table";
        v.where = whole_run(r);
        out.push_back(std::move(v));
    }
    return out;
}

}  // namespace pipescope::analysis
