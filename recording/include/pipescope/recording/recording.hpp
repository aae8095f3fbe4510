// Running a workload and recording it into a Perfetto trace: what `pipescope run` does, shared with
// `pipescope lesson` (which records several runs per lesson). See docs/tracing.md for what a
// recording holds ("Metadata") and how it is written (a drainer thread keeps memory bounded).
#pragma once

#include <pipescope/recording/usage_error.hpp>

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/workloads/workload.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace pipescope::recording {

namespace ws = pipescope::workloads;

struct run_args {
    std::string workload;
    ws::run_request request;
    unsigned workers = 0;
    std::string trace_path;              // -o: record a Perfetto trace there
    std::size_t trace_buffer_mib = 64;   // --trace-buffer: the recorder's memory budget
    bool trace_compress = true;          // --trace-plain writes packets uncompressed
    bool trace = true;                   // --no-trace turns recording off even with -o
    // --trace-detail nodes|folded|auto (docs/tracing.md, "Detail levels")
    pipescope::trace::trace_detail trace_detail = pipescope::trace::trace_detail::automatic;
    std::uint64_t counter_quantum_ns = 1000;   // --counter-quantum (docs/tracing.md, "Counters")
    std::vector<std::string> params;           // as given, for the trace's metadata
    bool virtual_time = false;                 // --virtual: on `workers` virtual workers (docs/virtual.md)
    // --virtual only (virtual_setup.hpp): node costs from an earlier recording, a cost file, and the
    // --param NAME_ns=V values taken out of `params`.
    std::string costs_trace, cost_file;
    std::vector<std::string> cost_params;
    // --progress json: JSON progress lines on stderr for a program that runs the command (the
    // viewer's run panel; recording/src/progress_json.hpp says what they hold).
    bool progress_json = false;
};

struct recorded_run {
    ws::run_report report;
    std::string workload, policy;
    unsigned workers = 0;
    pipescope::worker_counters total;   // summed over the workers
    std::string trace_line;             // "  trace     FILE: ..." (empty when nothing was recorded)
    bool virtual_time = false;
    std::uint64_t virtual_makespan_ns = 0;   // the measured loop's span in virtual time
    // CPU time of the calling thread over the measured run (from its start until the workload says
    // it ended, before checking its output; else until the workload returned).
    double measured_cpu_seconds = 0;
    // The same span in the whole process's CPU time: what the serial elision cost, counting what
    // its pool worker ran (forked tasks, graph-serial's instances) while the calling thread waited.
    double measured_process_cpu_seconds = 0;
    std::vector<std::string> virtual_lines;   // where its costs came from (virtual_setup)
    // Cancelled before its first iteration: the trace was discarded (an existing file is untouched).
    bool nothing_recorded = false;
};

// Why `workload` cannot run under `policy`, or "" if it can. Throws usage_error for a workload or
// policy nobody knows.
std::string refusal_reason(const std::string& workload, const std::string& policy);

// Runs args.workload (and its serial reference) and records the measured run when args ask for a
// trace. Throws usage_error for an unknown workload or policy or a refused combination; the trace
// file is written whole or not at all. `cancel` stops the measured loop early; requested before the
// measured run starts, record_run throws workloads::interrupted_before_measured_run and writes no
// file; a measured run cancelled before its first iteration writes none either (nothing_recorded).
recorded_run record_run(const run_args& args, std::stop_token cancel = {});

// The metadata record_run stores for the measured run of `workload` on `sched` (docs/tracing.md,
// "Metadata"): the run, the machine, and the program as the workload describes it.
std::string run_metadata(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                         double reference_seconds);

// The lines `pipescope run` prints about a run.
void print_run(const recorded_run& r, ws::input_size size);

}   // namespace pipescope::recording
