// pipescope perfetto <trace> [--port N] [--ui URL] [--no-browser] [--timeout SECONDS]
//
// Opens a local trace in the Perfetto UI the way Perfetto's own `open_trace_in_ui` tool does: a
// tiny HTTP server on 127.0.0.1 serves the file, and the UI is opened at
// `<ui>/#!/?url=http://127.0.0.1:<port>/<name>`; the page then fetches the trace from this
// machine (the bytes never leave it). The public UI allows fetching from 127.0.0.1:9001 (the port
// Perfetto's tools use), hence the default port. The server (trace_server.hpp: the file opened once,
// 127.0.0.1 and its Host only, one thread per connection) stops once it has sent the whole file, on
// Ctrl-C, after --timeout seconds without a fetch, or when the file changed on disk under it.
// Without a display (or with --no-browser) it prints the URL.
#include "arg_parser.hpp"
#include "commands.hpp"
#include "sql_module.hpp"
#include "interrupt.hpp"
#include <pipescope/recording/recording.hpp>
#include "trace_server.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr const char* default_ui = "https://ui.perfetto.dev";

struct perfetto_args {
    std::filesystem::path trace;
    unsigned port = 9001;
    std::string ui = default_ui;
    bool open_browser = true;
    bool module = true;   // --no-module: the bare trace, no startup commands
    // Nobody fetching the trace for five minutes means no UI is coming (no browser, no network):
    // the command ends rather than holding the port forever. --timeout 0 waits as long as it takes.
    std::optional<double> timeout_seconds = 300;
};

// --port and --timeout say what they expect without the "perfetto: " the parser's own messages carry.
pipescope::cli::number_range whole_numbers(std::uint64_t lo, std::uint64_t hi) {
    return {lo, hi, fmt::format("a whole number between {} and {}", lo, hi)};
}

perfetto_args parse(const std::vector<std::string>& args) {
    perfetto_args a;
    bool have_trace = false;
    pipescope::cli::arg_parser p({.prefix = "perfetto: "});
    p.option({"--port"}, [&](const std::string& v) {
        a.port = static_cast<unsigned>(pipescope::cli::whole_number("--port", v, whole_numbers(1, 65535)));
    });
    p.option({"--ui"}, [&](const std::string& v) { a.ui = v; });
    p.flag({"--no-browser"}, [&] { a.open_browser = false; });
    p.flag({"--no-module"}, [&] { a.module = false; });
    p.option({"--timeout"}, [&](const std::string& v) {
        const std::uint64_t t = pipescope::cli::whole_number("--timeout", v, whole_numbers(0, 86400));
        a.timeout_seconds = t ? std::optional<double>(static_cast<double>(t)) : std::nullopt;
    });
    p.positional([&](const std::string& v) {
        if (have_trace) p.fail("one trace at a time (got " + a.trace.string() + " and " + v + ")");
        a.trace = v, have_trace = true;
    });
    p.parse(args);
    if (!have_trace) p.fail("which trace?");
    while (!a.ui.empty() && a.ui.back() == '/') a.ui.pop_back();
    if (a.ui.rfind("http://", 0) != 0 && a.ui.rfind("https://", 0) != 0)
        p.fail("--ui " + a.ui + ": expected an http:// or https:// URL");
    return a;
}

// "https://ui.perfetto.dev/v52" -> "https://ui.perfetto.dev": what the browser sends as Origin.
std::string origin_of(const std::string& url) {
    const std::size_t host = url.find("://") + 3;
    const std::size_t path = url.find('/', host);
    return path == std::string::npos ? url : url.substr(0, path);
}

