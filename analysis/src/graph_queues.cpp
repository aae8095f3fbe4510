// Queue fills and footprint of stage-graph runs (graph_queues.hpp).
#include <pipescope/analysis/graph_queues.hpp>

#include <algorithm>

namespace pipescope::analysis {

void counter_peak_mean(const tm::track& t, std::uint64_t start, std::uint64_t end, double& peak, double& mean) {
    peak = 0;
    mean = 0;
    if (t.counters.empty() || end <= start) return;
    double area = 0;
    for (std::size_t i = 0; i < t.counters.size(); ++i) {
        const tm::counter_sample& c = t.counters[i];
        peak = std::max(peak, c.value);
        const std::uint64_t from = std::max(c.ts, start);
        const std::uint64_t to = i + 1 < t.counters.size() ? std::min(t.counters[i + 1].ts, end) : end;
        if (to > from) area += c.value * static_cast<double>(to - from);
    }
    mean = area / static_cast<double>(end - start);
}

graph_report compute_graph(const run_scope& scope, const run_meta& meta) {
    graph_report out;
    if (meta.program_kind != vocab::graph_program || !scope.model) return out;
    const tm::trace_model& m = *scope.model;
    auto counter_track = [&](std::string_view name) -> const tm::track* {
        for (std::uint32_t t : scope.counters)
            if (m.tracks[t].name == name) return &m.tracks[t];
        return nullptr;
    };
    for (const queue_meta& q : meta.queues) {
        queue_fill f;
        f.name = q.name;
        f.capacity_packets = q.capacity_packets;
        f.unbounded = q.unbounded;
        f.ordered = q.ordered;
        f.backward = q.backward;
        if (const tm::track* t = counter_track(q.counter.empty() ? vocab::queue_packets(q.name) : q.counter)) {
            counter_peak_mean(*t, scope.start, scope.end, f.peak_packets, f.mean_packets);
            f.samples = t->counters.size();
        }
        f.over_capacity = !f.unbounded && f.capacity_packets > 0 && f.peak_packets > f.capacity_packets;
        out.queues.push_back(std::move(f));
    }
    const tm::track* packets = counter_track(vocab::footprint_packets);
    const tm::track* bytes = counter_track(vocab::footprint_bytes);
    if (packets) counter_peak_mean(*packets, scope.start, scope.end, out.peak_packets, out.mean_packets);
    if (bytes) counter_peak_mean(*bytes, scope.start, scope.end, out.peak_bytes, out.mean_bytes);
    out.available = packets != nullptr;
    out.footprint_derived = packets && packets->derived;

    const tm::string_id full = find_string(m, vocab::stage_blocked_full), empty = find_string(m, vocab::stage_blocked_empty),
                        order = find_string(m, vocab::stage_blocked_order), preempted = find_string(m, vocab::preempted),
                        done = find_string(m, vocab::stage_done);
    const tm::string_id queue_ops[] = {find_string(m, vocab::reserve_push), find_string(m, vocab::reserve_pop),
                                       find_string(m, vocab::commit_push), find_string(m, vocab::commit_pop)};
    for (std::uint32_t w : scope.workers)
        for (const tm::instant& i : m.tracks[w].instants) {
            if (i.name == full) ++out.blocked_full;
            else if (i.name == empty) ++out.blocked_empty;
            else if (i.name == order) ++out.blocked_order;
            else if (i.name == preempted) ++out.preemptions;
            else if (i.name == done) ++out.stages_done;
            else if (std::find(std::begin(queue_ops), std::end(queue_ops), i.name) != std::end(queue_ops))
                ++out.queue_operations;
        }
    return out;
}

}   // namespace pipescope::analysis
