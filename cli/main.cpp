// The `pipescope` command: run a workload (and record it), read traces (validate, export-json,
// stats, compare), open one in the Perfetto UI, tell a lesson, restore a dedup archive, list what
// runs where. `usages` below lists every subcommand with its options; each lives in its own file
// (commands.hpp) except `run` and `validate`, here.
//
// Exit status: 0 success, 1 a failed check (the output differs from the serial reference, a trace
// is unsound, a file cannot be read), 2 a usage error (one line naming what is wrong, then that
// subcommand's usage), 3 any other error, 128 + signal when a run was interrupted.
#include "commands.hpp"
#include "cost_table.hpp"
#include "interrupt.hpp"
#include "recording.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/workloads/workload.hpp>

#include <fstream>
#include <iterator>

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
            "                     [--virtual [--costs EARLIER.pftrace] [--cost-file COSTS.json] [--param NAME_ns=V]...]\n"
            "         --virtual: N virtual workers in virtual time (docs/virtual.md). Scheduler costs: built in, then\n"
            "         the calibration file (pipescope calibrate), then --cost-file, then --param NAME_ns=V (NAME: steal,\n"
            "         failed_steal, yield, wake, spin, queue_op, context_switch, quantum, clock_read). Nodes cost their\n"
            "         CPU time, or with --costs what an earlier recording of the same workload, size, seed and params\n"
            "         says: then the same command writes the same file, byte for byte. bind-to-stage's threads run on\n"
            "         N virtual cores, time-sliced (quantum, context_switch) when they outnumber them."},
    {"scale", "pipescope scale <workload> --policies a,b,... --workers 1,2,4,... [--size tiny|small|large] [--seed N]\n"
              "                     [--param key=value]... [--costs RECORDING.pftrace] [--out DIR]"},
    {"calibrate", "pipescope calibrate [--out FILE] [--repetitions N]\n"
                  "         measures what steals, wake-ups, queue operations, context switches and clock reads cost\n"
                  "         here; writes $XDG_CONFIG_HOME/pipescope/calibration.json (else ~/.config/...), which\n"
                  "         run --virtual then uses (docs/virtual.md, \"Calibration\")"},
    {"validate", "pipescope validate <trace.pftrace>"},
    {"export-json", "pipescope export-json <trace.pftrace> <out.json>"},
    {"stats", "pipescope stats <trace.pftrace>... [--run NAME] [--json]"},
    {"compare", "pipescope compare <a.pftrace> <b.pftrace>... [--json]"},
    {"perfetto", "pipescope perfetto <trace.pftrace> [--port N] [--ui URL] [--no-browser] [--timeout SECONDS]"},
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

using pipescope::cli::run_args;
using pipescope::cli::usage_error;

unsigned parse_workers(const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long v = std::stoul(text, &used);
        if (used == text.size() && v >= 1 && v <= 1024) return static_cast<unsigned>(v);
    } catch (const std::exception&) {
    }
    throw usage_error("--workers " + text + ": expected a number of workers between 1 and 1024");
}

std::uint64_t parse_seed(const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long long v = std::stoull(text, &used);
        if (used == text.size() && !text.empty() && text[0] != '-') return v;
    } catch (const std::exception&) {
    }
    throw usage_error("--seed " + text + ": expected a non-negative integer");
}

std::size_t parse_mib(const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long v = std::stoul(text, &used);
        if (used == text.size() && v >= 1 && v <= 65536) return v;
    } catch (const std::exception&) {
    }
    throw usage_error("--trace-buffer " + text + ": expected a size in MiB between 1 and 65536");
}

