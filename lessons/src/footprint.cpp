// Lesson "footprint": how much memory the queues of a stage graph hold under GRAMPS, breadth-first
// and task-stealing scheduling, and what backpressure has to do with it (seed 004 §III-A "Footprint
// and Backpressure", §IV, §V-C, Table III).
//
// The paper: GRAMPS bounds every forward queue and makes a stage whose output is full not runnable
// (backpressure), and runs the deepest stages first; its footprints are "always below the maximum
// queue sizes". Breadth-first runs one stage at a time over all of its input, so a whole stage's
// output sits in the queues: the ray tracer's worst case is 447 KB under GRAMPS and 78.7 MB under
// breadth-first. Task-stealing (Cilk-style, unbounded queues) stays close to GRAMPS on the ray tracer.
//
// Everything here is read from the traces (analysis/graph_queues.hpp): the footprint counters
// (packets and bytes in use in every queue at once, peak and time-weighted mean), each queue's peak
// against its capacity, and the "stage blocked: queue full" instants, which are backpressure.
#include <pipescope/lessons/lesson.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pipescope::lessons {

namespace {

namespace an = pipescope::analysis;

// ray-1: the ray tracer with reflection bounces (seed 004 Fig. 1, Table III's ray-1), a cycle whose
// backward queue GRAMPS leaves unbounded (§III-A).
constexpr const char* workload = "ray-1";

using analysis::numbers::bytes;

double ratio_of(double a, double b) { return b > 0 ? a / b : (a > 0 ? 1e9 : 1); }

// Where the run's footprint peaked, as a fraction of the longest run's length (runs aligned at
// their starts, as the steps show them).
double peak_fraction(const recorded& r, double longest) {
    for (const an::counter_stats& c : r.report.stats.counters)
        if (c.name == an::vocab::footprint_bytes && longest > 0 && c.peak_ts >= r.report.start)
            return std::clamp(static_cast<double>(c.peak_ts - r.report.start) / longest, 0.0, 1.0);
    return 0.5;
}

// The fullest bounded queue: its peak over its capacity (never above 1 under backpressure).
struct fullest {
    double fill = 0;
    std::string queue;
    double peak = 0, capacity = 0;
    std::size_t over = 0;   // bounded queues whose peak exceeded their capacity
};

fullest fullest_bounded_queue(const an::graph_report& g) {
    fullest f;
    for (const an::queue_fill& q : g.queues) {
        if (q.unbounded || q.capacity_packets <= 0) continue;
        if (q.over_capacity) ++f.over;
        const double fill = q.peak_packets / q.capacity_packets;
        if (fill > f.fill) f = {fill, q.name, q.peak_packets, q.capacity_packets, f.over};
    }
    return f;
}

// The queue that held the most packets at its peak, or nullptr.
const an::queue_fill* largest_queue(const an::graph_report& g) {
    const an::queue_fill* largest = nullptr;
    for (const an::queue_fill& q : g.queues)
        if (!largest || q.peak_packets > largest->peak_packets) largest = &q;
    return largest;
}

// What the story quotes, measured from the three runs.
struct measures {
    const an::graph_report &gramps, &breadth, &stealing;
    double peak_ratio, mean_ratio, stealing_peak_ratio;   // breadth-first (task-stealing) ÷ GRAMPS
    fullest gramps_fullest;
    const an::queue_fill *stealing_largest, *breadth_largest;
    double at_breadth_peak, at_gramps_peak;   // where the footprints peak (steps' cursors)
    unsigned workers;
};

measures measure(const lesson_data& data) {
    const recorded& gramps = data.run("gramps");
    const recorded& breadth = data.run("breadth-first");
    const recorded& stealing = data.run("task-stealing");
    const an::graph_report& g = gramps.report.graph;
    const an::graph_report& b = breadth.report.graph;
    const an::graph_report& t = stealing.report.graph;
    if (!g.available || !b.available || !t.available)
        throw std::runtime_error("footprint: a run's trace has no footprint counters (not a stage-graph run?)");
    const double longest =
        static_cast<double>(std::max({gramps.report.makespan(), breadth.report.makespan(), stealing.report.makespan()}));
    return {g,
            b,
            t,
            ratio_of(b.peak_bytes, g.peak_bytes),
            ratio_of(b.mean_bytes, g.mean_bytes),
            ratio_of(t.peak_bytes, g.peak_bytes),
            fullest_bounded_queue(g),
            largest_queue(t),
            largest_queue(b),
            peak_fraction(breadth, longest),
            peak_fraction(gramps, longest),
            gramps.spec.workers};
}

story_values values_of(const measures& m) {
    const fullest& f = m.gramps_fullest;
    story_values v;
    v.push_back(fmt::arg("gramps_peak", bytes(m.gramps.peak_bytes)));
    v.push_back(fmt::arg("breadth_peak", bytes(m.breadth.peak_bytes)));
    v.push_back(fmt::arg("stealing_peak", bytes(m.stealing.peak_bytes)));
    v.push_back(fmt::arg("gramps_mean", bytes(m.gramps.mean_bytes)));
    v.push_back(fmt::arg("breadth_mean", bytes(m.breadth.mean_bytes)));
    v.push_back(fmt::arg("stealing_mean", bytes(m.stealing.mean_bytes)));
    v.push_back(fmt::arg("peak_ratio", ratio(m.peak_ratio)));
    v.push_back(fmt::arg("mean_ratio", ratio(m.mean_ratio)));
    v.push_back(fmt::arg("stealing_peak_ratio", ratio(m.stealing_peak_ratio)));
    v.push_back(fmt::arg("fullest_queue", f.queue));
    v.push_back(fmt::arg("fullest_peak", fixed(f.peak, 0)));
    v.push_back(fmt::arg("fullest_capacity", fixed(f.capacity, 0)));
    v.push_back(fmt::arg("why_no_fill",
                         f.over ? std::to_string(f.over) + " bounded queue(s) held more than their capacity: a runtime bug"
                                : "no bounded queue was used"));
    v.push_back(fmt::arg("gramps_blocked_full", m.gramps.blocked_full));
    v.push_back(fmt::arg("breadth_blocked_full", m.breadth.blocked_full));
    v.push_back(fmt::arg("why_no_backpressure", m.gramps.blocked_full == 0 ? "GRAMPS' queues never filled on this run"
                                                                           : "breadth-first reported full queues"));
    const an::queue_fill* sl = m.stealing_largest;
    v.push_back(fmt::arg("stealing_largest",
                         sl ? "its " + sl->name + " queue alone reached " + fixed(sl->peak_packets, 0) + " packets" : ""));
    const an::queue_fill* bl = m.breadth_largest;
    v.push_back(fmt::arg("breadth_largest",
                         bl ? bl->name + ", peaked at " + fixed(bl->peak_packets, 0) + " packets" : std::string("none")));
    v.push_back(fmt::arg("workers", std::to_string(m.workers) + (m.workers == 1 ? " worker" : " workers")));
    return v;
}

std::vector<finding_measure> findings_of(const measures& m) {
    const fullest& f = m.gramps_fullest;
    return {
        {"peak_ratio", m.peak_ratio, ratio(m.peak_ratio), m.peak_ratio >= 10},
        {"mean_ratio", m.mean_ratio, ratio(m.mean_ratio), m.mean_ratio >= 10},
        {"gramps_peak_fill", f.fill, percent(f.fill), f.over == 0 && f.fill <= 1.0 && f.fill > 0},
        {"backpressure_events", static_cast<double>(m.gramps.blocked_full), std::to_string(m.gramps.blocked_full),
         m.gramps.blocked_full > 0 && m.breadth.blocked_full == 0},
        {"task_stealing_peak_ratio", m.stealing_peak_ratio, ratio(m.stealing_peak_ratio), m.stealing_peak_ratio <= 3},
    };
}

const finding_text findings[] = {
    {"peak_ratio", "peak footprint (bytes in all queues at once), breadth-first ÷ GRAMPS ({breadth_peak} vs {gramps_peak})",
     "Table III, ray-1: 78706.5 KB under breadth-first vs 447.4 KB under GRAMPS (176×); fm 563173 KB vs 4276.8 KB (132×)",
     "breadth-first's stages produced little output at a time on this input"},
    {"mean_ratio", "mean footprint over the run (time-weighted), breadth-first ÷ GRAMPS ({breadth_mean} vs {gramps_mean})",
     "Table III, ray-1: 31257.1 KB vs 361.1 KB on average (87×)", "breadth-first's queues held little for most of this run"},
    {"gramps_peak_fill",
     "GRAMPS: the fullest bounded queue's peak against its capacity ({fullest_queue}: {fullest_peak} of {fullest_capacity} "
     "packets)",
     "§V-B: GRAMPS' footprints are \"always below the maximum queue sizes, due to backpressure providing strict footprint "
     "bounds\"",
     "{why_no_fill}"},
    {"backpressure_events",
     "stages stopped by a full output queue (backpressure) under GRAMPS (breadth-first: {breadth_blocked_full})",
     "§III-A: when a queue is full, \"the stages that output to that queue are marked as non-executable\"; breadth-first "
     "(§IV-B) and task-stealing (§IV-A) have unbounded queues, so nothing ever pushes back",
     "{why_no_backpressure}"},
    {"task_stealing_peak_ratio", "peak footprint, task-stealing ÷ GRAMPS ({stealing_peak} vs {gramps_peak})",
     "Table III, ray-1: task-stealing 424.6 KB vs GRAMPS 447.4 KB at the peak (0.95×): on simple graphs task-stealing "
     "matches GRAMPS' footprint (§V-C); without backpressure it grows on the complex ones (tde: 36231 KB vs 6662 KB; fm: "
     "2245 KB vs 1672 KB on average)",
     "task-stealing has no backpressure: nothing stops a stage from running ahead of its consumer when the two workers' "
     "task orders let it ({stealing_largest}). With one worker, `--workers 1`, its footprint stays a few KiB: the growth "
     "comes from two workers interleaving"},
};

// The steps, at the moments the footprints peak.
std::vector<step_text> steps(const measures& m) {
    return {
        {"What to look at",
         "The stage graph view shows ray-1 (tiler → camera → intersect → shade → shadow intersect → frame buffer, with "
         "shade's reflection rays going back to intersect) three times: GRAMPS, breadth-first and task-stealing, {workers} "
         "each, at the moment breadth-first's footprint peaks. Each queue's bar is its packets in use against its capacity "
         "(orange: full); the unbounded queues of breadth-first run far past theirs.",
         aligned("graph", m.at_breadth_peak)},
        {"What the paper found",
         "GRAMPS (seed 004 §III-A) bounds every forward queue and marks a stage whose output is full as not runnable: "
         "backpressure. Its footprints stay \"always below the maximum queue sizes\" (§V-B). Breadth-first (§IV-B) runs "
         "one stage at a time over all of its input, so the queues hold a whole stage's output: the ray tracer's worst "
         "case is 447 KB under GRAMPS and 78.7 MB under breadth-first (Table III, ray-1; 361 KB vs 31.3 MB on average). "
         "Task-stealing matches GRAMPS there (425 KB). The compare view lists the three runs.",
         aligned("compare")},
        {"What this run shows",
         "Peak footprint: GRAMPS {gramps_peak}, breadth-first {breadth_peak} ({peak_ratio}), task-stealing "
         "{stealing_peak} ({stealing_peak_ratio}). Mean: {gramps_mean}, {breadth_mean} ({mean_ratio}), {stealing_mean}. "
         "GRAMPS' fullest bounded queue reached {fullest_peak} of its {fullest_capacity} packets; its stages were "
         "stopped by a full queue {gramps_blocked_full} times, breadth-first's never ({breadth_blocked_full}). "
         "Breadth-first's largest queue, {breadth_largest}: a whole stage's output waiting for the next stage.",
         aligned("graph", m.at_breadth_peak)},
        {"Backpressure at work",
         "The same graphs when GRAMPS' own footprint peaks: its queues are at or near capacity, and the stage in front "
         "of a full queue waits instead of producing more — each such stop is a \"stage blocked: queue full\" instant "
         "in the trace ({gramps_blocked_full} of them). Only the backward queue of the bounce cycle (rays) is exempt "
         "(§III-A: no backpressure on backward queues, or the cycle could deadlock).",
         aligned("graph", m.at_gramps_peak)},
        {"Try next",
         "The same comparison on the FM radio, the paper's largest gap (132×): `pipescope run fm-radio --policy "
         "breadth-first --workers 2 -o bf.pftrace` and `--policy gramps -o gramps.pftrace`, then `pipescope stats "
         "bf.pftrace gramps.pftrace`. Task-stealing without a thief: `pipescope run ray-1 --policy task-stealing "
         "--workers 1`. A larger picture: `pipescope lesson footprint --size large`.",
         aligned("compare")},
    };
}

class footprint final : public lesson {
public:
    const char* name() const override { return "footprint"; }
    const char* title() const override {
        return "Footprint: GRAMPS' bounded queues and backpressure against breadth-first and task-stealing";
    }
    const char* seeds() const override { return "004 §III-A, §IV, §V-C, Table III"; }

    std::vector<run_spec> runs(const options&) const override {
        return {{.key = "gramps", .workload = workload, .policy = "gramps"},
                {.key = "breadth-first", .workload = workload, .policy = "breadth-first"},
                {.key = "task-stealing", .workload = workload, .policy = "task-stealing"}};
    }

    story tell(const lesson_data& data) const override {
        const measures m = measure(data);
        return tell_story(findings, findings_of(m), steps(m), values_of(m));
    }
};

}   // namespace

std::unique_ptr<lesson> make_footprint_lesson() { return std::make_unique<footprint>(); }

}   // namespace pipescope::lessons
