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
#include "lesson.hpp"

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
    double live_mean = 0;      // time-weighted "live iterations"
    std::uint64_t makespan = 0;
};

std::vector<wait_state> waits_of(const tm::trace_model& m, const tm::run& run) {
    const tm::pipeline_dag& dag = run.dag;
    std::vector<std::uint32_t> cross_source(dag.nodes.size(), tm::no_index);
    for (const tm::dag_edge& e : dag.edges)
        if (e.kind == tm::dag_edge_kind::cross) cross_source[e.to] = e.from;
    std::map<std::uint64_t, std::uint64_t> last_end;   // iteration -> end of its last node
    for (const tm::dag_node& n : dag.nodes) last_end[n.iteration] = std::max(last_end[n.iteration], n.end);

    constexpr std::string_view prefix = vocab::waiting_at_stage;
    std::vector<wait_state> waits;
    for (std::uint32_t line : run.lines) {
        if (line == tm::no_index) continue;
        for (const tm::slice& s : m.tracks[line].slices) {
            const std::string& name = m.str(s.name);
            if (name.compare(0, prefix.size(), prefix) != 0) continue;   // running, waiting to retire
            const auto iteration = m.uint_arg(s, vocab::arg_key::iteration);
            if (!iteration) continue;
            wait_state w;
            w.iteration = *iteration;
            w.stage = std::strtoull(name.c_str() + prefix.size(), nullptr, 10);
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
    p.makespan = r.report.makespan();
    p.live_mean = live_mean(m, run, p.makespan);
    return p;
}

// Both runs of one policy, pooled.
struct pooled {
    std::uint64_t waits = 0, resumptions = 0, earliest = 0, out_of_order = 0, early = 0, lag_count = 0, makespan = 0;
    std::array<std::uint64_t, 3> at_point{};
    double lag_sum = 0, idle_share_sum = 0, live_sum = 0;
    std::vector<double> idle_shares;
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
    }
    double mean_lag_us() const { return lag_count ? lag_sum / static_cast<double>(lag_count) / 1e3 : 0; }
    double early_share() const { return waits ? static_cast<double>(early) / static_cast<double>(waits) : 0; }
    double idle_share() const { return idle_shares.empty() ? 0 : idle_share_sum / static_cast<double>(idle_shares.size()); }
    double live() const { return idle_shares.empty() ? 0 : live_sum / static_cast<double>(idle_shares.size()); }
};

// Idle shares are a few percent: one decimal.
std::string percent1(double fraction) { return percent(fraction, 1); }

std::string key(const char* policy, int pair) { return std::string(policy) + "-" + std::to_string(pair); }

// What the story compares: both policies' pooled runs and the ratios drawn from them.
struct comparison {
    pooled piper, earliest;
    double lag_ratio = 0;        // mean resume lag, piper ÷ piper-earliest
    double earliest_share = 0;   // of piper-earliest's resumptions, taken from its list
    double idle_change = 0;      // idle + stall share, piper-earliest minus piper (< 0: less idle)
    bool idle_lower_in_every_pair = true;
    double time_ratio = 0;   // run time, piper ÷ piper-earliest
    unsigned P = 0;
};

comparison compare(const lesson_data& data) {
    comparison c;
    for (int pair = 1; pair <= pairs; ++pair) {
        c.piper.add(profile(data.run(key("piper", pair))));
        c.earliest.add(profile(data.run(key("piper-earliest", pair))));
    }
    const pooled &piper = c.piper, &earliest = c.earliest;
    c.lag_ratio = earliest.mean_lag_us() > 0 ? piper.mean_lag_us() / earliest.mean_lag_us() : 0;
    c.earliest_share =
        earliest.resumptions ? static_cast<double>(earliest.earliest) / static_cast<double>(earliest.resumptions) : 0;
    c.idle_change = earliest.idle_share() - piper.idle_share();
    for (int k = 0; k < pairs; ++k)
        c.idle_lower_in_every_pair = c.idle_lower_in_every_pair && earliest.idle_shares[k] + 0.03 < piper.idle_shares[k];
    c.time_ratio = earliest.makespan ? static_cast<double>(piper.makespan) / static_cast<double>(earliest.makespan) : 0;
    c.P = data.opts.workers;
    return c;
}

// "3.1% and 4.0%": the idle shares of a policy's runs.
std::string pair_shares(const pooled& p) {
    std::string t;
    for (double share : p.idle_shares) t += (t.empty() ? "" : " and ") + percent1(share);
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

story_values values_of(const comparison& c) {
    const pooled &piper = c.piper, &earliest = c.earliest;
    story_values v;
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
    v.push_back(fmt::arg("piper_pair_idle", pair_shares(piper)));
    v.push_back(fmt::arg("earliest_pair_idle", pair_shares(earliest)));
    v.push_back(fmt::arg("time_ratio", ratio(c.time_ratio)));
    v.push_back(fmt::arg("idle_difference", idle_difference(c)));
    v.push_back(
        fmt::arg("why_all_from_list", earliest.resumptions == 0
                                          ? "no iteration was suspended: with one worker each frame runs to its end"
                                          : "a resumption bypassed piper-earliest's list: its hooks are not in place"));
    return v;
}

std::vector<finding_measure> findings_of(const comparison& c) {
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
        {"idle_share_change", c.idle_change * 100, (c.idle_change <= 0 ? "" : "+") + fixed(c.idle_change * 100, 1) + " pt",
         c.idle_lower_in_every_pair},
        {"time_ratio", c.time_ratio, ratio(c.time_ratio), c.time_ratio > 0.85 && c.time_ratio < 1.18},
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
     "With 8–16 cores the frame's rows are not enough for every worker and idle time is where a late resumption shows "
     "up (Figs. 8–10 measured at up to 16 cores)"},
    {"time_ratio", "run time, piper ÷ piper-earliest (both pairs)",
     "003 §6, Figs. 2–7: processing times almost indistinguishable for dedup and ferret; on pipe-fib the optimized "
     "runtime was slower",
     "the run times differ by more than 15 % here: on a loaded 2-core machine two runs of the same policy differ as "
     "much"},
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
    {"Try next",
     "With more cores than rows in flight the lag turns into idle time: `pipescope lesson earliest-first --workers 8` "
     "on an 8-core machine. Turn lazy enabling off and PIPER checks the next iteration at every stage, so the lag "
     "vanishes under both policies: `pipescope run x264 --policy piper --param bframes=0 --param frames=60 --param "
     "K=32 --param lazy=off -o eager.pftrace`. The workloads whose iterations only wait to retire in order (ferret, "
     "dedup, pipe-fib-256) resume identically under both.",
     {"timeline", std::nullopt, std::nullopt, std::nullopt, true}},
};

class earliest_first final : public lesson {
public:
    const char* name() const override { return "earliest-first"; }
    const char* title() const override {
        return "Resume the earliest suspended iteration: Cheetah-Piper's optimization against PIPER";
    }
    const char* seeds() const override { return "003 §3.3, §4, Figs. 8–10; 001 §3, §9"; }

    std::vector<run_spec> runs(const options& o) const override {
        // IPPP… (bframes=0): every frame after an I-frame waits row by row for the previous one. 60
        // frames give a few dozen suspensions per run at small sizes (the larger size keeps its own
        // 400 frames). K = 16P: room for resumable iterations to pile up between retirements (seed
        // 001 ran x264 at K = 10P).
        std::vector<std::string> params = {"bframes=0", "K=" + std::to_string(16 * o.workers)};
        if (o.size != "large") params.push_back("frames=60");
        std::vector<run_spec> v;
        for (int pair = 1; pair <= pairs; ++pair)   // interleaved, so a burst of load hits both policies
            for (const char* policy : {"piper", "piper-earliest"}) {
                v.push_back({.key = key(policy, pair),
                             .workload = std::string(lesson_workload),
                             .policy = policy,
                             .params = params});
            }
        return v;
    }

    story tell(const lesson_data& data) const override {
        const comparison c = compare(data);
        return tell_story(findings, findings_of(c), steps, values_of(c));
    }
};

}   // namespace

std::unique_ptr<lesson> make_earliest_first_lesson() { return std::make_unique<earliest_first>(); }

}   // namespace pipescope::lessons