run_args parse_run(const std::vector<std::string>& args) {
    run_args r;
    std::vector<std::string> params;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw usage_error(a + " needs a value");
            return args[++i];
        };
        if (a == "--policy") r.request.policy = value();
        else if (a == "--workers") r.workers = parse_workers(value());
        else if (a == "--size") r.request.size = ws::parse_size(value());
        else if (a == "--seed") r.request.seed = parse_seed(value());
        else if (a == "--param") params.push_back(value());
        else if (a == "-o" || a == "--output") r.trace_path = value();
        else if (a == "--no-trace") r.trace = false;
        else if (a == "--virtual") r.virtual_time = true;
        else if (a == "--costs") r.costs_trace = value();
        else if (a == "--cost-file") r.cost_file = value();
        else if (a == "--trace-buffer") r.trace_buffer_mib = parse_mib(value());
        else if (a == "--trace-plain") r.trace_compress = false;
        else if (a == "--trace-detail") {
            const std::string& v = value();
            const auto d = pipescope::trace::parse_trace_detail(v);
            if (!d) throw usage_error("--trace-detail " + v + ": expected nodes, folded or auto");
            r.trace_detail = *d;
        } else if (a == "--counter-quantum") {
            const std::string& v = value();
            try {
                std::size_t used = 0;
                const unsigned long long ns = std::stoull(v, &used);
                if (used != v.size() || v[0] == '-' || ns > 1'000'000'000ull) throw std::invalid_argument(v);
                r.counter_quantum_ns = ns;
            } catch (const std::exception&) {
                throw usage_error("--counter-quantum " + v +
                                  ": expected nanoseconds between 0 (every sample) and 1000000000");
            }
        } else if (!a.empty() && a[0] == '-') throw usage_error("unknown option " + a);
        else if (r.workload.empty()) r.workload = a;
        else throw usage_error("unexpected argument " + a + " (one workload per run)");
    }
    if (r.workload.empty()) throw usage_error("run: which workload? (see `pipescope list`)");
    r.cost_params = pipescope::cli::take_cost_params(params);
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
// the importer's rules and every slice closes, 1 otherwise.
int validate_trace(const std::vector<std::string>& args) {
    if (args.size() != 1) throw usage_error("validate: give exactly one trace file");
    std::ifstream in(args[0], std::ios::binary);
    if (!in) {
        fmt::print(stderr, "pipescope: validate: cannot open {}\n", args[0]);
        return 1;
    }
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    pipescope::trace::perfetto_summary s;
    try {
        s = pipescope::trace::summarize_perfetto(bytes);
    } catch (const pipescope::trace::proto::decode_error& e) {
        fmt::print(stderr, "pipescope: {}: malformed at {}\n", args[0], e.what());
        return 1;
    }
    fmt::print("{}: {} bytes, {} packets, {} tracks, {} slices ({} open, {} unmatched ends), {} instants, {} flows, {} "
               "counter values\n",
               args[0], num::count(bytes.size()), num::count(s.packets), num::count(s.tracks), num::count(s.slices),
               num::count(s.open_slices), num::count(s.unmatched_ends), num::count(s.instants), num::count(s.flows),
               num::count(s.counter_values));
    if (s.folded_slices)
        fmt::print("  {} of the slices are folded node runs (trace detail folded or auto: docs/tracing.md)\n",
                   num::count(s.folded_slices));
    for (const auto& p : s.problems) fmt::print("  problem: {}\n", p);
    // A pipescope run begins with a "run" instant and ends with a "run summary": a recording that
    // was cut short (the process killed, a NAME.tmp left behind) has the first without the second.
    const std::uint64_t runs = s.runs, summaries = s.run_summaries;
    if (runs > summaries)
        fmt::print("  PARTIAL: {} of {} recorded runs have no run summary: the recording was cut short (slices still "
                   "open were left unterminated)\n",
                   num::count(runs - summaries), num::count(runs));
    if (s.packets == 0) fmt::print("  EMPTY: the file holds no packets (a recording that never wrote anything)\n");
    const bool ok = s.problems.empty() && s.open_slices == 0 && s.unmatched_ends == 0 && runs == summaries && s.packets > 0;
    fmt::print("{}\n", ok ? "ok" : runs > summaries || s.packets == 0 ? "NOT OK (partial)" : "NOT OK");
    return ok ? 0 : 1;
}

int run_workload(const run_args& args) {
    pipescope::cli::interrupt_guard interrupt;   // Ctrl-C cancels the measured loop (interrupt.hpp)
    const pipescope::cli::recorded_run r = pipescope::cli::record_run(args, interrupt.token());
    pipescope::cli::print_run(r, args.request.size);
    if (r.report.stats.cancelled || interrupt.interrupted())
        return 128 + (interrupt.signal_number() ? interrupt.signal_number() : SIGINT);
    return r.report.matches_reference ? 0 : 1;
}

}   // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
            fmt::print("{}", usage_text());
            return args.empty() ? 2 : 0;
        }
        if (args[0] == "--version") {
            fmt::print("pipescope {}\n", PIPESCOPE_VERSION);
            return 0;
        }
        if (args[0] == "list") return list_command({args.begin() + 1, args.end()});
        if (args[0] == "validate") return validate_trace({args.begin() + 1, args.end()});
        if (args[0] == "export-json") return export_json_command({args.begin() + 1, args.end()});
        if (args[0] == "stats") return stats_command({args.begin() + 1, args.end()});
        if (args[0] == "calibrate") return calibrate_command({args.begin() + 1, args.end()});
        if (args[0] == "lesson") return lesson_command({args.begin() + 1, args.end()});
        if (args[0] == "compare") return compare_command({args.begin() + 1, args.end()});
        if (args[0] == "perfetto") return perfetto_command({args.begin() + 1, args.end()});
        if (args[0] == "dedup-restore") return dedup_restore_command({args.begin() + 1, args.end()});
        if (args[0] == "scale") return scale_command({args.begin() + 1, args.end()});
        if (args[0] == "run") return run_workload(parse_run({args.begin() + 1, args.end()}));
        throw usage_error("unknown command '" + args[0] + "'");
    } catch (const usage_error& e) {
        fmt::print(stderr, "pipescope: {}\n{}", e.what(), usage_text(args.empty() ? "" : args[0]));
        return 2;
    } catch (const std::invalid_argument& e) {   // a bad value, found while parsing it
        fmt::print(stderr, "pipescope: {}\n{}", e.what(), usage_text(args.empty() ? "" : args[0]));
        return 2;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: error: {}\n", e.what());
        return 3;
    }
}
