// pipescope list [--json]: the workloads, their parameters with defaults, and which policies can
// run each (and why not, where not); then the policies.
#include "commands.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>
#include <pipescope/workloads/workload.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace ws = pipescope::workloads;

namespace {

struct parameter {
    std::string name, default_value, meaning;
};

// workload::parameters() is "key=default: meaning" lines.
std::vector<parameter> parse_parameters(const std::string& text) {
    std::vector<parameter> out;
    std::string line;
    auto flush = [&] {
        if (line.empty()) return;
        parameter p;
        const auto eq = line.find('=');
        // A default may be a description in angle brackets that contains ": " itself.
        auto from = eq == std::string::npos ? 0 : eq;
        if (eq != std::string::npos && eq + 1 < line.size() && line[eq + 1] == '<')
            if (const auto close = line.find('>', eq); close != std::string::npos) from = close;
        const auto colon = line.find(": ", from);
        p.name = line.substr(0, eq);
        if (eq != std::string::npos)
            p.default_value = line.substr(eq + 1, colon == std::string::npos ? std::string::npos : colon - eq - 1);
        if (colon != std::string::npos) p.meaning = line.substr(colon + 2);
        out.push_back(p);
        line.clear();
    };
    for (char c : text) {
        if (c == '\n') flush();
        else line += c;
    }
    flush();
    return out;
}

int print_json() {
    nlohmann::json workloads = nlohmann::json::array();
    for (const ws::workload* w : ws::all_workloads()) {
        nlohmann::json params = nlohmann::json::array(), policies = nlohmann::json::object();
        for (const auto& p : parse_parameters(w->parameters()))
            params.push_back({{"name", p.name}, {"default", p.default_value}, {"meaning", p.meaning}});
        for (const std::string& name : ws::all_policy_names()) {
            const std::string why = w->cannot_run_under(name);
            policies[name] = why.empty() ? nlohmann::json{{"runs", true}} : nlohmann::json{{"runs", false}, {"why", why}};
        }
        workloads.push_back(
            {{"name", w->name()}, {"summary", w->summary()}, {"parameters", params}, {"policies", policies}});
    }
    nlohmann::json policies = nlohmann::json::array();
    for (const auto& p : pipescope::pipeline_policies())
        policies.push_back({{"name", p.name}, {"summary", p.summary}, {"program", "pipeline"}});
    for (const auto& p : pipescope::graph::policies()) {
        nlohmann::json params = nlohmann::json::array();
        for (const auto& q : parse_parameters(p.parameters))
            params.push_back({{"name", q.name}, {"default", q.default_value}, {"meaning", q.meaning}});
        policies.push_back({{"name", p.name}, {"summary", p.summary}, {"program", "graph"}, {"parameters", params}});
    }
    fmt::print("{}\n", nlohmann::json{{"workloads", workloads}, {"policies", policies}}.dump(2));
    return 0;
}

// "    --param name=default: meaning", the line `list` gives every parameter.
template <class Parameter>
void print_parameter(const Parameter& p) {
    fmt::print("    --param {}={}{}{}\n", p.name, p.default_value, p.meaning.empty() ? "" : ": ", p.meaning);
}

int print_text() {
    for (const ws::workload* w : ws::all_workloads()) {
        fmt::print("{}\n    {}\n", w->name(), w->summary());
        for (const auto& p : parse_parameters(w->parameters())) print_parameter(p);
        std::string runs, refused;
        // Policies refused for the same reason (a graph workload and every pipe_while policy) share a line.
        std::vector<std::pair<std::string, std::string>> refusals;   // why, names
        for (const std::string& name : ws::all_policy_names()) {
            const std::string why = w->cannot_run_under(name);
            if (why.empty()) {
                runs += (runs.empty() ? "" : ", ") + name;
                continue;
            }
            auto it = std::find_if(refusals.begin(), refusals.end(), [&](const auto& r) { return r.first == why; });
            if (it == refusals.end()) refusals.emplace_back(why, name);
            else it->second += ", " + name;
        }
        for (const auto& [why, names] : refusals) refused += "    not under " + names + ": " + why + "\n";
        fmt::print("    runs under: {}\n{}", runs, refused);
    }
    fmt::print("policies (--policy):\n");
    for (const auto& p : pipescope::pipeline_policies()) fmt::print("  {}\n    {}\n", p.name, p.summary);
    fmt::print("graph policies (--policy, for stage graphs; their parameters go in --param):\n");
    for (const auto& p : pipescope::graph::policies()) {
        fmt::print("  {}\n    {}\n", p.name, p.summary);
        for (const auto& q : parse_parameters(p.parameters)) print_parameter(q);
    }
    return 0;
}

}   // namespace

int list_command(const std::vector<std::string>& args) {
    if (args.empty()) return print_text();
    if (args.size() == 1 && args[0] == "--json") return print_json();
    throw std::invalid_argument("list: unexpected argument '" + args[0] + "' (only --json)");
}
