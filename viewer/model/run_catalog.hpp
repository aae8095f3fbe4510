// What the run panel offers: the workloads, the policies each runs under, their parameters, as
// `pipescope list --json` says (read from the command, so the viewer links no workload).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace pipescope::viewer {

struct catalog_parameter {
    std::string name, default_value, meaning;
};

struct catalog_workload {
    std::string name, summary;
    std::vector<catalog_parameter> parameters;    // the policy's parameters included (K, lazy, preempt...)
    std::vector<std::string> policies;            // those it runs under, in the list's order
    std::map<std::string, std::string> refused;   // policy → why not
};

struct run_catalog {
    std::vector<catalog_workload> workloads;
    std::map<std::string, std::string> policy_summaries;
    std::string error;   // why there is no list (no command found, a command that failed)

    const catalog_workload* find(const std::string& workload) const;
};

// Reads `pipescope list --json`'s output; throws std::runtime_error on text that is not that.
run_catalog parse_catalog(const std::string& json_text);
// Runs `cli list --json` and reads it; a failure is in `error`.
run_catalog load_catalog(const std::filesystem::path& cli);

}   // namespace pipescope::viewer
