#include "open_in_perfetto.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

extern char** environ;

namespace pipescope::viewer {

namespace fs = std::filesystem;

namespace {

// The `pipescope` command beside this viewer, or just "pipescope" (found on PATH by posix_spawnp).
std::string pipescope_command() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (const fs::path& candidate : {exe.parent_path() / "pipescope", exe.parent_path() / "../cli/pipescope"})
            if (fs::is_regular_file(candidate, ec)) return candidate.string();
    }
    return "pipescope";
}

}   // namespace

std::string open_in_perfetto(const fs::path& trace) {
    if (trace.empty()) return "Open in Perfetto UI: this trace was not loaded from a file";
    const std::string cli = pipescope_command();
    const std::string file = fs::absolute(trace).string();
    // The server gives up after 10 minutes without a fetch, so a browser that never opened leaves
    // no process behind for long.
    std::vector<std::string> args{cli, "perfetto", file, "--timeout", "600"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int e = ::posix_spawnp(&pid, cli.c_str(), nullptr, nullptr, argv.data(), environ); e != 0)
        return "Open in Perfetto UI: cannot start " + cli + ": " + std::strerror(e);
    // Reap it whenever it ends (it prints the URL and what happened on the viewer's terminal).
    std::thread([pid] {
        int status = 0;
        ::waitpid(pid, &status, 0);
    }).detach();
    return {};
}

}   // namespace pipescope::viewer
