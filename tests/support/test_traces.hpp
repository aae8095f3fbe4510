// Where a test leaves a trace for the suite's Perfetto checks: ctest perfetto.check_traces runs
// the tests tagged [trace-file], then checks every trace in PIPESCOPE_TEST_TRACE_DIR with the
// official schema and Perfetto's trace processor (tests/perfetto, docs/tracing.md).
#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace pipescope::testing {

inline std::filesystem::path checked_trace_path(const std::string& name) {
#ifdef PIPESCOPE_TEST_TRACE_DIR
    return std::filesystem::path(PIPESCOPE_TEST_TRACE_DIR) / name;
#else
    return std::filesystem::temp_directory_path() / name;
#endif
}

inline void save_for_checks(const std::string& name, const std::string& bytes) {
    std::ofstream out(checked_trace_path(name), std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out) throw std::runtime_error("cannot write " + checked_trace_path(name).string());
}

}  // namespace pipescope::testing
