// Lesson "imbalance": ferret's six-stage pipeline with threads bound to stages leaves most threads
// waiting, while work stealing keeps every worker busy (seed 000 §2.1, §2.3, §4.1, Tables 1–2).
//
// The measurement reads only the traces' time breakdown: for each thread, the share of its
// lifetime spent waiting (idle, stall, parked: a bind-to-stage thread blocked on a full queue or
// waiting on an empty one, a worker with nothing to steal). Waiting shares are robust on a loaded
// machine: a thread the OS preempts in the middle of a node still shows as working, so load can
// only shrink the contrast, never create it. Makespans enter only as a ratio between the runs.
//
// The step "On 6 virtual cores" runs ferret again on 6 virtual cores (docs/virtual.md): one thread
// per stage under bind-to-stage (Table 1's first row) against piper on 6 virtual workers. In virtual
// time the machine's load is gone, so there the efficiency itself is measured: the DAG's work (its
// nodes' virtual durations, their CPU time) over P times the pipeline's span.
#include <pipescope/lessons/lesson.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace pipescope::lessons {

namespace {

namespace an = pipescope::analysis;

// Where one thread's time went, from the run's breakdown.
struct thread_time {
    std::string name;
    double lifetime = 0;   // ns from its first event to its last (the breakdown's span minus untraced)
    double waiting = 0;    // ns idle, stalled or parked
    double busy() const { return lifetime > 0 ? 1.0 - waiting / lifetime : 0.0; }
};

struct thread_summary {
    std::vector<thread_time> threads;
    double waiting_share = 0;              // all threads' waiting time / all threads' lifetimes
    std::size_t busiest = 0, idlest = 0;   // indices into threads (valid when threads is not empty)
    const thread_time* most() const { return threads.empty() ? nullptr : &threads[busiest]; }
    const thread_time* least() const { return threads.empty() ? nullptr : &threads[idlest]; }
    double spread() const { return threads.empty() ? 0.0 : threads[busiest].busy() - threads[idlest].busy(); }
};

// The threads that carry the pipeline: under bind-to-stage its stage threads (the scheduler's pool
// workers stay parked there and run nothing, docs/runtime.md), otherwise the workers.
thread_summary threads_of(const recorded& r) {
    thread_summary s;
    const bool stage_threads = an::vocab::classify_policy(r.spec.policy) == an::vocab::policy_family::bound_threads;
    for (const an::worker_breakdown& w : r.report.breakdown.workers) {
        // The trace model numbers stage threads after the workers, so tell them apart by name:
        // "worker w" for the pool, "stage j · thread t" for a stage thread (docs/runtime.md).
        const bool pool_worker = an::vocab::starts_with(w.name, an::vocab::worker_prefix);
        if (stage_threads && pool_worker) continue;
        const auto& t = w.time;
        thread_time tt;
        tt.name = w.name;
        if (stage_threads) {
            // "stage 1 · thread 0" -> "stage 1 · thread 0 (segment)": say which stage it serves.
            const long j = r.model->tracks[w.track].stage;
            for (const an::stage_rate& st : r.report.queueing.stages)
                if (static_cast<long>(st.index) == j && st.name.find("· ") != std::string::npos)
                    tt.name += " (" + st.name.substr(st.name.find("· ") + 3) + ")";
        }
        tt.lifetime = static_cast<double>(t.span - t[an::time_category::untraced]);
        tt.waiting =
            static_cast<double>(t[an::time_category::idle] + t[an::time_category::stall] + t[an::time_category::parked]);
        if (tt.lifetime > 0) s.threads.push_back(tt);
    }
    double lifetime = 0, waiting = 0;
    for (std::size_t i = 0; i < s.threads.size(); ++i) {
        const thread_time& t = s.threads[i];
        lifetime += t.lifetime;
        waiting += t.waiting;
        if (t.busy() > s.threads[s.busiest].busy()) s.busiest = i;
        if (t.busy() < s.threads[s.idlest].busy()) s.idlest = i;
    }
    s.waiting_share = lifetime > 0 ? waiting / lifetime : 0.0;
    return s;
}

// From the first node's start to the last node's end: the pipeline itself, without the recording's
// set-up and the check of the result that the run's span also holds.
double pipeline_span(const recorded& r) {
    const auto& nodes = r.model->runs.at(r.report.run).dag.nodes;
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
    for (const auto& n : nodes) {
        first = std::min(first, n.start);
        last = std::max(last, n.end);
    }
    return last > first ? static_cast<double>(last - first) : static_cast<double>(r.report.makespan());
}

// The stage with the smallest c_i / Tser_i under bind-to-stage (seed 000 eq. 9 with eq. 2 case 1).
const an::stage_rate* slowest_stage(const an::queueing_bounds& q) {
    const an::stage_rate* slowest = nullptr;
    for (const an::stage_rate& s : q.stages)
        if (s.tser > 0 && (!slowest || s.rate_stage < slowest->rate_stage)) slowest = &s;
    return slowest;
}

std::string stage_label(const an::stage_rate& s) {
    const auto dot = s.name.find("· ");
    return dot == std::string::npos ? s.name : s.name.substr(dot + 3) + " (stage " + std::to_string(s.index) + ")";
}

std::string stage_word(const an::stage_rate& s) {
    const auto dot = s.name.find("· ");
    return dot == std::string::npos ? an::vocab::numbered(an::vocab::stage_prefix, s.index) : s.name.substr(dot + 3);
}

std::string busy_of(const thread_time* t) { return t ? t->name + " " + percent(t->busy()) : "none"; }

// The analysis' verdicts on a run, by rule id (docs/analysis.md, "Verdicts"), e.g. "balanced".
std::string rules_of(const recorded& r) {
    std::string rules;
    for (const an::verdict& v : r.report.verdicts) rules += (rules.empty() ? "" : ", ") + v.rule;
    return rules.empty() ? "none" : rules;
}

std::string points(double fraction) { return fixed(fraction * 100, 0) + " points"; }

// The efficiency of a virtual run: its work (the nodes' durations: their CPU time, no core being
// shared with six threads on six cores) / (P x the pipeline's span), seed 000's speedup / cores with
// the serial time taken as the work.
double virtual_efficiency(const recorded& r) {
    double work = 0;
    for (const auto& n : r.model->runs.at(r.report.run).dag.nodes) work += static_cast<double>(n.end - n.start);
    const double span = pipeline_span(r);
    return span > 0 && r.spec.workers > 0 ? work / (span * r.spec.workers) : 0.0;
}

// Thresholds of `holds`. The paper's bind-to-stage ferret kept its threads about 20 % busy
// (Table 1: efficiency 19.65 % with 6 threads on 6 cores) and its work-stealing ferret about 76 %
// (Table 2, 2 cores); the margins leave room for a loaded 2-core machine.
constexpr double bts_waiting_at_least = 0.40;
constexpr double ws_waiting_at_most = 0.20;
constexpr double bts_spread_at_least = 0.50;
constexpr double ws_spread_at_most = 0.20;
// On 6 virtual cores: Table 1's 19.65 % for bind-to-stage, Table 2's 72-77 % for work stealing.
constexpr double bts_virtual_efficiency_at_most = 0.35;
constexpr double ws_virtual_efficiency_at_least = 0.60;
constexpr unsigned virtual_cores = 6;

// What the story quotes, measured from the three runs.
struct measures {
    thread_summary bts, piper, tbb;
    unsigned P = 0, bts_workers = 0;
    const an::stage_rate* slow = nullptr;   // the bind-to-stage bottleneck
    double slow_share = 0;                  // its share of the work per item
    double speedup = 0, tbb_speedup = 0;    // bind-to-stage pipeline span / piper's (tbb's)
    std::string rules_bts, rules_piper, rules_tbb;
    double bts_virtual = 0, piper_virtual = 0;   // efficiencies on 6 virtual cores
    double bts_virtual_span = 0, piper_virtual_span = 0;
};

measures measure(const lesson_data& data) {
    const recorded& bts = data.run("bind-to-stage");
    const recorded& piper = data.run("piper");
    const recorded& tbb = data.run("tbb");
    measures m;
    m.bts = threads_of(bts);
    m.piper = threads_of(piper);
    m.tbb = threads_of(tbb);
    m.P = piper.spec.workers;
    m.bts_workers = bts.spec.workers;
    m.slow = slowest_stage(bts.report.queueing);
    const double W = bts.report.queueing.work_per_item;
    m.slow_share = m.slow && W > 0 ? m.slow->tser / W : 0.0;
    m.speedup = pipeline_span(bts) / std::max(1.0, pipeline_span(piper));
    m.tbb_speedup = pipeline_span(bts) / std::max(1.0, pipeline_span(tbb));
    m.rules_bts = rules_of(bts);
    m.rules_piper = rules_of(piper);
    m.rules_tbb = rules_of(tbb);
    const recorded& bts_v = data.run("bind-to-stage-virtual");
    const recorded& piper_v = data.run("piper-virtual");
    m.bts_virtual = virtual_efficiency(bts_v);
    m.piper_virtual = virtual_efficiency(piper_v);
    m.bts_virtual_span = pipeline_span(bts_v);
    m.piper_virtual_span = pipeline_span(piper_v);
    return m;
}

story_values values_of(const measures& m) {
    story_values v;
    v.push_back(fmt::arg("bts_threads", m.bts.threads.size()));
    v.push_back(fmt::arg("bts_workers", m.bts_workers));
    v.push_back(fmt::arg("P", m.P));
    v.push_back(fmt::arg("bts_waiting", percent(m.bts.waiting_share)));
    v.push_back(fmt::arg("piper_waiting", percent(m.piper.waiting_share)));
    v.push_back(fmt::arg("tbb_waiting", percent(m.tbb.waiting_share)));
    v.push_back(fmt::arg("bts_most", busy_of(m.bts.most())));
    v.push_back(fmt::arg("bts_least", busy_of(m.bts.least())));
    v.push_back(fmt::arg("piper_most", busy_of(m.piper.most())));
    v.push_back(fmt::arg("piper_least", busy_of(m.piper.least())));
    v.push_back(fmt::arg("bts_spread", points(m.bts.spread())));
    v.push_back(fmt::arg("piper_spread", points(m.piper.spread())));
    v.push_back(fmt::arg("bts_waiting_at_least", percent(bts_waiting_at_least)));
    v.push_back(fmt::arg("ws_waiting_at_most", percent(ws_waiting_at_most)));
    v.push_back(fmt::arg("slow_stage", m.slow ? stage_label(*m.slow) + ", " + percent(m.slow_share) + " of the work per item"
                                              : std::string("none")));
    v.push_back(fmt::arg("slow_name", m.slow ? stage_label(*m.slow) : "the slowest stage"));
    v.push_back(fmt::arg("slow_word", m.slow ? stage_word(*m.slow) : "the slowest"));
    v.push_back(fmt::arg("slow_share", percent(m.slow_share)));
    v.push_back(fmt::arg("speedup", ratio(m.speedup)));
    v.push_back(fmt::arg("tbb_speedup", ratio(m.tbb_speedup)));
    v.push_back(fmt::arg("rules_bts", m.rules_bts));
    v.push_back(fmt::arg("rules_piper", m.rules_piper));
    v.push_back(fmt::arg("rules_tbb", m.rules_tbb));
    v.push_back(fmt::arg("V", virtual_cores));
    v.push_back(fmt::arg("bts_virtual", percent(m.bts_virtual)));
    v.push_back(fmt::arg("piper_virtual", percent(m.piper_virtual)));
    v.push_back(fmt::arg("bts_virtual_ms", fixed(m.bts_virtual_span / 1e6, 1) + " ms"));
    v.push_back(fmt::arg("piper_virtual_ms", fixed(m.piper_virtual_span / 1e6, 1) + " ms"));
    return v;
}

std::vector<finding_measure> findings_of(const measures& m) {
    const thread_summary &b = m.bts, &p = m.piper, &t = m.tbb;
    return {
        {"bts_waiting_share", b.waiting_share, percent(b.waiting_share), b.waiting_share >= bts_waiting_at_least},
        {"piper_waiting_share", p.waiting_share, percent(p.waiting_share), p.waiting_share <= ws_waiting_at_most},
        {"tbb_waiting_share", t.waiting_share, percent(t.waiting_share), t.waiting_share <= ws_waiting_at_most},
        {"bts_busy_spread", b.spread(), points(b.spread()), b.spread() >= bts_spread_at_least},
        {"piper_busy_spread", p.spread(), points(p.spread()), p.spread() <= ws_spread_at_most},
        {"bottleneck_stage", m.slow ? static_cast<double>(m.slow->index) : -1.0, m.slow ? stage_word(*m.slow) : "unknown",
         m.slow && !m.slow->serial && m.slow_share >= 0.5},
        {"speedup_ws_over_bts", m.speedup, ratio(m.speedup), m.speedup >= 1.2},
        {"bts_virtual_efficiency", m.bts_virtual, percent(m.bts_virtual),
         m.bts_virtual > 0 && m.bts_virtual <= bts_virtual_efficiency_at_most},
        {"piper_virtual_efficiency", m.piper_virtual, percent(m.piper_virtual),
         m.piper_virtual >= ws_virtual_efficiency_at_least},
    };
}

const finding_text findings[] = {
    {"bts_waiting_share", "share of the bind-to-stage threads' time spent waiting on a queue ({bts_threads} threads, c=1)",
     "Table 1: 6 threads on 6 cores (one per stage) reach a speedup of 1.18, an efficiency of 19.65 %: about 80 % of the "
     "threads' time does no work; Fig. 2(b) shows each stage's threads mostly waiting (§2.1)",
     "the threads waited less than {bts_waiting_at_least} of their time: the stages were more even on this input than "
     "in the paper"},
    {"piper_waiting_share", "share of the piper workers' time spent idle, stalled or parked (P={P})",
     "Table 2: work stealing (TBB) removes the imbalance: 76.2 % efficiency on 2 cores, the same for 6 stages as for 3 "
     "(75.4 %) at every core count (§4.1)",
     "the workers waited more than {ws_waiting_at_most} of their time: too few items in flight for P workers (raise K) "
     "or a tiny input"},
    {"tbb_waiting_share", "the same for the tbb workers (construct-and-run tokens, the paper's TBB pipeline)",
     "Table 2: the TBB pipeline's efficiency does not depend on the number of stages (§4.1)",
     "the workers waited more than {ws_waiting_at_most} of their time: too few tokens for P workers"},
    {"bts_busy_spread", "busiest minus least busy bind-to-stage thread ({bts_most}, {bts_least})",
     "§2.3: when the number of threads per stage is fixed, the stage with the most work per item becomes the "
     "bottleneck and the other stages' threads wait (Fig. 2(b))",
     "the stages' threads were about equally busy on this input"},
    {"piper_busy_spread", "busiest minus least busy piper worker ({piper_most}, {piper_least})",
     "§2.3, §3.3: with work stealing every worker takes whatever stage of whatever item is ready, so the load spreads "
     "evenly",
     "one worker waited much longer than the other: too few items in flight"},
    {"bottleneck_stage", "the stage with the smallest c/Tser under bind-to-stage ({slow_stage})",
     "Fig. 2(b): the rank stage is ferret's bottleneck under the Pthreads pipeline (§2.1); here another parallel stage "
     "carries the work, which is what matters: one stage, one thread",
     "no single parallel stage carries most of the work on this input"},
    {"speedup_ws_over_bts", "bind-to-stage pipeline time / piper pipeline time (a ratio of the two runs' pipeline spans)",
     "Tables 1–2: TBB runs ferret in 58.5 s on 8 cores (efficiency 72 %); the Pthreads pipeline with one thread per core "
     "needs 186.7 s on 10 cores (23.4 %) and 370.7 s on 6 (19.65 %)",
     "on a loaded machine the two runs do not get the same cores; the waiting shares above still show the imbalance, "
     "since a preempted thread counts as working"},
    {"bts_virtual_efficiency",
     "bind-to-stage efficiency on {V} virtual cores, one thread per stage (work / ({V} x pipeline span: {bts_virtual_ms}))",
     "Table 1: 6 threads on 6 cores, speedup 1.18, efficiency 19.65 % (§4.1)",
     "the threads kept more than a third of the cores busy: the stages were more even on this input than in the paper"},
    {"piper_virtual_efficiency",
     "piper efficiency on {V} virtual workers (work / ({V} x pipeline span: {piper_virtual_ms}))",
     "Table 2: work stealing keeps 72-77 % efficiency on 1 to 8 cores (§4.1)",
     "the workers idled: too few items in flight for {V} workers on this input (a tiny size)"},
};

// Every step shows the runs aligned at their starts.
const view_move compare{"compare", std::nullopt, std::nullopt, std::nullopt, true};
const view_move timeline{"timeline", std::nullopt, std::nullopt, std::nullopt, true};

const step_text steps[] = {
    {"What to look at",
     "Ferret's runs on one axis, each from its own start (the last two, on virtual cores, are for the step 'On 6 "
     "virtual cores'). The top one binds a thread to each of the six stages "
     "(bind-to-stage, c=1: {bts_threads} threads; the pool's {bts_workers} workers above them stay parked). Only the "
     "{slow_word} thread (stage 1's orange) is solid with work; the load thread is blocked on a full queue and the "
     "threads of the light stages wait on empty queues. Below, piper and tbb run the same program on {P} workers that "
     "stay busy from start to end. The table under the runs compares makespans and work shares.",
     compare},
    {"What the paper found",
     "Navarro et al. ran PARSEC's Pthreads ferret with c threads per parallel stage: with 6 threads on 6 cores it reached "
     "a speedup of 1.18 (efficiency 19.65 %, Table 1), and its Fig. 2(b) shows why, each stage's threads mostly waiting "
     "on the slowest stage (rank, there). The same program on TBB's work-stealing pipeline kept 75–77 % efficiency on 1 "
     "to 4 cores (72 % on 8), and splitting it into 6 or 3 stages made no difference (Table 2): work stealing removes "
     "the load imbalance. The timeline shows this run's Fig. 2(b): each stage thread's track, work in the stage's "
     "colour, the rest labelled 'blocked: queue 1 full' or 'waiting: queue j empty'.",
     timeline},
    {"What this run shows",
     "The breakdown, per thread. Under bind-to-stage the {bts_threads} threads waited {bts_waiting} of their time; the "
     "busiest ({bts_most} not waiting) and the least busy ({bts_least}) are {bts_spread} apart, because {slow_name} "
     "carries {slow_share} of the work per item on one thread. The piper workers waited {piper_waiting} (spread "
     "{piper_spread}), the tbb workers {tbb_waiting}. The bind-to-stage pipeline took {speedup} as long as piper's and "
     "{tbb_speedup} as long as tbb's (a ratio of two runs on a shared machine: the waiting shares are the robust "
     "measure).",
     {"breakdown", std::nullopt, std::nullopt, std::nullopt, true}},
    {"A closer look",
     "A tenth of the longest run, zoomed in. Each item passes through every thread in turn, but only the {slow_word} "
     "thread has a node in flight most of the time; the others run a short node and go back to 'waiting: queue j "
     "empty' until it hands on the next item, and the load thread sits 'blocked: queue 1 full'. Scroll down to the "
     "piper and tbb runs: their nodes follow each other without gaps, since a worker that finishes a stage takes the "
     "next ready node of any stage.",
     {"timeline", std::nullopt, std::pair{0.45, 0.55}, std::nullopt, true}},
    {"Why, in words",
     "The explain view gives the analysis' verdicts in words (bind-to-stage: {rules_bts}; piper: {rules_piper}; tbb: "
     "{rules_tbb}). Under bind-to-stage, threads waiting for input on empty queues and a load thread blocked by a full "
     "queue are the imbalance itself; the queueing model (seed 000 eq. 2, case 1) bounds that run by its slowest stage, "
     "c/Tser of {slow_name}. Under work stealing the bound is P/W, the cores themselves.",
     {"explain", std::nullopt, std::nullopt, std::nullopt, true}},
    {"On 6 virtual cores",
     "The machine has fewer cores than the paper's, so ferret runs again on {V} virtual cores (docs/virtual.md): the "
     "real threads and workers in virtual time, each node costing its CPU time, the machine's load gone. With one "
     "thread per stage on {V} cores (Table 1's first row) bind-to-stage keeps {bts_virtual} of the cores busy "
     "(its pipeline took {bts_virtual_ms}); piper on {V} virtual workers keeps {piper_virtual} ({piper_virtual_ms}). "
     "The paper measured 19.65 % for the Pthreads pipeline and 72-77 % for TBB's work stealing. Efficiency here is "
     "the work (the nodes' CPU time) over {V} cores times the pipeline's span.",
     compare},
    {"Try next",
     "Oversubscribe instead (Table 1, right half: 10 threads on 2 cores reached 98.9 % efficiency): `pipescope run "
     "ferret --policy bind-to-stage --param c=2 -o bts-c2.pftrace`, then `pipescope stats bts-c2.pftrace` — the OS now "
     "fills the cores, yet most threads still wait. Collapse the middle stages (§3.1): `--param stages=3`. With more "
     "cores, `pipescope lesson imbalance --workers 8` gives the work-stealing runs more workers while bind-to-stage "
     "keeps its six threads.",
     compare},
};

class imbalance_lesson final : public lesson {
public:
    const char* name() const override { return "imbalance"; }
    const char* title() const override {
        return "Load imbalance: threads bound to ferret's stages wait, work stealing keeps every worker busy";
    }
    const char* seeds() const override { return "000 §2.1, §2.3, §4.1, Tables 1–2"; }

