// A scaling sweep: one virtual run per (policy, P) of one workload against its serial elision
// (`pipescope scale`, docs/virtual.md). The CLI measures each row from the run's recorded trace
// (scale_row_of) and writes the sweep as DIR/scale.json (to_json); the viewer's scaling view reads
// it back (sweep_from_json). Both draw speedup against P on the same axes (scale_axes).
#pragma once

#include <pipescope/analysis/report.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::analysis {

inline constexpr const char* scale_format = "pipescope-scale/1";
inline constexpr const char* scale_manifest_name = "scale.json";

struct scale_row {
    std::string policy;
    std::uint64_t workers = 0;   // P, virtual workers
    double makespan_ns = 0;      // the run's span in its trace (virtual ns)
    double speedup = 0;          // serial time / makespan
    double efficiency = 0;       // speedup / P
    // Core time with nothing running: 1 - busy / (P x makespan), busy = every track's time outside
    // idle, stall, parked and untraced (breakdown.hpp; a worker parked before the run began records
    // nothing until woken). For a pool, (idle + stall + parked + untraced) / (P x makespan); for
    // bind-to-stage, whose threads outnumber the P cores, the cores' idle time.
    double idle_share = 0;
    std::uint64_t steals = 0;               // successful steals
    std::optional<double> peak_live;        // pipelines: peak live iterations
    std::optional<double> peak_footprint;   // stage graphs: peak footprint, bytes
    std::string trace;                      // the run's trace, a file name in the sweep's directory
};

// A policy that could not run on virtual workers, and why.
struct scale_refusal {
    std::string policy, reason;
};

struct scale_sweep {
    std::string workload, size;
    std::uint64_t seed = 0;
    std::vector<std::string> params;         // --param key=value, as given
    double serial_ns = 0;                    // the serial elision's CPU time (docs/virtual.md, "Scaling sweeps"),
                                             // the median of serial_samples_ns
    std::vector<double> serial_samples_ns;   // every measurement of it, in order (one with --costs)
    std::vector<scale_row> rows;             // by policy, then P
    std::vector<scale_refusal> refused;
    std::string svg, png;   // the plot, file names in the sweep's directory

    // The policies of the rows, in their order.
    std::vector<std::string> policies() const;
};

// The row of a virtual run from its analysis: its makespan, idle share, steals and peak.
scale_row scale_row_of(const run_report& r, double serial_ns);

nlohmann::json to_json(const scale_sweep& s);
// Throws std::runtime_error naming the missing or mistyped field ("rows[3].workers: expected a
// number") for anything that is not a sweep manifest.
scale_sweep sweep_from_json(const nlohmann::json& j);

// The speedup-vs-P chart's axes, both log2 (the ideal line is the diagonal): P from the smallest to
// the largest row's, speedup from min(1, smallest)/2-ish to max(largest P, largest speedup), every
// bound a power of two. at_x / at_y map a value to [0, 1] along its axis.
struct scale_axes {
    double x_lo = 1, x_hi = 2, y_lo = 1, y_hi = 2;   // powers of two
    double at_x(double p) const;
    double at_y(double speedup) const;
    std::vector<double> x_ticks() const;   // every power of two in [x_lo, x_hi]
    std::vector<double> y_ticks() const;
};
scale_axes axes_of(const scale_sweep& s);

}   // namespace pipescope::analysis
