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
    double work_fraction = 0;   // work / (workers x makespan), from compute_breakdown
};

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
