// What `pipescope run --virtual` gives its virtual workers (docs/virtual.md, "The cost model"): the
// scheduler's costs — the built-in defaults, then the calibration file if there is one, then
// --cost-file, then --param NAME_ns=V, each overriding the one before — and where nodes take their
// costs from: measured CPU time, or an earlier recording (--costs).
#pragma once

#include <pipescope/recording/trace_costs.hpp>

#include <pipescope/scheduler.hpp>
#include <pipescope/trace/run_metadata.hpp>

#include <memory>
#include <string>
#include <vector>

namespace pipescope::recording {

struct run_args;

struct virtual_setup {
    pipescope::virtual_costs costs;
    std::unique_ptr<trace_node_costs> node_costs;   // --costs, else nullptr (measured)
    // The run's "virtual" metadata entries saying where every value came from.
    pipescope::trace::run_virtual origin;
    std::vector<std::string> lines;   // the same for people: what `pipescope run` prints
};

// Throws std::runtime_error naming the file for a calibration, cost or costs trace that cannot be
// used (trace_costs.hpp, cost_table.hpp say what they check).
virtual_setup prepare_virtual(const run_args& args);

}   // namespace pipescope::recording
