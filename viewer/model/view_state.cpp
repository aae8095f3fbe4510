#include "view_state.hpp"

#include <algorithm>

namespace pipescope::viewer {

std::vector<flow_link> flows_of(const loaded_file& f, const tm::event_ref& e) {
    std::vector<flow_link> out;
    const auto& flows = f.model.flows;
    for (std::uint32_t i = 0; i < flows.size(); ++i) {
        if (flows[i].from == e) out.push_back({i, true, flows[i].to});
        else if (flows[i].to == e) out.push_back({i, false, flows[i].from});
    }
    return out;
}

bool holds(const document& d, std::uint32_t file, const tm::event_ref& e) {
    if (file >= d.files.size() || !e.valid() || e.track >= d.files[file]->model.tracks.size()) return false;
    const tm::track& t = d.files[file]->model.tracks[e.track];
    return e.index < (e.is_instant ? t.instants.size() : t.slices.size());
}

std::uint32_t run_of(const document& d, std::uint32_t file, std::uint32_t track) {
    for (std::uint32_t r = 0; r < d.runs.size(); ++r) {
        const run_ref& rr = d.runs[r];
        if (rr.file != file) continue;
        for (const auto* v : {&rr.workers, &rr.lines, &rr.counters, &rr.others})
            if (std::find(v->begin(), v->end(), track) != v->end()) return r;
    }
    return tm::no_index;
}

selection select_node(const document& d, std::uint64_t iteration, std::uint64_t stage, std::uint32_t run) {
    for (std::uint32_t r = 0; r < d.runs.size(); ++r) {
        if (run != tm::no_index && r != run) continue;
        const run_ref& rr = d.runs[r];
        if (rr.run == tm::no_index) continue;   // a foreign trace has no DAG
        const tm::pipeline_dag& dag = d.files[rr.file]->model.runs[rr.run].dag;
        const std::uint32_t v = dag.find(iteration, stage);
        if (v != tm::no_index && dag.nodes[v].slice.valid()) return {rr.file, dag.nodes[v].slice};
    }
    return {};
}

double display_offset_of(const document& d, std::uint32_t file, std::uint32_t track, bool aligned) {
    const std::uint32_t r = run_of(d, file, track);
    return r == tm::no_index ? static_cast<double>(d.start) : display_offset(d, d.runs[r], aligned);
}

std::optional<std::pair<double, double>> selection_range(const document& d, const selection& s, bool aligned) {
    if (!s.valid() || s.file >= d.files.size()) return std::nullopt;
    const loaded_file& f = *d.files[s.file];
    const double off = display_offset_of(d, s.file, s.ev.track, aligned);
    return std::pair{static_cast<double>(f.event_ts(s.ev)) - off, static_cast<double>(f.event_end(s.ev)) - off};
}

void view_state::select(const document& d, const selection& s) {
    sel = s;
    sel_flows.clear();
    if (s.valid() && s.file < d.files.size()) sel_flows = flows_of(*d.files[s.file], s.ev);
}

void view_state::bring_into_view(std::pair<double, double> range) {
    scroll_to_selection = true;
    const double len = range.second - range.first, span = vp.width * vp.npp;
    if (len < 3 * vp.npp) {   // a sliver at this zoom: framed with twenty times its length around it, as --select
        const double w = std::max(len, 1.0) * 20, mid = (range.first + range.second) / 2;
        frame_request = std::pair{mid - w / 2, mid + w / 2};
    } else if (range.first >= vp.t0 && range.second <= vp.t1()) {
        return;   // already in view: do not move it
    } else if (len < span * 0.8) {
        vp.t0 = (range.first + range.second - span) * 0.5;   // same zoom, centred
    } else {
        frame_request = range;
    }
}

std::pair<double, double> frame_all_range(const document& d, bool aligned) {
    double lo = 0, hi = static_cast<double>(d.end - d.start);
    if (aligned) {
        hi = 0;
        for (const auto& r : d.runs) hi = std::max(hi, static_cast<double>(r.end - r.start));
    }
    return {lo, std::max(hi, lo + 1)};
}

void view_state::request_frame_all(const document& d) { frame_request = frame_all_range(d, align_runs); }

}   // namespace pipescope::viewer
