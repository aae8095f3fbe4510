// Time breakdown of a run for the viewer: the analysis library's (analysis/breakdown.hpp defines
// the categories: work, queue, scheduler, stealing, idle, stall, parked, untraced), computed over
// the viewer's run_ref (a pipescope run, or all tracks of a foreign trace). Unit-tested in
// tests/viewer/test_breakdown.cpp.
#pragma once

#include "document.hpp"

#include <pipescope/analysis/breakdown.hpp>
#include <pipescope/analysis/scope.hpp>

namespace pipescope::viewer {

using analysis::describe;
using analysis::run_breakdown;
using analysis::time_category;
using analysis::time_category_count;
using analysis::time_split;
using analysis::to_string;
using analysis::worker_breakdown;

// The analysis scope of a viewer run (same tracks, same time span).
analysis::run_scope scope_of(const loaded_file& f, const run_ref& r);

// O(slices + instants of the run's tracks); call when the document changes, not per frame.
run_breakdown compute_breakdown(const loaded_file& f, const run_ref& r);

}   // namespace pipescope::viewer
