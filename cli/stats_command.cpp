// `pipescope stats trace.pftrace... [--run NAME] [--json]`: for each run, the analysis report
// (analysis/report.hpp): breakdown, per-stage table, DAG bounds, queueing bounds and verdicts.
#include "arg_parser.hpp"
#include "commands.hpp"
#include "trace_loading.hpp"

#include <pipescope/analysis/report.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace an = pipescope::analysis;

int stats_command(const std::vector<std::string>& args) {
    std::vector<std::string> files;
    std::string run_name;
    bool json = false, have_run = false;
    pipescope::cli::arg_parser p({.prefix = "stats: ", .unknown = "unknown option '{}'"});
    p.flag({"--json"}, [&] { json = true; });
    p.option(
        {"--run"}, [&](const std::string& v) { run_name = v, have_run = true; }, "a run's name");
    p.positional([&](const std::string& v) { files.push_back(v); });
    p.parse(args);
    if (files.empty()) p.fail("which trace?");
    std::vector<loaded_trace> traces;
    if (!load_traces(files, traces)) return 1;

    std::vector<std::pair<const loaded_trace*, an::run_scope>> selected;
    for (const auto& t : traces)
        for (auto& s : an::scopes_of(t.model))
            if (!have_run || s.title == run_name) selected.emplace_back(&t, std::move(s));
    if (have_run && selected.empty()) {
        fmt::print(stderr, "pipescope: stats: no run named '{}'; the runs are:\n", run_name);
        for (const auto& t : traces)
            for (const auto& s : an::scopes_of(t.model)) fmt::print(stderr, "  {}  ({})\n", s.title, t.path);
        return 1;
    }

    if (json) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& [t, s] : selected) {
            nlohmann::json j = an::to_json(an::analyze(s));
            j["file"] = t->path;
            runs.push_back(std::move(j));
        }
        fmt::print("{}\n", nlohmann::json{{"format", an::report_format}, {"runs", runs}}.dump(2));
        return 0;
    }
    const loaded_trace* last = nullptr;
    for (const auto& [t, s] : selected) {
        if (t != last) {
            fmt::print("# {}\n", t->path);
            for (const auto& p : t->model.problems) fmt::print("  problem: {}\n", p);
            // A recording cut short: its figures are lower bounds (the note also went to stderr).
            for (const auto& n : pipescope::trace::incomplete_notes(t->model, t->path)) fmt::print("  incomplete: {}\n", n);
            last = t;
        }
        fmt::print("{}\n", an::to_text(an::analyze(s)));
    }
    return 0;
}
