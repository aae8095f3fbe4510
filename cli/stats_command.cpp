// `pipescope stats trace.pftrace... [--run NAME] [--json]`: for each run, the analysis report
// (analysis/report.hpp): breakdown, per-stage table, DAG bounds, queueing bounds and verdicts.
#include "arg_parser.hpp"
#include "commands.hpp"
#include "trace_loading.hpp"

#include <pipescope/analysis/report.hpp>

#include <nlohmann/json.hpp>

#include <iostream>

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
        std::cerr << "pipescope: stats: no run named '" << run_name << "'; the runs are:\n";
        for (const auto& t : traces)
            for (const auto& s : an::scopes_of(t.model)) std::cerr << "  " << s.title << "  (" << t.path << ")\n";
        return 1;
    }

    if (json) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& [t, s] : selected) {
            nlohmann::json j = an::to_json(an::analyze(s));
            j["file"] = t->path;
            runs.push_back(std::move(j));
        }
        std::cout << nlohmann::json{{"format", an::report_format}, {"runs", runs}}.dump(2) << "\n";
        return 0;
    }
    const loaded_trace* last = nullptr;
    for (const auto& [t, s] : selected) {
        if (t != last) {
            std::cout << "# " << t->path << "\n";
            for (const auto& p : t->model.problems) std::cout << "  problem: " << p << "\n";
            // A recording cut short: its figures are lower bounds (the note also went to stderr).
            for (const auto& n : pipescope::trace::incomplete_notes(t->model, t->path))
                std::cout << "  incomplete: " << n << "\n";
            last = t;
        }
        std::cout << an::to_text(an::analyze(s)) << "\n";
    }
    return 0;
}