    std::vector<run_spec> runs(const options&) const override {
        // c=1: one thread per stage, six threads, as the first row of Table 1 (6 threads); the
        // default c = P would oversubscribe the cores, which Table 1's right half studies apart.
        // Each run is named after its policy, at the lesson's workers and size.
        return {{.key = "bind-to-stage", .workload = "ferret", .policy = "bind-to-stage", .params = {"stages=6", "c=1"}},
                {.key = "piper", .workload = "ferret", .policy = "piper", .params = {"stages=6"}},
                {.key = "tbb", .workload = "ferret", .policy = "tbb", .params = {"stages=6"}},
                // Table 1's 6 threads on 6 cores, on virtual cores: the efficiency, free of the machine's load.
                {.key = "bind-to-stage-virtual",
                 .workload = "ferret",
                 .policy = "bind-to-stage",
                 .params = {"stages=6", "c=1"},
                 .workers = virtual_cores,
                 .virtual_time = true},
                {.key = "piper-virtual",
                 .workload = "ferret",
                 .policy = "piper",
                 .params = {"stages=6"},
                 .workers = virtual_cores,
                 .virtual_time = true}};
    }

    story tell(const lesson_data& data) const override {
        const measures m = measure(data);
        return tell_story(findings, findings_of(m), steps, values_of(m));
    }
};

}   // namespace

std::unique_ptr<lesson> make_imbalance_lesson() { return std::make_unique<imbalance_lesson>(); }

}   // namespace pipescope::lessons
