// Where a test leaves a trace for the suite's Perfetto checks: ctest perfetto.check_traces runs
// the tests tagged [trace-file], then checks every trace in PIPESCOPE_TEST_TRACE_DIR with the
// official schema and Perfetto's trace processor (tests/perfetto, docs/tracing.md).
#pragma once

#include <pipescope/trace/atomic_output.hpp>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace pipescope::testing {

inline std::filesystem::path checked_trace_path(const std::string& name) {
#ifdef PIPESCOPE_TEST_TRACE_DIR
    return std::filesystem::path(PIPESCOPE_TEST_TRACE_DIR) / name;
#else
    return std::filesystem::temp_directory_path() / name;
#endif
}

// Written whole under another name, then renamed into place (atomic_output.hpp): ctest may run one
// test case twice at once (the discovered test, and a check such as perfetto.annotations that runs it
// itself and reads the file), and a reader must never find the file missing or half written.
inline void save_for_checks(const std::string& name, const std::string& bytes) {
    pipescope::trace::write_file_atomically(checked_trace_path(name), bytes);
}

// The temporary files an output `target` left next to it ("<name>.XXXXXX.tmp", and the older
// "<name>.tmp"): a finished or abandoned writer leaves none.
inline std::vector<std::filesystem::path> temporaries_of(const std::filesystem::path& target) {
    std::vector<std::filesystem::path> found;
    const std::string prefix = target.filename().string() + ".";
    std::error_code ec;
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.starts_with(prefix) && name.ends_with(".tmp")) found.push_back(e.path());
    }
    return found;
}

}   // namespace pipescope::testing
