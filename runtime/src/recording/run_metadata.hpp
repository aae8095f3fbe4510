// The run metadata a trace_session stores for loops it records on its own (docs/tracing.md,
// "Metadata"): the same JSON document `pipescope run` writes, less what only a workload knows
// (its input size, seed and serial reference).
#pragma once

#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>

#include "../pipeline/stage_use.hpp"

#include <cstdint>
#include <string>

namespace pipescope::detail {

struct session_settings {
    std::string name;   // trace_session_options::name ("" -> "pipeline" / "graph")
    trace::trace_detail detail;
    std::uint64_t counter_quantum_ns;
    std::string recorded_by = "trace_session";   // trace_session_options::recorded_by
};

// The run a pipe_while loop of `options` on `workers` workers makes: its name, stage names, metadata.
trace::run_info pipeline_run(const pipeline_options& options, unsigned workers, const session_settings& s);
// ... and a graph::run of `g`.
trace::run_info graph_run(const graph::program& g, const graph::run_options& options, unsigned workers,
                          const session_settings& s);
// A run's metadata marked as a run on virtual workers, with the costs it was simulated with.
std::string with_virtual_time(const std::string& metadata_json, const scheduler_options& options);
// The stage kinds a loop's iterations used (loop_finish::stages), as the "stages" entry of the run's
// end metadata (the "metadata" of its "run summary"; docs/tracing.md): [{"index": j, "kind":
// "serial" | "parallel" | "mixed"}], stage 0 always serial; the entry of bit 63 has "and_later": true.
// Empty when the engine reported nothing.
std::string used_stage_kinds_json(const stage_use& use);
// ... and fork-join tasks spawned from outside the pool while no loop runs ("name · tasks · P=n").
trace::run_info tasks_run(unsigned workers, const session_settings& s);

}   // namespace pipescope::detail
