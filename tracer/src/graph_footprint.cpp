// The footprint of stage-graph runs, derived from their queue counters (graph_footprint.hpp).
//
// The runtime records each queue's packets in use at every change and no footprint: the footprint
// is by definition the sum over the queues, so recording it too tripled the counter values of a
// graph trace. The sum is rebuilt here over the merged, time-ordered samples of the queue tracks.
// It is exact where the queue samples are (one recording thread, every sample written: counter
// quantum 0); otherwise a moment of the sum is made of samples the writer may have coalesced and
// that different threads' clocks stamped, so it can differ from the true footprint by what moved
// within one quantum or one clock skew. docs/tracing.md ("Counters") says so; the run's exact peak
// is in `pipescope run`'s output (graph::run_stats).
#include "graph_footprint.hpp"

#include <pipescope/trace/run_metadata.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipescope::trace::detail {

namespace {

// The names the analysis and the viewer look the footprint up by (and old traces recorded).
using vocab::footprint_bytes;
using vocab::footprint_packets;

struct queue_source {
    const std::vector<counter_sample>* samples = nullptr;
    double packet_bytes = 0;   // 0: unknown
};

// A queue's packet size in bytes from its metadata entry, or 0.
double packet_bytes_of(const run_queue& q) {
    if (!q.element_bytes || !q.packet_elements) return 0;
    return static_cast<double>(*q.element_bytes) * static_cast<double>(*q.packet_elements);
}

// The queues of run r that have a counter track, in the metadata's order; empty if the run is not a
// stage graph or recorded its footprint itself.
std::vector<queue_source> queue_sources(const trace_model& m, const run& r) {
    if (!r.metadata_valid || r.program_kind != vocab::graph_program) return {};
    std::map<std::string_view, std::uint32_t> counter_tracks;   // name -> the first track of that name
    for (std::uint32_t ti : r.tracks)
        if (m.tracks[ti].kind == track_kind::counter) counter_tracks.emplace(m.tracks[ti].name, ti);
    if (counter_tracks.contains(footprint_packets) || counter_tracks.contains(footprint_bytes)) return {};

    const std::optional<run_metadata> meta = run_metadata_from_json(r.metadata_json);
    if (!meta || !meta->program || !meta->program->queues) return {};
    std::vector<queue_source> out;
    std::vector<bool> used(m.tracks.size());   // a counter named by two queues counts once
    for (const run_queue& q : *meta->program->queues) {
        const std::string counter = !q.counter.empty() ? q.counter : vocab::queue_packets(q.name);
        const auto t = counter_tracks.find(counter);
        if (t == counter_tracks.end() || used[t->second]) continue;
        used[t->second] = true;
        out.push_back({&m.tracks[t->second].counters, packet_bytes_of(q)});
    }
    return out;
}

struct footprint_series {
    std::vector<counter_sample> packets, bytes;
};

// One sample per distinct timestamp of the queue samples: the sum after every change at that
// timestamp (changes of different queues stamped alike have no order, so no partial sum is shown).
footprint_series sum_of(const std::vector<queue_source>& queues) {
    footprint_series out;
    using cursor = std::pair<std::uint64_t, std::size_t>;   // (timestamp of the next sample, queue)
    std::priority_queue<cursor, std::vector<cursor>, std::greater<>> next;
    std::vector<std::size_t> at(queues.size(), 0);
    std::vector<double> fill(queues.size(), 0);
    std::size_t total = 0;
    for (std::size_t k = 0; k < queues.size(); ++k) {
        total += queues[k].samples->size();
        if (!queues[k].samples->empty()) next.emplace(queues[k].samples->front().ts, k);
    }
    out.packets.reserve(total);
    out.bytes.reserve(total);
    double packets = 0, bytes = 0;
    while (!next.empty()) {
        const std::uint64_t ts = next.top().first;
        while (!next.empty() && next.top().first == ts) {
            const std::size_t k = next.top().second;
            next.pop();
            const std::vector<counter_sample>& s = *queues[k].samples;
            const double delta = s[at[k]].value - fill[k];
            fill[k] = s[at[k]].value;
            packets += delta;
            bytes += delta * queues[k].packet_bytes;
            if (++at[k] < s.size()) next.emplace(s[at[k]].ts, k);
        }
        out.packets.push_back({ts, packets});
        out.bytes.push_back({ts, bytes});
    }
    return out;
}

}   // namespace

void derive_graph_footprints(trace_model& m) {
    std::uint64_t next_uuid = 1;   // derived tracks get uuids no track of the file has
    for (const track& t : m.tracks) next_uuid = std::max(next_uuid, t.uuid + 1);
    for (std::uint32_t ri = 0; ri < m.runs.size(); ++ri) {
        const std::vector<queue_source> queues = queue_sources(m, m.runs[ri]);
        if (queues.empty()) continue;
        const bool bytes_known =
            std::all_of(queues.begin(), queues.end(), [](const queue_source& q) { return q.packet_bytes > 0; });
        footprint_series sum = sum_of(queues);
        auto add = [&](std::string_view name, std::vector<counter_sample> samples) {
            run& r = m.runs[ri];
            track t;
            t.uuid = next_uuid++;
            t.parent_uuid = m.tracks[r.track].uuid;
            t.parent = r.track;
            t.kind = track_kind::counter;
            t.name = std::string(name);
            t.pid = m.tracks[r.track].pid;
            t.run = ri;
            t.derived = true;
            t.counters = std::move(samples);
            r.tracks.push_back(static_cast<std::uint32_t>(m.tracks.size()));
            m.tracks.push_back(std::move(t));   // (queues point into tracks' samples: not used past here)
        };
        add(footprint_packets, std::move(sum.packets));
        if (bytes_known) add(footprint_bytes, std::move(sum.bytes));
    }
}

}   // namespace pipescope::trace::detail
