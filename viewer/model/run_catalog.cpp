// The run panel's choices from `pipescope list --json` (run_catalog.hpp).
#include "run_catalog.hpp"

#include "run_job.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace pipescope::viewer {

const catalog_workload* run_catalog::find(const std::string& workload) const {
    for (const auto& w : workloads)
        if (w.name == workload) return &w;
    return nullptr;
}

run_catalog parse_catalog(const std::string& json_text) {
    const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
    if (!j.is_object() || !j.contains("workloads") || !j["workloads"].is_array())
        throw std::runtime_error("`pipescope list --json` did not print a list of workloads");
    run_catalog c;
    for (const auto& w : j["workloads"]) {
        catalog_workload cw;
        cw.name = w.value("name", "");
        cw.summary = w.value("summary", "");
        for (const auto& p : w.value("parameters", nlohmann::json::array()))
            cw.parameters.push_back({p.value("name", ""), p.value("default", ""), p.value("meaning", "")});
        const nlohmann::json verdicts = w.value("policies", nlohmann::json::object());   // kept: items() refers to it
        for (const auto& [policy, verdict] : verdicts.items()) {
            if (verdict.value("runs", false)) cw.policies.push_back(policy);
            else cw.refused[policy] = verdict.value("why", "");
        }
        c.workloads.push_back(std::move(cw));
    }
    for (const auto& p : j.value("policies", nlohmann::json::array()))
        c.policy_summaries[p.value("name", "")] = p.value("summary", "");
    return c;
}

namespace {

run_catalog no_catalog(std::string why) {
    run_catalog c;
    c.error = std::move(why);
    return c;
}

}   // namespace

run_catalog load_catalog(const std::filesystem::path& cli) {
    if (cli.empty()) return no_catalog("no pipescope command found next to the viewer (set PIPESCOPE_CLI)");
    const captured_output r = run_to_end({cli.string(), "list", "--json"});
    if (r.exit_code != 0)
        return no_catalog(cli.string() + " list --json failed (status " + std::to_string(r.exit_code) + "): " + r.err);
    try {
        return parse_catalog(r.out);
    } catch (const std::exception& e) {
        return no_catalog(e.what());
    }
}

}   // namespace pipescope::viewer
