// Time breakdown of a run: per worker and in total, where the time went (work, scheduler,
// stealing, idle, stall, parked), as in DANBI's Fig. 4, the Cheetah-Piper report's Figs. 8-10 and
// GRAMPS' Fig. 5. Pure C++ (no ImGui), unit-tested in tests/viewer/test_breakdown.cpp.
//
// NOTE: this is the viewer's own, provisional breakdown. The `analysis/` library will provide the
// official one (shared with the CLI); when it lands, the breakdown view should call it and this
// file should go.
//
// Definitions (each worker's time is the run's span [run.start, run.end), so a worker's categories
// sum to the makespan and the total to workers x makespan). Every instant of a worker's time is
// given to the innermost slice open on the worker's track at that time (a `parked` inside an
// `idle` is parked; a node inside a `task` is work), or to none:
//   work       node slices (`stage j`) and fork-join `task` slices; any other slice name on a
//              worker track (foreign traces) counts as work too.
//   idle       `idle` slices (the worker had no work and was trying to steal; its failed attempts
//              are the slice's `failed_steals`), except the part counted as stall.
//   stall      the part of `idle` during which the run had work it could not run yet: at least one
//              iteration was suspended (a line shows `waiting at stage j` / `waiting to retire`: a
//              cross edge not satisfied) or the loop was throttled (the `control` line shows
//              `throttled`: K iterations in flight). Derived from the line tracks; 0 (and
//              stall_derived == false) when the run has none.
//   parked     `parked` slices (asleep until woken).
//   stealing   time covered by no slice that follows a successful `steal` instant: from the
//              instant (recorded in the gap, or in the slice just before it) to the worker's next
//              slice, i.e. taking the stolen frame and getting it running.
//   scheduler  every other moment covered by no slice between the worker's first and last event:
//              stage boundaries, suspending and resuming iterations, the worker loop.
//   untraced   before the worker's first event and after its last one: the recording says nothing
//              about the worker then (typically it was parked when the recording began, and its
//              park_end is not recorded; or the program had not reached the scheduler yet). Not
//              one of the seeds' categories; kept apart rather than guessed.
// Slices open when the recording stopped last until the run's end: unterminated slices, and the
// worker's `idle`/`parked` slices that end at its last event (pipescope's writer closes a worker's
// open slices at that worker's last record; an idle worker records nothing until the recorder is
// detached at the end of the run).
// There is no "queue" category: pipeline runs have no queue operations.
#pragma once

#include "document.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pipescope::viewer {

enum class time_category : std::uint8_t { work, scheduler, stealing, idle, stall, parked, untraced };
inline constexpr int time_category_count = 7;
const char* to_string(time_category c);
// One line saying what the category counts (tooltips, docs).
const char* describe(time_category c);

struct time_split {
    std::array<std::uint64_t, time_category_count> ns{};   // by time_category
    std::uint64_t span = 0;                                // the categories sum to this
    std::uint64_t& operator[](time_category c) { return ns[static_cast<int>(c)]; }
    std::uint64_t operator[](time_category c) const { return ns[static_cast<int>(c)]; }
    double fraction(time_category c) const { return span ? static_cast<double>((*this)[c]) / static_cast<double>(span) : 0.0; }
    std::uint64_t sum() const;
};

struct worker_breakdown {
    std::string name;              // "worker 0", or "total"
    std::uint32_t track = tm::no_index;
    time_split time;
    std::uint64_t nodes = 0;       // node slices
    std::uint64_t steals = 0;      // successful steals (`steal` instants)
    std::uint64_t failed_steals = 0;   // sum of the `failed_steals` annotations of its idle slices
};

struct run_breakdown {
    std::string title;
    std::uint64_t span = 0;        // run end - run start (the makespan)
    std::vector<worker_breakdown> workers;
    worker_breakdown total;        // sums over the workers (span = workers x makespan)
    bool stall_derived = false;    // the run has line tracks with waiting/throttled states
};

// O(slices + instants of the run's tracks + w log w for the waiting states); call when the
// document changes, not per frame.
run_breakdown compute_breakdown(const loaded_file& f, const run_ref& r);

}  // namespace pipescope::viewer
