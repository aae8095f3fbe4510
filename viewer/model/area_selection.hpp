// An area selection: a time range over some tracks (Shift+drag in the timeline, or M on a selected
// slice, as in Perfetto), and the aggregates the details panel shows for it. Pure C++.
//
// Definitions (each selected track on its own display offset, the range [t0, t1) clipped per track):
//   state time   each moment of each selected track that has slices goes to the innermost slice
//                open then, by the analysis' slice kinds (analysis/scope.hpp: node, task, idle,
//                parked, blocked, queue, running, waiting, throttled, other), or to "between
//                slices"; so the states of a track add up to the range's length.
//   stage time   the part of each node slice inside the range, by stage; a folded run of nodes
//                (analysis: node_extent) gives each node an equal share (node_share) to its stage;
//                per stage also the nodes' time inside the range: count, mean, p95 (the stage
//                table's columns all measure inside the range).
//   nodes        the nodes whose time overlaps the range (a zero-length one: starts in it), with
//                their whole durations (shares for folded nodes): count, mean, p50, p95, max.
//   instants     steals, suspensions and wake-ups inside the range; events lost (the sum of the
//                `dropped` annotations of the `events lost` markers inside it).
#pragma once

#include "document.hpp"

#include <pipescope/analysis/scope.hpp>
#include <pipescope/analysis/stages.hpp>

#include <array>
#include <compare>
#include <cstdint>
#include <vector>

namespace pipescope::viewer {

struct track_ref {
    std::uint32_t file = 0, track = 0;
    auto operator<=>(const track_ref&) const = default;
};

struct area_selection {
    double t0 = 0, t1 = 0;           // display ns, t0 <= t1
    std::vector<track_ref> tracks;   // sorted, no duplicates
    double length() const { return t1 - t0; }
    bool operator==(const area_selection&) const = default;
};

// States: the analysis' slice kinds, then "between slices".
inline constexpr int area_state_count = static_cast<int>(analysis::slice_kind::other) + 2;
inline constexpr int area_between_slices = area_state_count - 1;
const char* area_state_name(int state);

struct area_stage {
    std::uint64_t stage = 0;
    std::uint64_t ns = 0;             // node time inside the range
    analysis::service_stats nodes;    // the nodes overlapping the range, whole durations
    analysis::service_stats inside;   // the same nodes' time inside the range (the stage table's mean, p95)
};

struct area_stats {
    double length = 0;                    // t1 - t0 (measuring)
    std::size_t tracks_with_slices = 0;   // the state times add up to length x this
    std::array<std::uint64_t, area_state_count> state_ns{};
    std::vector<area_stage> stages;   // by stage index; stages with nodes in the range
    analysis::service_stats nodes;    // every node overlapping the range
    std::uint64_t steals = 0, suspensions = 0, wakeups = 0, events_lost = 0;
};

// Which stage node k of a folded node slice's x.nodes nodes is: one per stage for a pipeline block,
// all of one stage for a graph's run of instances, else spread over the stages in order.
std::uint64_t stage_of_node(const analysis::node_extent& x, std::uint64_t k);

// O(log n) per row plus the events inside the range.
area_stats compute_area_stats(const document& d, const area_selection& a, bool aligned);

// The details panel's stage table (views/area_panel.cpp): every column measures inside the area —
// node time, the nodes overlapping it, the mean and p95 of their time in it. (Its "time" was
// clipped and its "mean" over whole nodes: issue 37, defect 6.)
enum class area_stage_column : int { stage, time_in_area, nodes, mean_in_area, p95_in_area };
inline constexpr int area_stage_column_count = 5;
const char* area_stage_column_name(area_stage_column c);   // "in area", "mean", ...
const char* area_stage_column_tip(area_stage_column c);    // what it measures, one line
struct area_stage_sort {
    area_stage_column column = area_stage_column::stage;
    bool descending = false;
    bool operator==(const area_stage_sort&) const = default;
};
// Indices into `stages` in the table's order: by the column, ties by stage number (ascending).
std::vector<std::uint32_t> sorted_stage_rows(const std::vector<area_stage>& stages, area_stage_sort sort);

}   // namespace pipescope::viewer
