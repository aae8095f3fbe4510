// The `pipescope` command: run a workload (and record it), read traces (validate, export-json,
// stats, compare), open one in the Perfetto UI, tell a lesson, restore a dedup archive, list what
// runs where. `usages` below lists every subcommand with its options; each lives in its own file
// (commands.hpp) except `run` and `validate`, here. `pipescope CMD --help` prints CMD's usage.
//
// Exit status: 0 success, 1 a failed check (the output differs from the serial reference, a trace
// is unsound, a file cannot be read), 2 a usage error (one line naming what is wrong, then where its
// usage is: "see 'pipescope help run'"), 3 any other error, 128 + signal when a run was interrupted.
#include "arg_parser.hpp"
#include "commands.hpp"
#include <pipescope/recording/cost_table.hpp>
#include "interrupt.hpp"
#include <pipescope/recording/recording.hpp>
#include <pipescope/recording/suggest.hpp>
#include "trace_loading.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_file.hpp>
#include <pipescope/workloads/workload.hpp>

#include <fmt/core.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace ws = pipescope::workloads;
namespace num = pipescope::analysis::numbers;

namespace {

// Each subcommand's usage, in the order `pipescope --help` lists them. A usage error prints the one
// line that says what is wrong and the usage of that subcommand only.
struct command_usage {
    const char* command;
    const char* usage;
};
constexpr command_usage usages[] = {
    {"run", "pipescope run <workload> [--policy NAME] [--workers N] [--size tiny|small|large] [--seed N]\n"
            "                     [--param key=value]... [-o trace.pftrace [--no-trace] [--trace-buffer MiB]\n"
            "                     [--trace-plain] [--trace-detail nodes|folded|auto] [--counter-quantum NS]]\n"
            "                     [--progress json]  (progress as JSON lines on stderr, for a program: the viewer)\n"
            "                     [--virtual [--costs EARLIER.pftrace] [--cost-file COSTS.json] [--param NAME_ns=V]...]\n"
            "         --virtual: N virtual workers in virtual time (docs/virtual.md). Scheduler costs: built in, then\n"
            "         the calibration file (pipescope calibrate), then --cost-file, then --param NAME_ns=V (NAME: steal,\n"
            "         failed_steal, yield, wake, spin, queue_op, context_switch, quantum, handoff, lock_hold, clock_read,\n"
            "         wall_clock_read; 0 turns a cost off). Nodes cost their measured time (wall clock while their\n"
            "         thread kept its CPU, else thread CPU time), or with --costs what an earlier recording of the\n"
            "         same workload, size, seed and params\n"
            "         says: then the same command writes the same file, byte for byte. bind-to-stage's threads run on\n"
            "         N virtual cores, time-sliced (quantum, context_switch) when they outnumber them."},
    {"scale", "pipescope scale <workload> --policies a,b,... --workers 1,2,4,... [--size tiny|small|large] [--seed N]\n"
              "                     [--param key=value]... [--costs RECORDING.pftrace] [--serial-runs N] [--out DIR]\n"
              "         the serial time is the median CPU time of N serial runs (default 3), or with --costs the\n"
              "         recording's T1; every point is a virtual run (docs/virtual.md, \"Scaling sweeps\")"},
    {"calibrate", "pipescope calibrate [--out FILE] [--repetitions N]\n"
                  "         measures what steals, wake-ups, queue operations, context switches, yields, cache-line\n"
                  "         hand-offs, queue locks and clock reads cost here (median of N repetitions, default 21,\n"
                  "         with its spread; a warning names a cost that varied too much);\n"
                  "         writes $XDG_CONFIG_HOME/pipescope/calibration.json (else ~/.config/...), which\n"
                  "         run --virtual then uses (docs/virtual.md, \"Calibration\")"},
    {"validate", "pipescope validate <trace.pftrace>"},
    {"recover", "pipescope recover <cut-short trace> [-o OUT] [--force]\n"
                "         writes the complete packets of a recording that was cut short (a NAME.XXXXXX.tmp left by\n"
                "         a killed run) into OUT (default: the name without .XXXXXX.tmp / .tmp) and says what is missing"},
    {"export-json", "pipescope export-json <trace.pftrace> <out.json>"},
    {"stats", "pipescope stats <trace.pftrace>... [--run NAME] [--json]"},
    {"compare", "pipescope compare <a.pftrace> <b.pftrace>... [--json]"},
    {"annotate", "pipescope annotate <trace.pftrace> [-o OUT] [--force]\n"
                 "         adds the analysis to the trace as Perfetto tracks (critical path, verdicts, throughput\n"
                 "         bound) under \"pipescope analysis\"; OUT defaults to NAME.annotated.pftrace"},
    {"sql", "pipescope sql '<query>' <trace.pftrace>... [--csv | --json] [--no-module]\n"
            "         runs a PerfettoSQL query, pipescope's module loaded (docs/perfetto-sql.md), over each trace in\n"
            "         Perfetto's trace processor and prints one table with a file column"},
    {"perfetto",
     "pipescope perfetto <trace.pftrace> [--port N] [--ui URL] [--no-browser] [--timeout SECONDS] [--no-module]\n"
     "         serves the trace on 127.0.0.1 to the Perfetto UI (default https://ui.perfetto.dev; offline,\n"
     "         --ui a build served here) until it is fetched, Ctrl-C, or SECONDS without a fetch (default\n"
     "         300, 0: no limit); the UI opens with pipescope's PerfettoSQL module loaded and a per-stage\n"
     "         query tab (startup commands; --no-module: the bare trace)"},
    {"lesson", "pipescope lesson --list | <name> [--workers N] [--size tiny|small|large] [--out DIR] [--no-viewer]"},
    {"dedup-restore", "pipescope dedup-restore <archive> <out>"},
    {"list", "pipescope list [--json]"},
};

// "usage: ..." for one subcommand, or for all of them (an unknown or no command).
std::string usage_text(const std::string& command = {}) {
    std::string out;
    for (const auto& u : usages)
        if (command.empty() || command == u.command)
            out += std::string(out.empty() ? "usage: " : "       ") + u.usage + "\n";
    if (out.empty()) return usage_text();
    if (command.empty()) out += "       pipescope --help | --version\n";
    return out;
}

using pipescope::recording::run_args;
using pipescope::recording::usage_error;

std::vector<std::string> command_names() {
    std::vector<std::string> names;
    for (const auto& u : usages) names.push_back(u.command);
    names.push_back("help");
    return names;
}

bool is_command(const std::string& name) {
    for (const auto& u : usages)
        if (name == u.command) return true;
    return false;
}

// Where a usage error points, as git does: the command's own usage, or the list of commands.
std::string see_help(const std::vector<std::string>& args) {
    return !args.empty() && is_command(args[0]) ? "see 'pipescope help " + args[0] + "'" : "see 'pipescope help'";
}

// `pipescope help [CMD]`: every command's usage, or CMD's.
int help_command(const std::vector<std::string>& args) {
    if (args.size() > 1) throw usage_error("help takes one command, e.g. pipescope help run");
    if (args.empty()) {
        fmt::print("{}", usage_text());
        return 0;
    }
    if (!is_command(args[0]))
        throw usage_error("no command '" + args[0] + "'" + pipescope::recording::did_you_mean(args[0], command_names()));
    fmt::print("{}", usage_text(args[0]));
    return 0;
}

// --trace-buffer MIB: the budget is reserved, not touched (docs/tracing.md, "Recording"), but more
// than the machine has cannot be meant.
std::size_t parse_mib(const std::string& text) {
    const std::size_t mib =
        pipescope::cli::whole_number("--trace-buffer", text, {1, 1048576, "a size in MiB between 1 and 1048576"});
    if (const std::string why = pipescope::trace::budget_problem(mib); !why.empty())
        throw usage_error("--trace-buffer " + text + " MiB" + why);
    return mib;
}

// The options of `pipescope run` that say what is recorded and how.
void trace_options(pipescope::cli::arg_parser& p, run_args& r) {
    p.option({"-o", "--output"}, [&](const std::string& v) {
        r.trace_path = v;
        // Refused now ("" included), not after the run: a directory, device, FIFO or link there.
        pipescope::trace::check_output_path(r.trace_path);
    });
    p.flag({"--no-trace"}, [&] { r.trace = false; });
    p.option({"--trace-buffer"}, [&](const std::string& v) { r.trace_buffer_mib = parse_mib(v); });
    p.flag({"--trace-plain"}, [&] { r.trace_compress = false; });
    p.option({"--trace-detail"}, [&](const std::string& v) {
        const auto d = pipescope::trace::parse_trace_detail(v);
        if (!d) throw usage_error("--trace-detail " + v + ": expected nodes, folded or auto");
        r.trace_detail = *d;
    });
    p.number({"--counter-quantum"}, {0, 1'000'000'000, "nanoseconds between 0 (every sample) and 1000000000"},
             [&](std::uint64_t ns) { r.counter_quantum_ns = ns; });
}

run_args parse_run(const std::vector<std::string>& args) {
    run_args r;
    std::vector<std::string> params;
    pipescope::cli::arg_parser p;
    p.option({"--policy"}, [&](const std::string& v) { r.request.policy = v; });
    p.number({"--workers"}, {1, 1024, "a number of workers between 1 and 1024"},
             [&](std::uint64_t n) { r.workers = static_cast<unsigned>(n); });
    p.option({"--size"}, [&](const std::string& v) { r.request.size = ws::parse_size(v); });
    p.number({"--seed"}, {0, UINT64_MAX, "a non-negative integer"}, [&](std::uint64_t n) { r.request.seed = n; });
    p.option({"--param"}, [&](const std::string& v) { params.push_back(v); });
    trace_options(p, r);
    p.flag({"--virtual"}, [&] { r.virtual_time = true; });
    p.option({"--progress"}, [&](const std::string& v) {
        if (v != "json") throw usage_error("--progress " + v + ": expected json");
        r.progress_json = true;
    });
    p.option({"--costs"}, [&](const std::string& v) { r.costs_trace = v; });
    p.option({"--cost-file"}, [&](const std::string& v) { r.cost_file = v; });
    p.positional([&](const std::string& v) {
        if (!r.workload.empty()) throw usage_error("unexpected argument " + v + " (one workload per run)");
        r.workload = v;
    });
    p.parse(args);
    if (r.workload.empty()) throw usage_error("run: which workload? (see `pipescope list`)");
    r.cost_params = pipescope::recording::take_cost_params(params);
    if (!r.virtual_time && (!r.cost_params.empty() || !r.costs_trace.empty() || !r.cost_file.empty()))
        throw usage_error((!r.cost_params.empty()   ? "--param " + r.cost_params[0]
                           : !r.costs_trace.empty() ? std::string("--costs")
                                                    : std::string("--cost-file")) +
                          ": virtual costs need --virtual");
    r.request.params = ws::param_set::parse(params);
    r.params = params;
    if (r.virtual_time && r.workers == 0)
        throw usage_error("--virtual: give the number of virtual workers with --workers N");

    return r;
}

// Reads a trace and says what it holds, or what is wrong with it and where. Exit 0 when it follows
// the importer's rules and every slice closes, 1 otherwise. A file whose last packet was cut short
// (a killed recording) is read up to that packet and reported as partial.
int validate_trace(const std::vector<std::string>& args) {
    if (args.size() != 1) throw usage_error("validate: give exactly one trace file");
    std::string file;
    pipescope::cli::arg_parser p;   // an option is refused: validate has none
    p.positional([&](const std::string& v) { file = v; });
    p.parse(args);
    pipescope::trace::perfetto_summary s;
    try {
        const pipescope::trace::mapped_file f = pipescope::trace::open_trace_file(file);
        s = pipescope::trace::summarize_perfetto(f.bytes(), cli_read_options());
    } catch (const pipescope::trace::proto::decode_error& e) {
        fmt::print(stderr, "pipescope: {}: malformed at {}\n", file, e.what());
        return 1;
    } catch (const std::runtime_error& e) {
        fmt::print(stderr, "pipescope: {}\n", e.what());
        return 1;
    }
    fmt::print("{}: {} bytes, {} packets, {} tracks, {} slices ({} open, {} unmatched ends), {} instants, {} flows, {} "
               "counter values\n",
               file, num::count(s.file_bytes), num::count(s.packets), num::count(s.tracks), num::count(s.slices),
               num::count(s.open_slices), num::count(s.unmatched_ends), num::count(s.instants), num::count(s.flows),
               num::count(s.counter_values));
    if (s.folded_slices)
        fmt::print("  {} of the slices are folded node runs (trace detail folded or auto: docs/tracing.md)\n",
                   num::count(s.folded_slices));
    for (const auto& p : s.problems) fmt::print("  problem: {}\n", p);
    if (s.cut_short)
        fmt::print("  CUT SHORT: the recording was cut short at byte {} (last packet incomplete: {} bytes not read); "
                   "`pipescope recover {}` writes the complete packets to a clean file\n",
                   s.cut_short_at, num::count(s.file_bytes - s.cut_short_at), file);
    // A pipescope run begins with a "run" instant and ends with a "run summary": a recording that
    // was cut short (the process killed, a NAME.XXXXXX.tmp left behind) has the first without the second.
    const std::uint64_t runs = s.runs, summaries = s.run_summaries;
    if (runs > summaries)
        fmt::print("  PARTIAL: {} of {} recorded runs have no run summary: the recording was cut short (slices still "
                   "open were left unterminated)\n",
                   num::count(runs - summaries), num::count(runs));
    if (s.packets == 0) fmt::print("  EMPTY: the file holds no packets (a recording that never wrote anything)\n");
    const bool partial = runs > summaries || s.packets == 0 || s.cut_short;
    const bool ok = s.problems.empty() && s.open_slices == 0 && s.unmatched_ends == 0 && !partial;
    fmt::print("{}\n", ok ? "ok" : partial ? "NOT OK (partial)" : "NOT OK");
    return ok ? 0 : 1;
}

int run_workload(const run_args& args) {
    pipescope::cli::interrupt_guard interrupt;   // Ctrl-C cancels the measured loop (interrupt.hpp)
    const int interrupted_status = 128 + SIGINT;
    // Interrupted before anything was recorded (the serial reference, or a measured run cancelled
    // before its first iteration): no trace, and an existing file of that name stays as it was.
    const auto not_written = [&] {
        const std::string what = !args.trace_path.empty() && args.trace
                                     ? ": " + args.trace_path + " not written (the existing file is unchanged)"
                                     : std::string();
        fmt::print(stderr, "pipescope: interrupted before the measured run{}\n", what);
        return interrupt.signal_number() ? 128 + interrupt.signal_number() : interrupted_status;
    };
    pipescope::recording::recorded_run r;
    try {
        r = pipescope::recording::record_run(args, interrupt.token());
    } catch (const ws::interrupted_before_measured_run&) {
        return not_written();
    }
    if (r.nothing_recorded) return not_written();
    pipescope::recording::print_run(r, args.request.size);
    if (r.report.stats.cancelled || interrupt.interrupted())
        return interrupt.signal_number() ? 128 + interrupt.signal_number() : interrupted_status;
    return r.report.matches_reference ? 0 : 1;
}

}   // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.empty() || args[0] == "--help" || args[0] == "-h") {
            fmt::print("{}", usage_text());
            return args.empty() ? 2 : 0;
        }
        if (args[0] == "help") return help_command({args.begin() + 1, args.end()});
        if (args[0] == "--version") {
            fmt::print("pipescope {}\n", PIPESCOPE_VERSION);
            return 0;
        }
        // `pipescope CMD --help` / `-h`: that command's usage (never a file named --help).
        if (args.size() >= 2 && (args[1] == "--help" || args[1] == "-h")) {
            for (const auto& u : usages)
                if (args[0] == u.command) {
                    fmt::print("{}", usage_text(args[0]));
                    return 0;
                }
        }
        if (args[0] == "list") return list_command({args.begin() + 1, args.end()});
        if (args[0] == "validate") return validate_trace({args.begin() + 1, args.end()});
        if (args[0] == "recover") return recover_command({args.begin() + 1, args.end()});
        if (args[0] == "export-json") return export_json_command({args.begin() + 1, args.end()});
        if (args[0] == "stats") return stats_command({args.begin() + 1, args.end()});
        if (args[0] == "calibrate") return calibrate_command({args.begin() + 1, args.end()});
        if (args[0] == "lesson") return lesson_command({args.begin() + 1, args.end()});
        if (args[0] == "compare") return compare_command({args.begin() + 1, args.end()});
        if (args[0] == "annotate") return annotate_command({args.begin() + 1, args.end()});
        if (args[0] == "sql") return sql_command({args.begin() + 1, args.end()});
        if (args[0] == "perfetto") return perfetto_command({args.begin() + 1, args.end()});
        if (args[0] == "dedup-restore") return dedup_restore_command({args.begin() + 1, args.end()});
        if (args[0] == "scale") return scale_command({args.begin() + 1, args.end()});
        if (args[0] == "run") return run_workload(parse_run({args.begin() + 1, args.end()}));
        throw usage_error("unknown command '" + args[0] + "'" +
                          pipescope::recording::did_you_mean(args[0], command_names()));
    } catch (const pipescope::trace::output_path_error& e) {   // one line: the path and why
        fmt::print(stderr, "pipescope: {}\n", e.what());
        return 2;
    } catch (const usage_error& e) {   // two lines: what is wrong, and where the usage is
        fmt::print(stderr, "pipescope: {}\n{}\n", e.what(), see_help(args));
        return 2;
    } catch (const std::invalid_argument& e) {   // a bad value, found while parsing it
        fmt::print(stderr, "pipescope: {}\n{}\n", e.what(), see_help(args));
        return 2;
    } catch (const ws::interrupted_before_measured_run& e) {   // Ctrl-C in a serial reference (lesson, scale)
        fmt::print(stderr, "pipescope: {}: nothing was written\n", e.what());
        return 128 + SIGINT;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: error: {}\n", e.what());
        return 3;
    }
}
