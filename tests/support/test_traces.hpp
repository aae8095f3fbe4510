// Where a test leaves a trace for the suite's Perfetto checks: ctest perfetto.check_traces runs
// the tests tagged [trace-file], then checks every trace in PIPESCOPE_TEST_TRACE_DIR with the
// official schema and Perfetto's trace processor (tests/perfetto, docs/tracing.md).
#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace pipescope::testing {

inline std::filesystem::path checked_trace_path(const std::string& name) {
#ifdef PIPESCOPE_TEST_TRACE_DIR
    return std::filesystem::path(PIPESCOPE_TEST_TRACE_DIR) / name;
#else
    return std::filesystem::temp_directory_path() / name;
#endif
}

// Written whole under another name, then renamed into place: ctest may run one test case twice at
// once (the discovered test, and a check such as perfetto.annotations that runs it itself and reads
// the file), and a reader must never find the file missing or half written.
inline void save_for_checks(const std::string& name, const std::string& bytes) {
    const std::filesystem::path path = checked_trace_path(name);
    std::filesystem::path tmp = path;
    tmp += ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << bytes;
        if (!out) throw std::runtime_error("cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, path);
}

}   // namespace pipescope::testing
