// Time breakdown of a run: per worker and in total, where the time went — work, queue operations,
// scheduler, stealing, idle, stall, parked (and untraced) — as in DANBI's Fig. 4, the
// Cheetah-Piper report's Figs. 8-10 and GRAMPS' Fig. 5 (docs/analysis.md maps each paper's
// categories onto these).
//
// Definitions (each worker's time is the run's span [start, end), so a worker's categories sum to
// the makespan and the total to workers x makespan). Every instant of a worker's time is given to
// the innermost slice open on the worker's track at that time (a `parked` inside an `idle` is
// parked; a node inside a `task` is work), or to none:
//   work       node slices (`stage j`) and fork-join `task` slices; any other slice name on a
//              worker track (foreign traces) counts as work too. In a folded trace the stage
//              boundaries inside a folded run (`stage 0–495`) are inside its slice: work, not scheduler.
//   queue      queue-operation slices (`queue…`, `push…`, `pop…`, `put…`, `take…`, `reserve…`,
//              `commit…`); pipeline runs of the current policies record none (their queue events
//              are instants), so this is 0 for them.
//   idle       `idle` slices (the worker had no work and was trying to steal), except the part
//              counted as stall; and `waiting…` slices on a worker track (a bind-to-stage thread
//              waiting on an empty input queue: it has nothing to do).
//   stall      `blocked…` slices (a bind-to-stage thread blocked on a full/empty queue), and the
//              part of `idle` during which the run had work it could not run yet: at least one
//              iteration was suspended (a line shows `waiting at stage j` / `waiting to retire`) or
//              the loop was throttled (the `control` line shows `throttled`). The idle part is
//              derived from the line tracks; stall_derived is false when the run has none.
//   parked     `parked` slices (asleep until woken).
//   stealing   time covered by no slice that follows a successful `steal` instant: from the
//              instant to the worker's next slice (taking the stolen frame and getting it running).
//   scheduler  every other moment covered by no slice between the worker's first and last event.
//   untraced   before the worker's first event and after its last one.
// Slices open when the recording stopped last until the run's end: unterminated slices, and the
// worker's `idle`/`parked` slices that end at its last event.
#pragma once

#include <pipescope/analysis/scope.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::analysis {

enum class time_category : std::uint8_t { work, queue, scheduler, stealing, idle, stall, parked, untraced };
inline constexpr int time_category_count = 8;
const char* to_string(time_category c);
// One line saying what the category counts (tooltips, docs).
const char* describe(time_category c);

struct time_split {
    std::array<std::uint64_t, time_category_count> ns{};   // by time_category
    std::uint64_t span = 0;                                // the categories sum to this
    std::uint64_t& operator[](time_category c) { return ns[static_cast<int>(c)]; }
    std::uint64_t operator[](time_category c) const { return ns[static_cast<int>(c)]; }
    double fraction(time_category c) const {
        return span ? static_cast<double>((*this)[c]) / static_cast<double>(span) : 0.0;
    }
    std::uint64_t sum() const;
};

struct worker_breakdown {
    std::string name;   // "worker 0", or "total"
    std::uint32_t track = tm::no_index;
    time_split time;
    std::uint64_t nodes = 0;           // nodes it ran (a folded slice counts the nodes it holds: scope.hpp, node_extent)
    std::uint64_t folded_runs = 0;     // folded slices among them (0 in a trace that records every node)
    std::uint64_t steals = 0;          // successful steals (`steal` instants)
    std::uint64_t failed_steals = 0;   // sum of the `failed_steals` annotations of its idle slices
    // What the machine gave the worker's thread, if the run summary records it (tm::worker_time): CPU
    // time, and time runnable but descheduled (waiting for a CPU). Node and idle times are wall-clock,
    // so descheduled time inside a node counts as work above: this says how much of it was not.
    std::optional<std::uint64_t> cpu_ns, descheduled_ns;
    // cpu / (cpu + descheduled): the share of a core it got while it wanted one (nullopt if unknown).
    std::optional<double> core_share() const noexcept;
    // descheduled as a share of the worker's time (time.span).
    double descheduled_fraction() const noexcept;
};

struct run_breakdown {
    std::string title;
    std::uint64_t span = 0;   // run end - run start (the makespan)
    std::vector<worker_breakdown> workers;
    worker_breakdown total;       // sums over the workers (span = workers x makespan)
    bool stall_derived = false;   // the run has line tracks with running/waiting/throttled states

    // `ns` of track time as a share of `cores` cores over the makespan: for a pool (a track per
    // worker) the same as total.time.fraction; for a thread-bound policy (bind-to-stage), whose
    // threads outnumber its cores, a share of the cores, not of the threads' time. 0 when empty.
    double core_share(std::uint64_t ns, std::uint64_t cores) const noexcept {
        const double capacity = static_cast<double>(cores) * static_cast<double>(span);
        return capacity > 0 ? static_cast<double>(ns) / capacity : 0.0;
    }
    // Track time spent on anything: every category but idle, stall, parked and untraced.
    std::uint64_t busy_ns() const noexcept;
};

// O(slices + instants of the run's tracks + w log w for the waiting states).
run_breakdown compute_breakdown(const run_scope& scope);

}   // namespace pipescope::analysis
