// Lesson "earliest-first": PIPER against Cheetah-Piper's resume-the-earliest-suspended-iteration
// optimization (seed 003 §4, Figs. 8–10), on the x264-like encoder.
//
// Why x264: in ferret, dedup and pipe-fib-256 an iteration waits only where its predecessor's
// retirement is what enables it, and PIPER's check of the next iteration at retirement already takes
// the earliest one — both policies resume exactly the same way there. x264's P-frame rows wait for a
// row of the previous frame while that frame is still running (seed 001 §3), so resumable iterations
// pile up between retirements, and *which* one a worker takes, and *when*, is up to the policy.
//
// The measures come from the line tracks ("waiting at stage j": from suspension to resumption) and
// the pipeline DAG (the cross edge's source node ends when the waiting iteration becomes
// resumable). Each policy is recorded twice and the pairs are pooled: on a loaded 2-core machine one
// run can be an outlier, and the lag is a statistic over a few dozen resumptions.
//
// The paper measured idle time on up to 16 cores (Figs. 8–10). Two more pairs run on 16 virtual
// workers (docs/virtual.md: the real encoder and policies, each node charged its measured CPU time),
// and their traces are measured the same way, with the idle share as the scaling sweep counts it.
#include <pipescope/lessons/lesson.hpp>

#include <pipescope/analysis/scaling.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipescope::lessons {

