// PIPESCOPE_TRACE: any program linked with pipescope records itself, no code change (Taskflow's
// TF_ENABLE_PROFILER convention). docs/tracing.md, "Record your own program".
//
//   PIPESCOPE_TRACE=run.pftrace          where the trace goes (a second scheduler: run.2.pftrace, ...)
//   PIPESCOPE_TRACE_DETAIL=nodes|folded|auto   trace_session_options::detail (default auto)
//   PIPESCOPE_TRACE_BUFFER=MiB           trace_session_options::buffer_mib (default 64)
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace pipescope {
class trace_session;
}

namespace pipescope::detail {

class scheduler_impl;

// The session the environment asks for, or nullptr (not asked for, or asked wrongly: the reason
// goes to stderr and the program runs unrecorded).
std::unique_ptr<trace_session> open_environment_session(scheduler_impl& s);
// The one line on stderr saying where the trace went (and its warnings).
void report_environment_session(const trace_session& session);

// The file of the n-th scheduler (n >= 1) that records: "run.pftrace", "run.2.pftrace", ...
std::filesystem::path environment_trace_path(const std::string& path, unsigned n);

}   // namespace pipescope::detail
