// `pipescope annotate FILE [-o OUT] [--force]`: the analysis's answers added to a trace as ordinary
// Perfetto content, so they show in ui.perfetto.dev and any Perfetto-based tool (docs/perfetto-sql.md,
// "Annotated traces"). Under a top-level track "pipescope analysis", per run:
//   critical path · RUN        a slice per node (or folded block) of the longest path, with its edge
//   verdicts · RUN             an instant per verdict at the run's start, its text and suggestion in args
//   throughput bound · RUN     counters: the queueing model's predicted items/s, and the observed rate
// The packets go after the trace's own, on a sequence of their own (trace::overlay_writer); the
// file's bytes are kept as they are, and OUT is written whole or not at all.
#include "arg_parser.hpp"
#include "commands.hpp"
#include "trace_loading.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/report.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/overlay_writer.hpp>
#include <pipescope/trace/trace_file.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace trace = pipescope::trace;
namespace analysis = pipescope::analysis;

constexpr const char* group_name = "pipescope analysis";

struct annotate_args {
    std::string in, out;
    bool force = false;
};

// NAME.pftrace -> NAME.annotated.pftrace (any other name: NAME.annotated).
std::string default_output(const std::string& in) {
    const std::filesystem::path p(in);
    if (p.extension() == ".pftrace") return (p.parent_path() / (p.stem().string() + ".annotated.pftrace")).string();
    return in + ".annotated";
}

annotate_args parse(const std::vector<std::string>& args) {
    annotate_args r;
    pipescope::cli::arg_parser p({.prefix = "annotate: "});
    p.option({"-o", "--output"}, [&](const std::string& v) { r.out = v; });
    p.flag({"--force"}, [&] { r.force = true; });
    p.positional([&](const std::string& v) {
        if (!r.in.empty()) p.fail("unexpected argument " + v + " (one file at a time)");
        r.in = v;
    });
    p.parse(args);
    if (r.in.empty()) p.fail("which trace?");
    if (r.out.empty()) r.out = default_output(r.in);
    return r;
}

// "stage 2 · iteration 17", or "stages 1-3 · iteration 17" for a folded block.
std::string node_name(const analysis::path_node& n) {
    if (n.last_stage != n.stage) return fmt::format("stages {}-{} · iteration {}", n.stage, n.last_stage, n.iteration);
    return fmt::format("stage {} · iteration {}", n.stage, n.iteration);
}

void add_critical_path(trace::overlay_writer& w, const analysis::run_report& r) {
    const analysis::span_result& path = r.dag.with_throttle;
    if (!r.dag.available || path.critical_path.empty()) return;
    const std::uint64_t track = w.add_track("critical path · " + r.title);
    for (const analysis::path_node& n : path.critical_path)
        w.slice(track, n.begin, n.end, node_name(n),
                {{"iteration", static_cast<std::int64_t>(n.iteration)},
                 {"stage", static_cast<std::int64_t>(n.stage)},
                 {"nodes", static_cast<std::int64_t>(n.nodes)},
                 {"worker", static_cast<std::int64_t>(n.worker)},
                 {"via", std::string(analysis::to_string(n.via))}});
}

void add_verdicts(trace::overlay_writer& w, const analysis::run_report& r) {
    if (r.verdicts.empty()) return;
    const std::uint64_t track = w.add_track("verdicts · " + r.title);
    for (const analysis::verdict& v : r.verdicts)
        w.instant(track, r.start, v.rule,
                  {{"finding", v.text},
                   {"suggestion", v.suggestion},
                   {"limiting", static_cast<std::int64_t>(v.limiting)},
                   {"severity", v.severity}});
}

// Two counters over the run: the bound the queueing model predicts and the rate observed, each
// held from the run's start to its end.
void add_throughput(trace::overlay_writer& w, const analysis::run_report& r) {
    const analysis::queueing_bounds& q = r.queueing;
    if (!q.available || r.end <= r.start) return;
    const auto hold = [&](const std::string& name, double value) {
        const std::uint64_t track = w.add_counter_track(name + " · " + r.title + " (items/s)");
        w.counter(track, r.start, value);
        w.counter(track, r.end, value);
    };
    hold("predicted throughput bound (" + q.model + ")", q.predicted);
    hold("observed throughput", q.observed);
}

bool annotated_already(const trace::trace_model& m) {
    for (const trace::track& t : m.tracks)
        if (t.name == group_name) return true;
    return false;
}

}   // namespace

int annotate_command(const std::vector<std::string>& args) {
    const annotate_args a = parse(args);
    std::error_code ec;
    const bool in_place = std::filesystem::equivalent(a.in, a.out, ec);
    if (!a.force && std::filesystem::exists(std::filesystem::symlink_status(a.out, ec))) {
        fmt::print(stderr, "pipescope: {}: exists already (--force replaces it{})\n", a.out,
                   in_place ? ", with the annotated trace" : "");
        return 1;
    }
    try {   // before reading: a directory, device or link at the output is refused at once
        trace::check_output_path(a.out);
    } catch (const trace::output_path_error& e) {
        fmt::print(stderr, "pipescope: annotate: {}\n", e.what());
        return 2;
    }
    // A torn last packet is an error here: packets appended after it would be lost with it.
    std::optional<mapped_trace> t =
        open_mapped_trace(a.in, trace::read_options{}, " (a file cut short: `pipescope recover` it first)");
    if (!t) return 1;
    const trace::mapped_file& file = t->file;
    const trace::trace_model& m = t->model;
    if (annotated_already(m)) {
        fmt::print(stderr, "pipescope: {}: annotated already (it has a '{}' track)\n", a.in, group_name);
        return 1;
    }
    trace::overlay_writer w(group_name);
    const std::vector<analysis::run_report> reports = analysis::analyze_all(m);
    for (const analysis::run_report& r : reports) {
        add_critical_path(w, r);
        add_verdicts(w, r);
        add_throughput(w, r);
    }
    std::string bytes(file.bytes());
    bytes.append(w.packets().begin(), w.packets().end());
    try {
        trace::write_file_atomically(a.out, bytes);
    } catch (const std::runtime_error& e) {
        fmt::print(stderr, "pipescope: {}\n", e.what());
        return 1;
    }
    namespace num = analysis::numbers;
    fmt::print("annotated {}: {} {}, {} bytes of analysis added to the {} of {}\n", a.out, num::count(reports.size()),
               reports.size() == 1 ? "run" : "runs", num::count(w.packets().size()), num::count(file.size()), a.in);
    return 0;
}
