// A policy is one folder (runtime/src/policy_registry.hpp, docs/architecture.md "How to add a
// policy"): the registry CMake generates lists exactly the folders of runtime/src/pipeline/policies/
// and runtime/src/graph/policies/, each with an entry of its own; the registries keep the documented
// order; and every registered name is one the CLI lists and accepts (workloads::all_policy_names,
// behind `pipescope list` and every --policy).
#include "../runtime/src/graph/engine.hpp"
#include "../runtime/src/pipeline/policy.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The folders under runtime/src/WORLD, as the source tree has them now.
std::vector<std::string> folders_on_disk(const char* world) {
    std::vector<std::string> out;
    for (const fs::directory_entry& e : fs::directory_iterator(fs::path(PIPESCOPE_SOURCE_DIR) / "runtime/src" / world))
        if (e.is_directory()) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

// The generated registry's folders, after checking that each row has an entry of its own.
template <class Entry>
std::vector<std::string> folders_listed(std::span<const pipescope::detail::policy_folder<Entry>> rows) {
    std::vector<std::string> out;
    std::set<const Entry*> entries;
    std::set<std::string> names;
    for (const auto& row : rows) {
        REQUIRE(row.entry != nullptr);
        CHECK(entries.insert(row.entry).second);
        CHECK(names.insert(row.entry->name).second);
        out.push_back(row.folder);
    }
    return out;
}

}   // namespace

TEST_CASE("the generated policy registries list exactly the policy folders", "[policy][registry]") {
    const std::vector<std::string> pipeline = folders_on_disk("pipeline/policies");
    const std::vector<std::string> graph = folders_on_disk("graph/policies");
    CHECK(std::find(pipeline.begin(), pipeline.end(), "piper") != pipeline.end());
    CHECK(std::find(graph.begin(), graph.end(), "gramps") != graph.end());
    CHECK(folders_listed(pipescope::detail::pipeline_policy_folders()) == pipeline);
    CHECK(folders_listed(pipescope::graph::detail::graph_policy_folders()) == graph);
    CHECK(graph.size() == pipescope::graph::policies().size());
    CHECK(pipeline.size() == pipescope::pipeline_policies().size());
}

// The names of `all` that are in `known`, in the order of `all`.
static std::vector<std::string> only(const std::vector<std::string>& all, const std::vector<std::string>& known) {
    std::vector<std::string> out;
    for (const std::string& n : all)
        if (std::find(known.begin(), known.end(), n) != known.end()) out.push_back(n);
    return out;
}

TEST_CASE("policies are listed in their documented order, every one by the CLI", "[policy][registry]") {
    std::vector<std::string> pipeline, graph;
    for (const auto& p : pipescope::pipeline_policies()) pipeline.push_back(p.name);
    for (const auto& p : pipescope::graph::policies()) graph.push_back(p.name);
    // The policies there are today keep their places (a new folder's `order` puts it among them).
    const std::vector<std::string> pipeline_order{"piper", "piper-earliest", "serial", "tbb", "bind-to-stage"};
    const std::vector<std::string> graph_order{"graph-serial",  "gramps",        "danbi",
                                               "task-stealing", "breadth-first", "static"};
    CHECK(only(pipeline, pipeline_order) == pipeline_order);
    CHECK(only(graph, graph_order) == graph_order);
    // Listings follow `order`, whatever the folders are called.
    const auto& pf = pipescope::detail::pipeline_policy_folders();
    const auto& gf = pipescope::graph::detail::graph_policy_folders();
    auto order_of = [](const auto& rows, const std::string& name) {
        for (const auto& r : rows)
            if (name == r.entry->name) return r.entry->order;
        FAIL("no entry named " << name);
        return 0;
    };
    for (std::size_t i = 1; i < pipeline.size(); ++i) CHECK(order_of(pf, pipeline[i - 1]) <= order_of(pf, pipeline[i]));
    for (std::size_t i = 1; i < graph.size(); ++i) CHECK(order_of(gf, graph[i - 1]) <= order_of(gf, graph[i]));
    std::vector<std::string> both = pipeline;
    both.insert(both.end(), graph.begin(), graph.end());
    CHECK(pipescope::workloads::all_policy_names() == both);
}
