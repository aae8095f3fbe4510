// PIPESCOPE_TRACE (environment.hpp).
#include "environment.hpp"

#include "../scheduler_impl.hpp"

#include <pipescope/trace_session.hpp>

#include <fmt/core.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <errno.h>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace pipescope::detail {

namespace {

std::atomic<unsigned> recording_schedulers{0};

const char* variable(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

trace::trace_detail parse_detail(std::string_view v) {
    if (v == "nodes") return trace::trace_detail::nodes;
    if (v == "folded") return trace::trace_detail::folded;
    if (v == "auto") return trace::trace_detail::automatic;
    throw std::invalid_argument("PIPESCOPE_TRACE_DETAIL is '" + std::string(v) + "', not one of nodes, folded, auto");
}

std::size_t parse_buffer(std::string_view v) {
    std::size_t mib = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), mib);
    if (ec != std::errc{} || end != v.data() + v.size() || mib == 0 || mib > (std::size_t{1} << 20))
        throw std::invalid_argument("PIPESCOPE_TRACE_BUFFER is '" + std::string(v) + "', not a size in MiB (1..1048576)");
    if (const std::string why = trace::budget_problem(mib); !why.empty())
        throw std::invalid_argument("PIPESCOPE_TRACE_BUFFER " + std::string(v) + " MiB" + why);
    return mib;
}

}   // namespace

std::filesystem::path environment_trace_path(const std::string& path, unsigned n) {
    if (n <= 1) return path;
    std::filesystem::path p(path);
    const std::string ext = p.extension().string();
    p.replace_extension();
    p += fmt::format(".{}{}", n, ext);
    return p;
}

std::unique_ptr<trace_session> open_environment_session(scheduler_impl& s) {
    const char* path = variable("PIPESCOPE_TRACE");
    if (!path) return nullptr;
    try {
        trace_session_options o;
        o.name = program_invocation_short_name;   // glibc: the program's name, as `ps` shows it
        // Ctrl-C or a SIGTERM finishes the trace, then the program's own handling proceeds.
        o.finish_on_signal = true;
        o.recorded_by = "PIPESCOPE_TRACE";   // the analysis's advice names the variables, not the code
        if (const char* d = variable("PIPESCOPE_TRACE_DETAIL")) o.detail = parse_detail(d);
        if (const char* b = variable("PIPESCOPE_TRACE_BUFFER")) o.buffer_mib = parse_buffer(b);
        return std::make_unique<trace_session>(s.owner(), environment_trace_path(path, ++recording_schedulers), o);
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: PIPESCOPE_TRACE: {}; this program runs without recording\n", e.what());
        return nullptr;
    }
}

void report_environment_session(const trace_session& session) {
    fmt::print(stderr, "{}", session.report("pipescope: trace "));
}

}   // namespace pipescope::detail
