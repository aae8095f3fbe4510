// Area-selection aggregates computed from the trace model another way than
// viewer/model/area_selection.cpp does, for its tests: the unit tests, and the check of an area the
// scripted input selected (area_check.cpp). Traces without folded node slices (each node's stage
// is in its name).
#pragma once

#include <model/area_selection.hpp>

#include <pipescope/analysis/scope.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace viewer_test {

struct area_reference {
    std::array<std::uint64_t, pipescope::viewer::area_state_count> state_ns{};
    std::map<long, std::uint64_t> stage_ns;
    std::uint64_t nodes = 0, steals = 0;
};

// Over [lo, hi) (absolute ns) of the given tracks: per kind, the clipped time of its slices minus
// that of their children (a child's parent is the last slice seen one level up, slices being in
// begin order); the time covered by no slice; nodes overlapping the range; steals inside it.
inline area_reference reference_area(const pipescope::trace::trace_model& m, const std::vector<std::uint32_t>& tracks,
                                     std::uint64_t lo, std::uint64_t hi) {
    namespace an = pipescope::analysis;
    namespace tm = pipescope::trace;
    auto clip = [&](const tm::slice& x) {
        return x.end <= lo || x.begin >= hi ? 0 : std::min(x.end, hi) - std::max(x.begin, lo);
    };
    auto state = [](an::slice_kind k) { return static_cast<int>(k); };
    area_reference r;
    std::uint64_t covered = 0, with_slices = 0;
    for (auto ti : tracks) {
        const tm::track& t = m.tracks[ti];
        with_slices += !t.slices.empty();
        std::vector<const tm::slice*> last_at_depth(t.max_depth + 1u, nullptr);
        for (const tm::slice& x : t.slices) {
            const an::slice_kind k = tm::meaning_of_name(m.str(x.name)).kind;
            r.state_ns[state(k)] += clip(x);
            if (x.depth == 0) covered += clip(x);
            else r.state_ns[state(tm::meaning_of_name(m.str(last_at_depth[x.depth - 1]->name)).kind)] -= clip(x);
            last_at_depth[x.depth] = &x;
            if (k == an::slice_kind::node) {
                r.stage_ns[tm::meaning_of_name(m.str(x.name)).stage] += clip(x);
                r.nodes += x.begin < hi && (x.end > lo || (x.begin == x.end && x.begin >= lo));
            }
        }
        for (const tm::instant& i : t.instants)
            r.steals += i.ts >= lo && i.ts < hi && m.str(i.name) == pipescope::trace::vocab::steal;
    }
    r.state_ns[pipescope::viewer::area_between_slices] = (hi - lo) * with_slices - covered;
    return r;
}

}   // namespace viewer_test
