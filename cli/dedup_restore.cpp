// `pipescope dedup-restore ARCHIVE OUT`: the inverse of the dedup workload (run with output=PATH).
#include <pipescope/recording/usage_error.hpp>
#include "commands.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/workloads/dedup.hpp>

#include <fmt/format.h>

#include <exception>
#include <cstdio>

int dedup_restore_command(const std::vector<std::string>& args) {
    if (args.size() != 2 || args[0].empty() || args[1].empty() || args[0][0] == '-' || args[1][0] == '-')
        throw pipescope::recording::usage_error("dedup-restore: give the archive and the file to restore it into");
    try {   // before reading the archive: a directory, device or link there is refused at once
        pipescope::trace::check_output_path(args[1]);
    } catch (const pipescope::trace::output_path_error& e) {
        fmt::print(stderr, "pipescope: dedup-restore: {}\n", e.what());
        return 2;
    }
    namespace ws = pipescope::workloads;
    ws::byte_vector restored;
    std::size_t archive_bytes = 0;
    try {
        const ws::byte_vector archive = ws::read_whole_file(args[0]);
        archive_bytes = archive.size();
        restored = ws::dedup_restore(archive);
    } catch (const ws::archive_error& e) {
        fmt::print(stderr, "pipescope: {}: corrupt dedup archive {}\n", args[0], e.what());
        return 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: dedup-restore: {}\n", e.what());
        return 1;
    }
    try {
        ws::write_file_atomically(args[1], restored);
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: dedup-restore: {}\n", e.what());
        return 1;
    }
    using pipescope::analysis::numbers::count;
    fmt::print("{}: {} bytes restored from {} archive bytes\n", args[1], count(restored.size()), count(archive_bytes));
    return 0;
}