// Percent-encodes a file name for the URL path (unreserved characters stay as they are).
std::string url_encode(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

bool have_display() {
    const char* x = std::getenv("DISPLAY");
    const char* w = std::getenv("WAYLAND_DISPLAY");
    return (x && *x) || (w && *w);
}

// Starts the desktop's browser on `url` without waiting for it; false if none could be started.
bool start_browser(const std::string& url) {
    pid_t pid = 0;
    const char* argv[] = {"xdg-open", url.c_str(), nullptr};
    if (::posix_spawnp(&pid, "xdg-open", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0) return false;
    int status = 0;
    // xdg-open returns once it has handed the URL over; give up waiting after a few seconds.
    for (int i = 0; i < 50; ++i) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        ::usleep(100000);
    }
    return true;
}

// The UI's startup commands (route argument `startupCommands`, a JSON list of {id, args}; Perfetto UI
// v52 runs these ones from a URL, its allowlist): load pipescope's module, pin an annotated trace's
// critical paths, and open the per-stage table in a query tab. "" when the module is not found.
std::string startup_commands() {
    const std::optional<std::filesystem::path> module = pipescope::cli::sql_module_file();
    if (!module) return {};
    const nlohmann::json commands =
        nlohmann::json::array({{{"id", "dev.perfetto.RunQuery"}, {"args", {pipescope::cli::sql_module_statements(*module)}}},
                               {{"id", "dev.perfetto.PinTracksByRegex"}, {"args", {"^critical path · .*"}}},
                               {{"id", "dev.perfetto.RunQueryAndShowTab"}, {"args", {"select * from pipescope_stage"}}}});
    return "&startupCommands=" + url_encode(commands.dump());
}

}   // namespace

int perfetto_command(const std::vector<std::string>& args) {
    const perfetto_args a = parse(args);
    std::optional<pipescope::cli::served_file> file;
    try {
        file.emplace(a.trace);   // opened once: every request is answered from this descriptor
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: {}\n", e.what());   // as every reader says it (trace_file.hpp)
        return 1;
    }
    const std::string name = a.trace.filename().string();
    const std::string path = fmt::format("/{}", url_encode(name));
    pipescope::cli::interrupt_guard interrupt("stopping the server");   // Ctrl-C: exit 130
    pipescope::cli::trace_server server(*file, a.port, path, origin_of(a.ui));

    const std::string trace_url = "http://127.0.0.1:" + std::to_string(a.port) + path;
    const std::string ui_url = a.ui + "/#!/?url=" + trace_url + "&referrer=pipescope";
    const std::string startup = a.module ? startup_commands() : std::string();
    const bool opened = a.open_browser && have_display() && start_browser(ui_url + startup);
    // Opened here, the long startup part need not be printed; otherwise the user needs all of it.
    fmt::print("serving {} ({} bytes) at {} on 127.0.0.1 only\n{}{}{}\n", a.trace.string(), file->size(), trace_url,
               opened ? "opened the Perfetto UI: " : "open this in a browser: ", ui_url, opened ? "" : startup);
    fmt::print("waiting for the UI to fetch it (Ctrl-C stops{})\n",
               a.timeout_seconds ? fmt::format(", or {:.0f} s without a fetch", *a.timeout_seconds) : "");
    // The public UI is a web page: without the internet it never loads, and nothing here can tell.
    if (a.ui == default_ui)
        fmt::print("offline? the public UI needs the internet: serve a Perfetto UI build on this machine and pass "
                   "--ui http://127.0.0.1:PORT, or open the trace in pipescope-viewer\n");
    if (!startup.empty())
        fmt::print("the URL's startup commands load pipescope's PerfettoSQL module, pin an annotated trace's critical "
                   "paths and open pipescope_stage in a query tab (--no-module: the bare trace)\n");
    std::fflush(stdout);

    using outcome = pipescope::cli::trace_server::outcome;
    switch (server.run(interrupt.token(), a.timeout_seconds)) {
        case outcome::fetched: fmt::print("the UI fetched the trace ({} bytes); done\n", file->size()); return 0;
        case outcome::interrupted: fmt::print("stopped before the trace was fetched\n"); return 130;
        case outcome::timed_out:
            fmt::print(stderr, "pipescope: perfetto: nobody fetched {} within {} s\n", trace_url, *a.timeout_seconds);
            return 1;
        case outcome::broken: break;
    }
    fmt::print(stderr, "pipescope: perfetto: {}\n", server.failure());
    return 1;
}