namespace {

namespace tm = pipescope::trace;
namespace vocab = pipescope::trace::vocab;

constexpr std::string_view lesson_workload = "x264";
constexpr int pairs = 2;
// A later iteration counts as resumed out of order only if an earlier one had been resumable this
// long already: the scan of a suspended list and the clocks of two workers race by a few µs.
constexpr std::uint64_t out_of_order_margin_ns = 20'000;

// One "waiting at stage j" state of a line track.
struct wait_state {
    std::uint64_t iteration = 0, stage = 0;
    std::uint64_t begin = 0, end = 0;       // suspended .. resumed (absolute ns)
    std::uint64_t resumable = 0;            // when its cross edge's source node ended (0: unknown)
    bool before_predecessor_done = false;   // resumed while iteration-1 still had a node to finish
};

// What one recorded run says about how its suspended iterations were resumed.
struct resume_profile {
    std::vector<wait_state> waits;
    std::uint64_t resumptions = 0;             // analysis: resumptions of suspended iterations
    std::uint64_t earliest = 0;                // "resume earliest" instants (piper-earliest only)
    std::array<std::uint64_t, 3> at_point{};   // ... by resumed_at: retire, suspend, steal found nothing
    std::uint64_t out_of_order = 0;
    double lag_sum = 0;   // ns, over waits with a known resumable time
    std::uint64_t lag_count = 0;
    std::uint64_t early = 0;   // waits resumed before the predecessor's last node ended
    double idle_share = 0;     // idle + stall of all workers' time
    // Nothing to run: idle + stall + parked + untraced (analysis::scale_row_of). Cheetah's workers
    // never sleep, so all of that is its idle time; on 16 virtual workers much of it is parked.
    double nothing_share = 0;
    double scheduling_share = 0;   // scheduler + stealing of all workers' time
    double parallelism = 0;        // of the run's DAG, T1/Tinf
    double live_mean = 0;          // time-weighted "live iterations"
    std::uint64_t makespan = 0;
};

std::vector<wait_state> waits_of(const tm::trace_model& m, const tm::run& run) {
    const tm::pipeline_dag& dag = run.dag;
    std::vector<std::uint32_t> cross_source(dag.nodes.size(), tm::no_index);
    for (const tm::dag_edge& e : dag.edges)
        if (e.kind == tm::dag_edge_kind::cross) cross_source[e.to] = e.from;
    std::map<std::uint64_t, std::uint64_t> last_end;   // iteration -> end of its last node
    for (const tm::dag_node& n : dag.nodes) last_end[n.iteration] = std::max(last_end[n.iteration], n.end);

    std::vector<wait_state> waits;
    for (std::uint32_t line : run.lines) {
        if (line == tm::no_index) continue;
        for (const tm::slice& s : m.tracks[line].slices) {
            // "waiting at stage j" (not running, not waiting to retire)
            if (s.kind != tm::slice_kind::waiting || m.stage_of(s.name) < 0) continue;
            const auto iteration = m.uint_arg(s, vocab::arg_key::iteration);
            if (!iteration) continue;
            wait_state w;
            w.iteration = *iteration;
            w.stage = static_cast<std::uint64_t>(m.stage_of(s.name));
            w.begin = s.begin;
            w.end = s.end;
            // The node the iteration resumed into is (i, j); its cross edge says what it waited for.
            const std::uint32_t node = dag.find(w.iteration, w.stage);
            if (node != tm::no_index && cross_source[node] != tm::no_index) w.resumable = dag.nodes[cross_source[node]].end;
            if (w.iteration > 0) {
                const auto prev = last_end.find(w.iteration - 1);
                w.before_predecessor_done = prev != last_end.end() && w.end < prev->second;
            }
            waits.push_back(w);
        }
    }
    return waits;
}

// A resumption out of order: iteration x resumed while an earlier iteration y was still suspended
// although its edge had been satisfied for a while — exactly what resuming the earliest avoids.
std::uint64_t count_out_of_order(const std::vector<wait_state>& waits) {
    std::uint64_t n = 0;
    for (const wait_state& x : waits) {
        for (const wait_state& y : waits) {
            if (y.iteration >= x.iteration || !y.resumable) continue;
            if (y.begin < x.end && y.end > x.end + out_of_order_margin_ns && y.resumable + out_of_order_margin_ns < x.end) {
                ++n;
                break;
            }
        }
    }
    return n;
}

double live_mean(const tm::trace_model& m, const tm::run& run, std::uint64_t makespan) {
    if (!makespan) return 0;
    for (std::uint32_t t : run.tracks) {
        const tm::track& track = m.tracks[t];
        if (track.kind != tm::track_kind::counter || track.name != vocab::live_iterations) continue;
        double area = 0;
        for (std::size_t k = 0; k + 1 < track.counters.size(); ++k)
            area += track.counters[k].value * static_cast<double>(track.counters[k + 1].ts - track.counters[k].ts);
        return area / static_cast<double>(makespan);
    }
    return 0;
}

resume_profile profile(const recorded& r) {
    const tm::trace_model& m = *r.model;
    const tm::run& run = m.runs.at(r.report.run);
    resume_profile p;
    p.waits = waits_of(m, run);
    p.resumptions = r.report.stats.resumptions;
    for (std::uint32_t w : run.workers) {
        if (w == tm::no_index) continue;
        for (const tm::instant& i : m.tracks[w].instants) {
            if (m.str(i.name) != vocab::resume_earliest) continue;
            ++p.earliest;
            const auto at = m.string_arg(i, vocab::arg_key::resumed_at);
            for (std::size_t k = 0; k < std::size(vocab::earliest_points); ++k)
                if (at == vocab::earliest_points[k]) ++p.at_point[k];
        }
    }
    p.out_of_order = count_out_of_order(p.waits);
    for (const wait_state& w : p.waits) {
        if (w.before_predecessor_done) ++p.early;
        if (!w.resumable) continue;
        p.lag_sum += static_cast<double>(w.end > w.resumable ? w.end - w.resumable : 0);
        ++p.lag_count;
    }
    const analysis::time_split& total = r.report.breakdown.total.time;
    p.idle_share = total.fraction(analysis::time_category::idle) + total.fraction(analysis::time_category::stall);
    p.nothing_share = analysis::scale_row_of(r.report, 0).idle_share;
    p.scheduling_share =
        total.fraction(analysis::time_category::scheduler) + total.fraction(analysis::time_category::stealing);
    p.parallelism = r.report.dag.parallelism;
    p.makespan = r.report.makespan();
    p.live_mean = live_mean(m, run, p.makespan);
    return p;
}

// Both runs of one policy, pooled.
struct pooled {
    std::uint64_t waits = 0, resumptions = 0, earliest = 0, out_of_order = 0, early = 0, lag_count = 0, makespan = 0;
    std::array<std::uint64_t, 3> at_point{};
    double lag_sum = 0, idle_share_sum = 0, live_sum = 0, nothing_sum = 0, scheduling_sum = 0, parallelism_sum = 0;
    std::vector<double> idle_shares, nothing_shares;
    void add(const resume_profile& p) {
        waits += p.waits.size();
        resumptions += p.resumptions;
        earliest += p.earliest;
        out_of_order += p.out_of_order;
        early += p.early;
        lag_count += p.lag_count;
        lag_sum += p.lag_sum;
        makespan += p.makespan;
        for (int k = 0; k < 3; ++k) at_point[k] += p.at_point[k];
        idle_shares.push_back(p.idle_share);
        idle_share_sum += p.idle_share;
        live_sum += p.live_mean;
        nothing_shares.push_back(p.nothing_share);
        nothing_sum += p.nothing_share;
        scheduling_sum += p.scheduling_share;
        parallelism_sum += p.parallelism;
    }
    double mean_lag_us() const { return lag_count ? lag_sum / static_cast<double>(lag_count) / 1e3 : 0; }
    double early_share() const { return waits ? static_cast<double>(early) / static_cast<double>(waits) : 0; }
    double idle_share() const { return mean(idle_share_sum); }
    double live() const { return mean(live_sum); }
    double nothing_share() const { return mean(nothing_sum); }
    double scheduling_share() const { return mean(scheduling_sum); }
    double parallelism() const { return mean(parallelism_sum); }
    double mean(double sum) const { return idle_shares.empty() ? 0 : sum / static_cast<double>(idle_shares.size()); }
};

// Idle shares are a few percent: one decimal.
std::string percent1(double fraction) { return percent(fraction, 1); }

// The paper's largest machine (Figs. 2–10): the virtual pairs run on this many workers.
constexpr unsigned virtual_workers = 16;

std::string key(const char* policy, int pair, bool virtual_time = false) {
    return std::string(policy) + (virtual_time ? "-virtual-" : "-") + std::to_string(pair);
}

// What the story compares: both policies' pooled runs and the ratios drawn from them.
struct comparison {
    pooled piper, earliest;
    double lag_ratio = 0;        // mean resume lag, piper ÷ piper-earliest
    double earliest_share = 0;   // of piper-earliest's resumptions, taken from its list
    double idle_change = 0;      // idle + stall share, piper-earliest minus piper (< 0: less idle)
    bool idle_lower_in_every_pair = true;
    double time_ratio = 0;   // run time, piper ÷ piper-earliest
    unsigned P = 0;
    // Nothing to run (pooled.nothing_share), piper-earliest minus piper, and whether it was lower in
    // every pair; scheduler + stealing, piper-earliest minus piper.
    double nothing_change = 0, scheduling_change = 0;
    bool nothing_lower_in_every_pair = true;
};

// The real pairs, or (virtual_time) the pairs on 16 virtual workers.
comparison compare(const lesson_data& data, bool virtual_time = false) {
    comparison c;
    for (int pair = 1; pair <= pairs; ++pair) {
        c.piper.add(profile(data.run(key("piper", pair, virtual_time))));
        c.earliest.add(profile(data.run(key("piper-earliest", pair, virtual_time))));
    }
    const pooled &piper = c.piper, &earliest = c.earliest;
    c.lag_ratio = earliest.mean_lag_us() > 0 ? piper.mean_lag_us() / earliest.mean_lag_us() : 0;
    c.earliest_share =
        earliest.resumptions ? static_cast<double>(earliest.earliest) / static_cast<double>(earliest.resumptions) : 0;
    c.idle_change = earliest.idle_share() - piper.idle_share();
    for (int k = 0; k < pairs; ++k)
        c.idle_lower_in_every_pair = c.idle_lower_in_every_pair && earliest.idle_shares[k] + 0.03 < piper.idle_shares[k];
    c.time_ratio = earliest.makespan ? static_cast<double>(piper.makespan) / static_cast<double>(earliest.makespan) : 0;
    c.P = virtual_time ? virtual_workers : data.opts.workers;
    c.nothing_change = earliest.nothing_share() - piper.nothing_share();
    c.scheduling_change = earliest.scheduling_share() - piper.scheduling_share();
    for (int k = 0; k < pairs; ++k)
        c.nothing_lower_in_every_pair =
            c.nothing_lower_in_every_pair && earliest.nothing_shares[k] < piper.nothing_shares[k];
    return c;
}

// "3.1% and 4.0%": the shares of a policy's runs.
std::string pair_shares(const std::vector<double>& shares) {
    std::string t;
    for (double share : shares) t += (t.empty() ? "" : " and ") + percent1(share);
    return t;
}

// Whether the idle shares differ by more than runs of one policy do, in words.
std::string idle_difference(const comparison& c) {
    const std::string P = std::to_string(c.P);
    if (std::abs(c.idle_change) < 0.05)
        return "With " + P +
               " workers both are busy with rows nearly all the time, so resuming sooner changes the order "
               "of the work, not how much of it waits for a worker — the same \"almost indistinguishable\" the paper saw.";
    return "That is a difference of " + fixed(std::abs(c.idle_change) * 100, 0) +
           " points, but two runs of one policy "
           "differ as much on a loaded " +
           P +
           "-core machine: compare the runs of each pair before reading it as the "
           "policy's doing.";
}

// "+1.2 pt": a change of shares in percentage points.
std::string points(double change) { return fmt::format("{}{} pt", change <= 0 ? "" : "+", fixed(change * 100, 1)); }

// What the 16 virtual workers add to the story's values (names v_...).
void add_virtual_values(story_values& v, const comparison& c) {
    const pooled &piper = c.piper, &earliest = c.earliest;
    v.push_back(fmt::arg("v_P", c.P));
    v.push_back(fmt::arg("v_K", 16 * c.P));
    v.push_back(fmt::arg("v_resumptions", earliest.resumptions));
    v.push_back(fmt::arg("v_at_suspend", earliest.at_point[1]));
    v.push_back(fmt::arg("v_out_of_order", earliest.out_of_order));
    v.push_back(fmt::arg("v_piper_lag", fixed(piper.mean_lag_us(), 1)));
    v.push_back(fmt::arg("v_earliest_lag", fixed(earliest.mean_lag_us(), 1)));
    v.push_back(fmt::arg("v_parallelism", fixed(piper.parallelism(), 1)));
    v.push_back(fmt::arg("v_piper_nothing", percent1(piper.nothing_share())));
    v.push_back(fmt::arg("v_earliest_nothing", percent1(earliest.nothing_share())));
    v.push_back(fmt::arg("v_piper_pair_nothing", pair_shares(piper.nothing_shares)));
    v.push_back(fmt::arg("v_earliest_pair_nothing", pair_shares(earliest.nothing_shares)));
    v.push_back(fmt::arg("v_nothing_change", points(c.nothing_change)));
    v.push_back(fmt::arg("v_piper_sched", percent1(piper.scheduling_share())));
    v.push_back(fmt::arg("v_earliest_sched", percent1(earliest.scheduling_share())));
    v.push_back(fmt::arg("v_sched_change", points(c.scheduling_change)));
    v.push_back(fmt::arg("v_time_ratio", ratio(c.time_ratio)));
}

story_values values_of(const comparison& c, const comparison& virt) {
    const pooled &piper = c.piper, &earliest = c.earliest;
    story_values v;
    add_virtual_values(v, virt);
    v.push_back(fmt::arg("P", c.P));
    v.push_back(fmt::arg("K", 16 * c.P));
    v.push_back(fmt::arg("resumptions", earliest.resumptions));
    v.push_back(fmt::arg("at_retire", earliest.at_point[0]));
    v.push_back(fmt::arg("at_suspend", earliest.at_point[1]));
    v.push_back(fmt::arg("at_failed_steal", earliest.at_point[2]));
    v.push_back(fmt::arg("out_of_order", earliest.out_of_order));
    v.push_back(fmt::arg("piper_out_of_order", piper.out_of_order));
    v.push_back(fmt::arg("piper_lag", fixed(piper.mean_lag_us(), 0)));
    v.push_back(fmt::arg("earliest_lag", fixed(earliest.mean_lag_us(), 0)));
    v.push_back(fmt::arg("lag_ratio", ratio(c.lag_ratio)));
    v.push_back(fmt::arg("earliest_early", percent(earliest.early_share())));
    v.push_back(fmt::arg("piper_early", percent(piper.early_share())));
    v.push_back(fmt::arg("piper_live", fixed(piper.live(), 1)));
    v.push_back(fmt::arg("earliest_live", fixed(earliest.live(), 1)));
    v.push_back(fmt::arg("piper_idle", percent1(piper.idle_share())));
    v.push_back(fmt::arg("earliest_idle", percent1(earliest.idle_share())));
    v.push_back(fmt::arg("piper_pair_idle", pair_shares(piper.idle_shares)));
    v.push_back(fmt::arg("earliest_pair_idle", pair_shares(earliest.idle_shares)));
    v.push_back(fmt::arg("time_ratio", ratio(c.time_ratio)));
    v.push_back(fmt::arg("idle_difference", idle_difference(c)));
    v.push_back(
        fmt::arg("why_all_from_list", earliest.resumptions == 0
                                          ? "no iteration was suspended: with one worker each frame runs to its end"
                                          : "a resumption bypassed piper-earliest's list: its hooks are not in place"));
    return v;
}

std::vector<finding_measure> findings_of(const comparison& c, const comparison& virt) {
    const pooled &piper = c.piper, &earliest = c.earliest;
    return {
        {"earliest_resumes", c.earliest_share, percent(c.earliest_share),
         piper.earliest == 0 && earliest.resumptions > 0 && earliest.earliest == earliest.resumptions},
        {"resumed_at_suspend", static_cast<double>(earliest.at_point[1]), std::to_string(earliest.at_point[1]),
         earliest.at_point[1] > 0},
        {"out_of_order_resumes", static_cast<double>(earliest.out_of_order), std::to_string(earliest.out_of_order),
         earliest.out_of_order == 0},
        {"resume_lag_ratio", c.lag_ratio, ratio(c.lag_ratio), c.lag_ratio > 1.2},
        {"resumed_before_predecessor", earliest.early_share(),
         percent(earliest.early_share()) + " vs " + percent(piper.early_share()),
         earliest.early_share() > piper.early_share() + 0.05},
        {"idle_share_change", c.idle_change * 100, points(c.idle_change), c.idle_lower_in_every_pair},
        {"time_ratio", c.time_ratio, ratio(c.time_ratio), c.time_ratio > 0.85 && c.time_ratio < 1.18},
        {"virtual_idle_share_change", virt.nothing_change * 100, points(virt.nothing_change),
         virt.nothing_lower_in_every_pair},
        {"virtual_scheduling_change", virt.scheduling_change * 100, points(virt.scheduling_change),
         virt.scheduling_change > 0},
        {"virtual_time_ratio", virt.time_ratio, ratio(virt.time_ratio), virt.time_ratio > 0.9 && virt.time_ratio < 1.1},
    };
}

const finding_text findings[] = {
    {"earliest_resumes",
     "share of piper-earliest's resumptions taken from its suspended list, earliest first (piper takes none)",
     "003 §4.1: a list of suspended iterations ordered by iteration number, from which a worker retrieves the earliest "
     "one in O(1)",
     "{why_all_from_list}"},
    {"resumed_at_suspend",
     "resumptions piper-earliest made where an iteration suspended — a point where PIPER resumes nothing",
     "003 §4.2: resume the earliest suspended iteration upon an iteration returning, upon an iteration suspending, and "
     "when a steal finds only a running iteration",
     "no iteration suspended while another was resumable in these runs: the points at retire and after a failed steal "
     "did all the resuming"},
    {"out_of_order_resumes",
     "resumptions of a later iteration while an earlier one had been resumable for 20 µs (piper-earliest)",
     "003 §4: prioritize earlier iterations — if a worker needs work and there are suspended iterations, resume the "
     "earliest",
     "a scan raced a predecessor's progress on a loaded machine (the margin is 20 µs)"},
    {"resume_lag_ratio", "mean time from an iteration becoming resumable to its resumption, piper ÷ piper-earliest",
     "003 §4.2: a worker should immediately execute any work it knows to be available; waiting for a steal to find it "
     "\"could always lead to idle time\"",
     "the machine was loaded enough that workers were descheduled while iterations became resumable, which hides the "
     "difference; rerun on an idle machine"},
    {"resumed_before_predecessor",
     "share of resumptions made while the predecessor was still running (piper-earliest vs piper)",
     "001 §9: with lazy enabling PIPER checks the next iteration only at retirement (or from an idle worker); 003 §4.2 "
     "adds the suspend point",
     "in these runs PIPER's idle workers found the resumable iterations about as early"},
    {"idle_share_change", "idle + stall share of all workers' time, piper-earliest minus piper (percentage points)",
     "003 §6, Figs. 8–10 (up to 16 cores): the optimization \"can perhaps reduce idle time\" on ferret, offset by a "
     "larger scheduling time; inconclusive for dedup and pipe-fib",
     "on {P} cores both workers are nearly always busy encoding rows, so a worker that resumes sooner takes time from "
     "the other's rows rather than from idle time; the idle share moves by a few points either way from run to run. "
     "On {v_P} virtual workers (step \"On 16 virtual workers\") the lag vanishes under both policies; there "
     "piper-earliest's workers have less time with nothing to run ({v_nothing_change}) and spend more of it in the "
     "scheduler ({v_sched_change})"},
    {"time_ratio", "run time, piper ÷ piper-earliest (both pairs)",
     "003 §6, Figs. 2–7: processing times almost indistinguishable for dedup and ferret; on pipe-fib the optimized "
     "runtime was slower",
     "the run times differ by more than 15 % here: on a loaded 2-core machine two runs of the same policy differ as "
     "much"},
    {"virtual_idle_share_change",
     "on {v_P} virtual workers: share of the workers' time with nothing to run (idle, stalled or asleep), "
     "piper-earliest minus piper (percentage points)",
     "003 §6, Figs. 8–10 (up to 16 cores): the optimization \"can perhaps reduce idle time\" on ferret; inconclusive "
     "for dedup and pipe-fib",
     "piper-earliest was not lower in both pairs: the change is smaller than the spread between two runs of one policy "
     "(piper's runs: {v_piper_pair_nothing}; piper-earliest's: {v_earliest_pair_nothing}), because x264's DAG gives "
     "only about {v_parallelism} workers' worth of parallelism (T1/Tinf) and sets most of the idle time under either "
     "policy"},
    {"virtual_scheduling_change",
     "on {v_P} virtual workers: share of the workers' time in the scheduler and stealing, piper-earliest minus piper "
     "(percentage points)",
     "003 §6: on ferret less idle time \"offset by a larger scheduling time\"",
     "piper-earliest spent no more of the workers' time in the scheduler than piper in these runs (the change is "
     "below a point and varies from run to run)"},
    {"virtual_time_ratio", "run time on {v_P} virtual workers, piper ÷ piper-earliest (both pairs)",
     "003 §6, Figs. 2–7 (16 cores): processing times almost indistinguishable",
     "the run times on {v_P} virtual workers differ by more than 10 %: each node's cost is its CPU time measured now, "
     "which a loaded machine's caches stretch from run to run"},
};

const view_move compare_runs{"compare", std::nullopt, std::nullopt, std::nullopt, true};

const step_text steps[] = {
    {"What to look at",
     "Four runs of the x264-like encoder (IPPP…, K = {K}, twice per policy) on one aligned axis. Open the \"lines\" "
     "group: a line shows an iteration \"running\" or \"waiting at stage j\" — a P-frame row waiting for a row of the "
     "previous frame. Under piper-earliest the workers carry \"resume earliest\" instants (resumed_at: retire, "
     "suspend, steal found nothing). Compare how long the waits last and how many lines are open at once.",
     {"timeline", std::nullopt, std::pair{0.0, 0.4}, std::nullopt, true}},
    {"What the paper found",
     "Kelly (seed 003 §4) keeps PIPER's pipelines in Cheetah and adds URTS/Pipelite's rule: a worker that needs work "
     "resumes the earliest suspended iteration, taken in O(1) from a list ordered by iteration number, at three points "
     "— when an iteration returns, when one suspends, and when a steal finds only a running iteration. PIPER looks "
     "only at the next iteration, at retirement. On 16 cores (Figs. 2–10) the processing times were almost "
     "indistinguishable; on ferret the breakdown hinted at less idle time, offset by more scheduling time, and on "
     "pipe-fib the optimized runtime was slower. The report calls its data inconclusive.",
     compare_runs},
    {"What this run shows",
     "Every one of piper-earliest's {resumptions} resumptions came from its ordered list ({at_retire} at retire, "
     "{at_suspend} when an iteration suspended, {at_failed_steal} after a failed steal); out-of-order resumptions: "
     "{out_of_order} (piper: {piper_out_of_order} — its check at retirement takes i + 1, the earliest, too, and with "
     "{P} workers two resumable iterations seldom wait at once). Where the policies differ is when: a resumable "
     "iteration waited {piper_lag} µs under piper and {earliest_lag} µs under piper-earliest ({lag_ratio}) before it "
     "was resumed; {earliest_early} of piper-earliest's resumptions came before the predecessor had finished, against "
     "{piper_early} under piper. Live iterations on average: {piper_live} (piper) vs {earliest_live}.",
     compare_runs},
    {"Where the time went",
     "The paper's measure is idle time. Idle + stall: {piper_idle} of the workers' time under piper (runs: "
     "{piper_pair_idle}), {earliest_idle} under piper-earliest ({earliest_pair_idle}); the run times' ratio is "
     "{time_ratio}. {idle_difference}",
     {"breakdown", std::nullopt, std::nullopt, std::nullopt, true}},
    {"On 16 virtual workers",
     "The paper measured idle time on up to 16 cores, so the lesson also ran both policies twice on {v_P} virtual "
     "workers (K = {v_K}; the runs the viewer marks \"virtual {v_P} cores\"; docs/virtual.md): the same encoder and "
     "both policies' own code, one worker at a time in virtual time, each node charged its measured CPU time. "
     "piper-earliest again took all {v_resumptions} resumptions from its list ({v_at_suspend} where an iteration "
     "suspended; out of order: {v_out_of_order}). But the lag is gone: a resumable iteration waited {v_piper_lag} µs "
     "under piper and {v_earliest_lag} µs under piper-earliest — with {v_P} workers there is nearly always an idle one "
     "to find it. Idle time, counted as the paper's runtime would (its workers never sleep, so idle, stalled and "
     "parked time are all idle): {v_piper_nothing} of the workers' time under piper ({v_piper_pair_nothing}), "
     "{v_earliest_nothing} under piper-earliest ({v_earliest_pair_nothing}), {v_nothing_change}; scheduler and "
     "stealing went from {v_piper_sched} to {v_earliest_sched} ({v_sched_change}). The idle time piper-earliest saves "
     "goes to scheduling, not to work, and the run times' ratio is {v_time_ratio}: the paper's reading of ferret "
     "(perhaps less idle time, offset by more scheduling time) with its \"almost indistinguishable\" processing "
     "times. Both effects are small because the DAG decides: its parallelism T1/Tinf is {v_parallelism}, so most of "
     "{v_P} workers have nothing to do under either policy.",
     compare_runs},
    {"Try next",
     "Between 2 workers (all busy) and 16 (most idle) lies the range where a late resumption could cost idle time: "
     "the scaling sweep on virtual workers, `pipescope scale x264 --policies piper,piper-earliest --workers "
     "1,2,4,6,8,16 --param bframes=0 --param frames=60`, draws both policies' speedups (within about 10 % of "
     "each other at every P here). Turn lazy enabling off and PIPER checks the next iteration at every stage, so the lag "
     "vanishes under both policies: `pipescope run x264 --policy piper --param bframes=0 --param frames=60 --param "
     "K=32 --param lazy=off -o eager.pftrace`. The workloads whose iterations only wait to retire in order (ferret, "
     "dedup, pipe-fib-256) resume identically under both.",
     {"timeline", std::nullopt, std::nullopt, std::nullopt, true}},
};

// IPPP… (bframes=0): every frame after an I-frame waits row by row for the previous one. 60 frames
// give a few dozen suspensions per run at small sizes (the larger size keeps its own 400 frames).
// K = 16P: room for resumable iterations to pile up between retirements (seed 001 ran x264 at K = 10P).
std::vector<std::string> params_for(unsigned P, const std::string& size) {
    std::vector<std::string> params = {"bframes=0", "K=" + std::to_string(16 * P)};
    if (size != "large") params.push_back("frames=60");
    return params;
}

class earliest_first final : public lesson {
public:
    const char* name() const override { return "earliest-first"; }
    const char* title() const override {
        return "Resume the earliest suspended iteration: Cheetah-Piper's optimization against PIPER";
    }
    const char* seeds() const override { return "003 §3.3, §4, Figs. 8–10; 001 §3, §9"; }

    std::vector<run_spec> runs(const options& o) const override {
        std::vector<run_spec> v;
        for (bool virtual_time : {false, true}) {
            const unsigned P = virtual_time ? virtual_workers : o.workers;
            for (int pair = 1; pair <= pairs; ++pair)   // interleaved, so a burst of load hits both policies
                for (const char* policy : {"piper", "piper-earliest"}) {
                    v.push_back({.key = key(policy, pair, virtual_time),
                                 .workload = std::string(lesson_workload),
                                 .policy = policy,
                                 .params = params_for(P, o.size),
                                 .workers = P,
                                 .virtual_time = virtual_time});
                }
        }
        return v;
    }

    story tell(const lesson_data& data) const override {
        const comparison c = compare(data), virt = compare(data, true);
        return tell_story(findings, findings_of(c, virt), steps, values_of(c, virt));
    }
};

}   // namespace

std::unique_ptr<lesson> make_earliest_first_lesson() { return std::make_unique<earliest_first>(); }

}   // namespace pipescope::lessons
