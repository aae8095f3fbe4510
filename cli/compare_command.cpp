// `pipescope compare a.pftrace b.pftrace... [--json]`: the runs side by side (makespan, speedup
// against the serial reference when recorded, steals, suspensions, peaks, T1, T∞), each with its
// ratio against the first run.
#include "commands.hpp"
#include "trace_loading.hpp"

#include <pipescope/analysis/report.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>

namespace an = pipescope::analysis;

namespace {

struct metric {
    const char* name;   // JSON key and row label
    std::function<std::optional<double>(const an::run_report&)> value;
    bool ns = false;    // a duration in ns
};

std::string cell(std::optional<double> v, bool ns) {
    if (!v) return "-";
    char b[64];
    if (ns) {
        const double x = *v;
        if (x >= 1e9) std::snprintf(b, sizeof b, "%.3f s", x * 1e-9);
        else if (x >= 1e6) std::snprintf(b, sizeof b, "%.3f ms", x * 1e-6);
        else std::snprintf(b, sizeof b, "%.2f us", x * 1e-3);
    } else {
        const double x = *v;
        if (x == static_cast<double>(static_cast<long long>(x))) std::snprintf(b, sizeof b, "%lld", static_cast<long long>(x));
        else if (x >= 1000) std::snprintf(b, sizeof b, "%.0f", x);
        else std::snprintf(b, sizeof b, "%.3f", x);
    }
    return b;
}

}  // namespace

int compare_command(const std::vector<std::string>& args) {
    std::vector<std::string> files;
    bool json = false;
    for (const auto& a : args) {
        if (a == "--json") json = true;
        else if (!a.empty() && a[0] == '-') {
            std::cerr << "pipescope: compare: unknown option '" << a << "'\n"
                      << "usage: pipescope compare <a.pftrace> <b.pftrace>... [--json]\n";
            return 2;
        } else files.push_back(a);
    }
    if (files.empty()) {
        std::cerr << "usage: pipescope compare <a.pftrace> <b.pftrace>... [--json]\n";
        return 2;
    }
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
        std::cerr << "pipescope: compare: the files hold no runs\n";
        return 1;
    }
    auto d = [](double v) { return std::optional<double>(v); };
    const std::vector<metric> metrics = {
        {"makespan", [&](const an::run_report& r) { return d(static_cast<double>(r.makespan())); }, true},
        {"speedup_vs_serial",
         [](const an::run_report& r) -> std::optional<double> {
             if (!r.meta.reference_seconds || !r.makespan()) return std::nullopt;
             return *r.meta.reference_seconds * 1e9 / static_cast<double>(r.makespan());
         }},
        {"workers", [&](const an::run_report& r) { return d(static_cast<double>(r.meta.workers)); }},
        {"iterations", [&](const an::run_report& r) { return d(static_cast<double>(r.stats.iterations)); }},
        {"steals_tried", [&](const an::run_report& r) { return d(static_cast<double>(r.stats.steals_made + r.stats.steals_failed)); }},
        {"steals_made", [&](const an::run_report& r) { return d(static_cast<double>(r.stats.steals_made)); }},
        {"suspensions", [&](const an::run_report& r) { return d(static_cast<double>(r.stats.suspensions)); }},
        {"peak_live", [](const an::run_report& r) { return r.stats.peak_live; }},
        {"peak_footprint", [](const an::run_report& r) { return r.stats.peak_footprint; }},
        {"work_T1", [](const an::run_report& r) -> std::optional<double> {
             if (!r.dag.available) return std::nullopt;
             return static_cast<double>(r.dag.work);
         }, true},
        {"span_Tinf", [](const an::run_report& r) -> std::optional<double> {
             if (!r.dag.available) return std::nullopt;
             return static_cast<double>(r.dag.with_throttle.span);
         }, true},
        {"parallelism", [](const an::run_report& r) -> std::optional<double> {
             if (!r.dag.available) return std::nullopt;
             return r.dag.parallelism;
         }},
        {"throughput", [](const an::run_report& r) -> std::optional<double> {
             if (!r.queueing.available) return std::nullopt;
             return r.queueing.observed;
         }},
    };

    if (json) {
        nlohmann::json runs = nlohmann::json::array();
        for (std::size_t i = 0; i < reports.size(); ++i) {
            nlohmann::json j = {{"title", reports[i].title}, {"file", origin[i]}};
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
        std::cout << nlohmann::json{{"format", "pipescope-compare/1"}, {"runs", runs}}.dump(2) << "\n";
        return 0;
    }

    for (std::size_t i = 0; i < reports.size(); ++i)
        std::printf("#%zu  %s  (%s)\n", i + 1, reports[i].title.c_str(), origin[i].c_str());
    std::printf("\n%-18s", "");
    for (std::size_t i = 0; i < reports.size(); ++i) std::printf(" %24s", ("#" + std::to_string(i + 1)).c_str());
    std::printf("\n");
    for (const auto& m : metrics) {
        std::printf("%-18s", m.name);
        const auto v0 = m.value(reports[0]);
        for (std::size_t i = 0; i < reports.size(); ++i) {
            const auto v = m.value(reports[i]);
            std::string c = cell(v, m.ns);
            if (i > 0 && v && v0 && *v0 != 0) {
                char b[32];
                std::snprintf(b, sizeof b, " (%.2fx)", *v / *v0);
                c += b;
            }
            std::printf(" %24s", c.c_str());
        }
        std::printf("\n");
    }
    std::printf("%-18s", "main verdict");
    for (const auto& r : reports) std::printf(" %24s", r.verdicts.empty() ? "-" : r.verdicts.front().rule.c_str());
    std::printf("\n(ratios: the run's value / the first run's)\n");
    return 0;
}
