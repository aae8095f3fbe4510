// `pipescope recover FILE [-o OUT] [--force]`: turns what a killed recording left behind (a
// NAME.XXXXXX.tmp whose last packet may be torn) into a clean trace of its complete packets
// (docs/trace-format.md, "Reading a file").
#include "arg_parser.hpp"
#include "commands.hpp"
#include <pipescope/recording/recording.hpp>
#include "trace_loading.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/trace_file.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace trace = pipescope::trace;
namespace num = pipescope::analysis::numbers;
using pipescope::recording::usage_error;

// "run.pftrace.3Xk9aa.tmp" and "run.pftrace.tmp" -> "run.pftrace"; "" for a name without ".tmp".
std::string name_without_temporary_suffix(const std::string& file) {
    std::string_view s = file;
    if (!s.ends_with(".tmp") || s.size() <= 4) return {};
    s.remove_suffix(4);
    // The recorder's unique part: a dot and six letters or digits (mkstemp's XXXXXX).
    if (s.size() > 7 && s[s.size() - 7] == '.') {
        bool unique = true;
        for (char c : s.substr(s.size() - 6)) unique &= std::isalnum(static_cast<unsigned char>(c)) != 0;
        if (unique) s.remove_suffix(7);
    }
    const std::string out(s);
    return out.empty() || out.ends_with("/") ? std::string() : out;
}

struct recover_args {
    std::string in, out;
    bool force = false;
};

recover_args parse(const std::vector<std::string>& args) {
    recover_args r;
    pipescope::cli::arg_parser p;
    p.option({"-o", "--output"}, [&](const std::string& v) { r.out = v; });
    p.flag({"--force"}, [&] { r.force = true; });
    p.positional([&](const std::string& v) {
        if (!r.in.empty()) p.fail("unexpected argument " + v + " (one file at a time)");
        r.in = v;
    });
    p.parse(args);
    if (r.in.empty()) throw usage_error("recover: which file? (a NAME.XXXXXX.tmp left by a killed recording)");
    if (r.out.empty()) r.out = name_without_temporary_suffix(r.in);
    if (r.out.empty())
        throw usage_error("recover: no output name follows from " + r.in +
                          " (it is not NAME.XXXXXX.tmp or NAME.tmp): give -o OUT");
    return r;
}

}   // namespace

int recover_command(const std::vector<std::string>& args) {
    const recover_args a = parse(args);
    std::error_code ec;
    if (std::filesystem::equivalent(a.in, a.out, ec)) throw usage_error("recover: -o " + a.out + " is the file read");
    if (!a.force && std::filesystem::exists(std::filesystem::symlink_status(a.out, ec))) {
        fmt::print(stderr, "pipescope: {}: exists already (--force replaces it)\n", a.out);
        return 1;
    }
    try {   // before reading: a directory, device or link at the output is refused at once
        trace::check_output_path(a.out);
    } catch (const trace::output_path_error& e) {
        fmt::print(stderr, "pipescope: recover: {}\n", e.what());
        return 2;
    }
    std::optional<mapped_trace> t = open_mapped_trace(a.in, cli_read_options(),
                                                      ": it is damaged before its end, which recover does not repair "
                                                      "(it keeps the complete packets of a file cut short)");
    if (!t) return 1;
    const trace::mapped_file& file = t->file;
    const trace::trace_model& m = t->model;
    const std::uint64_t kept = m.cut_short ? m.cut_short_at : file.size();
    try {
        trace::write_file_atomically(a.out, file.bytes().substr(0, kept));   // whole or not at all
    } catch (const std::runtime_error& e) {
        fmt::print(stderr, "pipescope: {}\n", e.what());
        return 1;
    }
    std::uint64_t summarized = 0;
    for (const trace::run& r : m.runs) summarized += r.summarized;
    fmt::print("recovered {}: {} of the {} bytes of {}: {} packets, {} runs ({} with a summary), {} slices, {} "
               "instants, {} counter values\n",
               a.out, num::count(kept), num::count(file.size()), a.in, num::count(m.packets), num::count(m.runs.size()),
               num::count(summarized), num::count(m.slices), num::count(m.instants), num::count(m.counter_values));
    const std::vector<std::string> notes = trace::incomplete_notes(m, a.in);
    if (notes.empty()) fmt::print("  nothing is missing: {} was complete\n", a.in);
    for (const std::string& n : notes) fmt::print("  missing: {}\n", n);
    return 0;
}
