// `pipescope compare a.pftrace b.pftrace... [--json]`: the runs side by side (makespan, speedup
// against the serial reference when recorded, steals, suspensions, peaks, T1, T∞), each with its
// ratio against the first run.
#include "arg_parser.hpp"
#include "commands.hpp"
#include "trace_loading.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/report.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <cstdio>
#include <optional>

namespace an = pipescope::analysis;

namespace {

struct metric {
    const char* name;   // JSON key and row label
    std::function<std::optional<double>(const an::run_report&)> value;
    bool ns = false;   // a duration in ns
};

// A value as the table shows it: a duration with its unit, a whole count with thousands separators,
// or a fraction with three decimals ("-" when the run does not have it).
std::string cell(std::optional<double> v, bool ns) {
    if (!v) return "-";
    const double x = *v;
    if (ns) return an::numbers::duration(x);
    if (x >= 0 && x < 1e19 && x == static_cast<double>(static_cast<std::uint64_t>(x)))
        return an::numbers::count(static_cast<std::uint64_t>(x));
    return x >= 1000 ? an::numbers::fixed(x, 0) : an::numbers::fixed(x, 3);
}

// A figure every run has.
std::optional<double> known(double v) { return v; }

// The rows of the comparison, in the order the table and the JSON give them.
std::vector<metric> metrics() {
    return {
        {"makespan", [](const an::run_report& r) { return known(static_cast<double>(r.makespan())); }, true},
        {"speedup_vs_serial",
         [](const an::run_report& r) -> std::optional<double> {
             if (!r.meta.reference_seconds || !r.makespan()) return std::nullopt;
             return *r.meta.reference_seconds * 1e9 / static_cast<double>(r.makespan());
         }},
        {"workers", [](const an::run_report& r) { return known(static_cast<double>(r.meta.workers)); }},
        {"iterations", [](const an::run_report& r) { return known(static_cast<double>(r.stats.iterations)); }},
        {"steals_tried",
         [](const an::run_report& r) { return known(static_cast<double>(r.stats.steals_made + r.stats.steals_failed)); }},
        {"steals_made", [](const an::run_report& r) { return known(static_cast<double>(r.stats.steals_made)); }},
        {"suspensions", [](const an::run_report& r) { return known(static_cast<double>(r.stats.suspensions)); }},
        {"peak_live", [](const an::run_report& r) { return r.stats.peak_live; }},
        {"peak_footprint", [](const an::run_report& r) { return r.stats.peak_footprint; }},
        {"work_T1",
         [](const an::run_report& r) -> std::optional<double> {
             if (!r.dag.available) return std::nullopt;
             return static_cast<double>(r.dag.work);
         },
         true},
        {"span_Tinf",
         [](const an::run_report& r) -> std::optional<double> {
             if (!r.dag.available) return std::nullopt;
             return static_cast<double>(r.dag.with_throttle.span);
         },
         true},
        {"parallelism",
         [](const an::run_report& r) -> std::optional<double> {
             if (!r.dag.available) return std::nullopt;
             return r.dag.parallelism;
         }},
        {"throughput",
         [](const an::run_report& r) -> std::optional<double> {
             if (!r.queueing.available) return std::nullopt;
             return r.queueing.observed;
         }},
    };
}

// --json: every run's figures and their ratios to the first run's (format pipescope-compare/1).
void print_json(const std::vector<an::run_report>& reports, const std::vector<std::string>& origin,
                const std::vector<metric>& metrics) {
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t i = 0; i < reports.size(); ++i) {
        nlohmann::json j = {{"title", reports[i].title},
                            {"file", origin[i]},
                            {"virtual_workers", reports[i].meta.virtual_run
                                                    ? nlohmann::json(reports[i].meta.virtual_run->workers)
                                                    : nlohmann::json(nullptr)}};
        nlohmann::json ratios = nlohmann::json::object();
        for (const auto& m : metrics) {
            const auto v = m.value(reports[i]), v0 = m.value(reports[0]);
            j[m.name] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
            ratios[m.name] = v && v0 && *v0 != 0 ? nlohmann::json(*v / *v0) : nlohmann::json(nullptr);
        }
        j["ratio_to_first"] = ratios;
        j["verdicts"] = nlohmann::json::array();
        for (const auto& v : reports[i].verdicts) j["verdicts"].push_back(v.rule);
        runs.push_back(std::move(j));
    }
    fmt::print("{}\n", nlohmann::json{{"format", "pipescope-compare/1"}, {"runs", runs}}.dump(2));
}

// The runs side by side, a row per metric, each value with its ratio to the first run's.
void print_table(const std::vector<an::run_report>& reports, const std::vector<std::string>& origin,
                 const std::vector<metric>& metrics) {
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const std::string badge = an::virtual_badge(reports[i].meta);   // times in virtual ns: say so
        fmt::print("#{}  {}{}  ({})\n", i + 1, reports[i].title, badge.empty() ? "" : "  [" + badge + "]", origin[i]);
    }
    fmt::print("\n{:18}", "");
    for (std::size_t i = 0; i < reports.size(); ++i) fmt::print(" {:>24}", fmt::format("#{}", i + 1));
    fmt::print("\n");
    for (const auto& m : metrics) {
        fmt::print("{:<18}", m.name);
        const auto v0 = m.value(reports[0]);
        for (std::size_t i = 0; i < reports.size(); ++i) {
            const auto v = m.value(reports[i]);
            std::string c = cell(v, m.ns);
            if (i > 0 && v && v0 && *v0 != 0) c += " (" + an::numbers::ratio(*v / *v0, 2) + ")";
            fmt::print(" {:>24}", c);
        }
        fmt::print("\n");
    }
    fmt::print("{:<18}", "main verdict");
    for (const auto& r : reports) fmt::print(" {:>24}", r.verdicts.empty() ? "-" : r.verdicts.front().rule);
    fmt::print("\n(ratios: the run's value / the first run's)\n");
}

}   // namespace

int compare_command(const std::vector<std::string>& args) {
    std::vector<std::string> files;
    bool json = false;
    pipescope::cli::arg_parser p({.prefix = "compare: ", .unknown = "unknown option '{}'"});
    p.flag({"--json"}, [&] { json = true; });
    p.positional([&](const std::string& v) { files.push_back(v); });
    p.parse(args);
    if (files.empty()) p.fail("which traces?");
    std::vector<loaded_trace> traces;
    if (!load_traces(files, traces)) return 1;
    std::vector<an::run_report> reports;
    std::vector<std::string> origin;
    for (const auto& t : traces)
        for (auto& r : an::analyze_all(t.model)) {
            reports.push_back(std::move(r));
            origin.push_back(t.path);
        }
    if (reports.empty()) {
        fmt::print(stderr, "pipescope: compare: the files hold no runs\n");
        return 1;
    }
    if (json) print_json(reports, origin, metrics());
    else print_table(reports, origin, metrics());
    return 0;
}
