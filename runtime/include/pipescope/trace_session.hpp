// pipescope — record a program's runs into a Perfetto trace, in one line.
//
//     pipescope::scheduler sched;
//     pipescope::trace_session rec(sched, "run.pftrace", {.name = "my pipeline"});
//     pipescope::pipe_while(sched, ...);          // a run in the trace
//     graph::run(sched, g, {.policy = "gramps"}); // another run
//     // rec's destructor (or rec.close()) finishes run.pftrace
//
// Every loop (pipe_while, graph::run) started on the scheduler from outside its pool while the
// session lives becomes one run of the trace — its own process track in the Perfetto UI, one run in
// pipescope-viewer — named "name · policy · P=n" (the loop's pipeline_options::name, else the
// session's), with its stage names and configuration in the run's metadata. Task groups and loops
// nested in a stage are recorded inside the run that is open; task groups spawned from outside the
// pool while no loop runs are a run of their own ("name · tasks · P=n") until the next loop starts. Setting PIPESCOPE_TRACE=file makes every
// scheduler of a program record this way without code (docs/tracing.md, "Record your own program").
//
// The file is written as `pipescope run -o` writes it: a streaming writer fed by a drain thread
// (memory bounded by buffer_mib), events lost when the writer falls behind are counted and marked,
// and the file appears whole or not at all (written to a temporary file, renamed by close()): what
// was recorded reaches the temporary file at least once a second, so a process killed with SIGKILL
// leaves everything up to about a second before (docs/tracing.md, "Signals"). A loop that
// ends in an exception or a cancellation still ends its run; the run's summary says how it ended.
//
// Destroy (or close) the session after its loops have returned and before its scheduler.
#pragma once

#include <pipescope/scheduler.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/run_metadata.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace pipescope {

struct pipeline_options;
namespace graph {
class program;
struct run_options;
}   // namespace graph

struct trace_session_options {
    std::string name = {};                                         // names runs whose loop has no name ("pipeline" if empty)
    trace::trace_detail detail = trace::trace_detail::automatic;   // docs/tracing.md, "Detail levels"
    // The recorder's memory budget (1 ≤ MiB ≤ the machine's memory): reserved, not touched; memory
    // grows with what is recorded (docs/tracing.md, "Recording").
    std::size_t buffer_mib = 64;
    bool compress = true;                      // zlib-compressed packets
    std::uint64_t counter_quantum_ns = 1000;   // docs/tracing.md, "Counters"
    // false: loops make no runs of their own; the owner opens and closes runs with begin_run() and
    // end_run() (tools that know more about a run than the runtime, like `pipescope run`).
    bool loops_are_runs = true;
    // true: SIGINT and SIGTERM end the open run ("interrupted by SIGINT"), finish the file and rename
    // it into place, then the program's previous handling of the signal proceeds (by default the
    // process dies of it; a handler of its own is called). PIPESCOPE_TRACE sessions do this.
    // docs/tracing.md, "Signals".
    bool finish_on_signal = false;
    // How the recording was asked for, in the runs' metadata ("recorded_by"): the analysis phrases its
    // advice for it (docs/analysis.md, "Advice for how the run was recorded"). PIPESCOPE_TRACE
    // sessions say "PIPESCOPE_TRACE"; `pipescope run` writes its own metadata ("pipescope run").
    std::string recorded_by = "trace_session";
};

class trace_session {
public:
    // Opens the session: a temporary file next to `path`, renamed to `path` at close()
    // (trace/atomic_output.hpp). Throws std::invalid_argument for a bad option,
    // trace::output_path_error for a path that cannot be an output file (a directory, a device, a
    // symbolic link, ...), and std::logic_error if the scheduler already has a session.
    trace_session(scheduler& sched, std::filesystem::path path, trace_session_options options = {});
    // Ends an open run and finishes the file; an error finishing it is reported on stderr (a
    // destructor must not throw): call close() to see it.
    ~trace_session();
    trace_session(const trace_session&) = delete;
    trace_session& operator=(const trace_session&) = delete;

    // A run described by the caller (loops_are_runs = false): recording starts now and lasts until
    // end_run(). `run.workers` is filled in; `outcome` as in perfetto_writer::end_run.
    void begin_run(trace::run_info run);
    void end_run(std::string_view outcome = {});
    bool run_open() const noexcept;

    // Ends an open run (its outcome "session closed while running" if a loop is still running is
    // the caller's mistake; see above) and renames the file into place. Throws on I/O errors (the
    // temporary file is then removed). Idempotent.
    void close();
    // Ends an open run and removes the temporary file: no trace is written, and an existing file
    // at path() is left as it was (a run interrupted before it did anything). Idempotent.
    void discard();

    const std::filesystem::path& path() const noexcept;
    unsigned runs() const noexcept;   // runs written so far
    const trace::perfetto_write_stats& stats() const noexcept;
    std::uint64_t dropped_events() const noexcept;   // summed over the runs so far
    std::size_t buffer_mib() const noexcept;

    // What was written, for a person: "FILE: n slices, ... MB", a line on folded runs, and warnings
    // (events dropped, too many events for the Perfetto UI). Each line starts with `indent`.
    std::string report(std::string_view indent = {}) const;

    class impl;   // trace_session.cpp

private:
    std::unique_ptr<impl> impl_;
};

// The metadata `trace_session` stores for a pipe_while loop of the given options on `workers`
// workers: the "program" object of docs/tracing.md, "Metadata" (kind, stages with their kinds and
// names, K, lazy enabling, dependency folding; bind-to-stage's c and Queue_size); the _json
// versions give it as JSON text (trace/run_metadata.hpp).
trace::run_program pipeline_program(const pipeline_options& options, unsigned workers);
std::string pipeline_program_json(const pipeline_options& options, unsigned workers);
// ... and for a stage graph `g` run under options.policy (docs/tracing.md, "Metadata"): its stages
// (index, name, kind), its queues (shape, producers, consumer, whether the policy leaves them
// unbounded, their counter track) and how readers derive the footprint. `pipescope run` writes it
// too, with the workload's own shape text and stage notes. `workers` as graph::unbounded_queues.
trace::run_program graph_program(const graph::program& g, const graph::run_options& options, unsigned workers = 0);
std::string graph_program_json(const graph::program& g, const graph::run_options& options, unsigned workers = 0);

}   // namespace pipescope
