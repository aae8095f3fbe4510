// `pipescope run --virtual --costs EARLIER.pftrace`: the node costs of an earlier recording of the
// same workload, size, seed and parameters (any policy, real or virtual, any worker count), charged
// to the virtual workers instead of measured CPU time (docs/virtual.md, "Cost sources").
//
// Nodes are matched by (iteration, stage) in pipelines and by (stage, instance) in stage graphs. A
// folded slice (the automatic or folded detail level, docs/tracing.md) holding n nodes gives each of
// them an equal share of its time, the rule the trace model's DAG uses too; recording the costs
// with --trace-detail nodes keeps every node's own time.
#pragma once

#include <pipescope/node_costs.hpp>

#include <pipescope/trace/run_metadata.hpp>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace pipescope::recording {

// What the run asking for the costs is: the recording must be of the same program.
struct costs_wanted {
    std::string workload, size;
    std::uint64_t seed = 0;
    std::vector<std::string> params;   // the workload's --param values, as given
};

class trace_node_costs final : public node_cost_source {
public:
    // Reads `path`. Throws std::runtime_error naming the file and what is wrong: it cannot be read,
    // holds no or several runs, has no pipescope metadata, is of another workload, size, seed or
    // parameters (naming both), or has no node slices.
    trace_node_costs(const std::filesystem::path& path, const costs_wanted& wanted);

    std::uint64_t pipeline_node_ns(std::uint64_t iteration, std::uint64_t stage) const noexcept override;
    std::uint64_t graph_node_ns(std::uint64_t stage, std::uint64_t instance) const noexcept override;

    // After the run: nodes the recording did not have (charged 0 ns), and the first of them.
    std::uint64_t missing() const;
    std::string first_missing() const;   // "node (iteration 12, stage 3)"; empty if none
    // "FILE: the recording has no node (iteration 12, stage 3) and N more: ..." (empty if none).
    std::string missing_error() const;

    std::uint64_t nodes() const noexcept { return costs_.size(); }
    std::uint64_t folded_nodes() const noexcept { return folded_nodes_; }
    std::uint64_t total_ns() const noexcept { return total_ns_; }
    double reference_seconds() const noexcept { return reference_seconds_; }
    // For the run's "virtual" metadata: the file, its run, how many nodes and how many came folded.
    pipescope::trace::node_cost_recording describe() const;

private:
    struct key_hash {
        std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& k) const noexcept {
            return std::hash<std::uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second);
        }
    };
    using key = std::pair<std::uint64_t, std::uint64_t>;   // pipelines (iteration, stage); graphs (stage, instance)
    std::uint64_t lookup(key k, bool graph) const noexcept;
    void add(key k, std::uint64_t ns);

    std::string path_, run_name_, policy_;
    bool graph_ = false;
    std::unordered_map<key, std::uint64_t, key_hash> costs_;
    std::uint64_t folded_nodes_ = 0, total_ns_ = 0;
    double reference_seconds_ = 0;
    mutable std::mutex missing_mutex_;
    mutable std::uint64_t missing_ = 0;
    mutable std::string first_missing_;
};

}   // namespace pipescope::recording
