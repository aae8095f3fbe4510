// The compare view's table: one row per run of the document (runs of one or several files).
// Pure C++ (no ImGui), unit-tested in tests/viewer/test_compare.cpp.
#pragma once

#include "document.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pipescope::viewer {

struct compare_row {
    std::string name;        // the run's title (with the file name when several files)
    std::uint32_t run = 0;   // index into document::runs
    std::uint64_t workers = 0;
    std::uint64_t K = 0;          // throttle from the metadata; 0 = unknown
    std::uint64_t makespan = 0;   // ns: last - first event of the run (what the timeline shows)
    // Speedup against the serial reference: its time as the run metadata records it
    // (reference_seconds, written by `pipescope run`; empty for traces without it: the view shows "—").
    std::optional<std::uint64_t> serial_ns;
    std::optional<double> speedup;
    double vs_first = 1;               // makespan of the document's first run / this makespan
    std::uint64_t steals = 0;          // successful steals (`steal` instants on worker tracks)
    std::uint64_t suspensions = 0;     // iterations suspended (`suspend` instants)
    std::optional<double> peak_live;   // max of the `live iterations` counter, if recorded
    std::uint64_t nodes = 0;           // nodes run (run_stats::nodes: a folded slice counts the nodes it holds)
    std::uint64_t iterations = 0;
    // Work (time in node and task slices, from compute_breakdown) as the share of the threads' time:
    // work / (threads x makespan), never above 100 %. Over P cores it was 114.9 % for bind-to-stage's
    // 12 threads on 2 cores (issue 37): a thread in a node is in it while it waits for a core too.
    std::uint64_t threads = 0;   // the run's worker tracks: P for a pool, more for bind-to-stage
    double work_fraction = 0;
    double busy_threads = 0;   // work / makespan: how many threads were in a node at once, on average
    bool oversubscribed() const { return threads > workers; }
};

// Says what the work column counts when the run has more threads than cores ("" otherwise), e.g.
// "12 threads on 2 cores: work is the share of the threads' time in nodes; on average 2.30 of them
// were in a node at once, more than the 2 cores: a thread in a node also waited for a core".
std::string work_note(const compare_row& r);

// O(events of the document); call when the document changes.
std::vector<compare_row> compute_compare(const document& d);

// What a view's cached results were computed for: the document's runs (file identity and run
// index). Checking costs O(runs) per frame.
struct document_key {
    std::vector<std::pair<const loaded_file*, std::uint32_t>> runs;
    static document_key of(const document& d);
    bool matches(const document& d) const;   // no allocation
    bool operator==(const document_key&) const = default;
};

}   // namespace pipescope::viewer
