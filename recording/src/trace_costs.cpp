// Node costs read from an earlier recording (trace_costs.hpp).
#include <pipescope/recording/trace_costs.hpp>

#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>
#include <pipescope/workloads/workload.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace pipescope::recording {

namespace {

namespace vocab = trace::vocab;

// The program's parameters only: the scheduler's (workloads::is_policy_parameter: K, lazy, DANBI's
// config, ...) choose how the nodes are scheduled, not what they are, so a recording under any
// policy and any of its parameters has the same nodes.
std::vector<std::string> program_params(const std::vector<std::string>& params) {
    std::vector<std::string> out = workloads::program_parameters(params);
    std::sort(out.begin(), out.end());
    return out;
}

std::string describe_program(const std::string& workload, const std::string& size, std::uint64_t seed,
                             const std::vector<std::string>& params) {
    std::string out = fmt::format("{} (size {}, seed {}", workload, size, seed);
    for (const std::string& p : params) out += ", " + p;
    return out + ")";
}

std::string node_name(bool graph, std::uint64_t a, std::uint64_t b) {
    return graph ? fmt::format("node (stage {}, instance {})", a, b) : fmt::format("node (iteration {}, stage {})", a, b);
}

// The recording, or an error naming it: "F: not a readable Perfetto trace: malformed at byte N: ..."
// (a decode error alone names only the offset). A recording cut short is refused too: the nodes it
// lost would have no cost.
trace::trace_model load(const std::filesystem::path& path) {
    trace::read_options o;
    o.accept_cut_short = true;
    trace::trace_model m;
    try {
        m = trace::load_trace_file(path, o);
    } catch (const trace::proto::decode_error& e) {
        throw std::runtime_error(fmt::format("{}: not a readable Perfetto trace: malformed at {}", path.string(), e.what()));
    }
    if (m.cut_short)
        throw std::runtime_error(fmt::format("{}: the recording was cut short at byte {} of {} (last packet "
                                             "incomplete): --costs needs a complete recording",
                                             path.string(), m.cut_short_at, m.file_bytes));
    return m;
}

}   // namespace

trace_node_costs::trace_node_costs(const std::filesystem::path& path, const costs_wanted& wanted) : path_(path.string()) {
    const trace::trace_model m = load(path);
    if (m.runs.size() != 1)
        throw std::runtime_error(fmt::format("{}: holds {} runs; --costs needs the recording of one run "
                                             "(pipescope run -o)",
                                             path_, m.runs.size()));
    const trace::run& run = m.runs[0];
    if (!run.metadata_valid)
        throw std::runtime_error(fmt::format("{}: its run has no pipescope metadata: --costs needs a recording "
                                             "made by pipescope run -o",
                                             path_));
    // metadata_valid: it parsed as an object.
    const trace::run_metadata meta = trace::run_metadata_from_json(run.metadata_json).value_or(trace::run_metadata{});
    const std::string workload = meta.workload, size = meta.size.value_or("");
    const std::uint64_t seed = meta.seed.value_or(0);
    const std::vector<std::string> params = program_params(meta.params);
    const std::vector<std::string> want_params = program_params(wanted.params);
    if (workload != wanted.workload || size != wanted.size || seed != wanted.seed || params != want_params)
        throw std::runtime_error(fmt::format("{}: recorded {}, but this run is {}: node costs carry over only between "
                                             "runs of the same workload, size, seed and parameters",
                                             path_, describe_program(workload, size, seed, params),
                                             describe_program(wanted.workload, wanted.size, wanted.seed, want_params)));
    run_name_ = run.name;
    policy_ = run.policy;
    graph_ = run.program_kind == vocab::graph_program;
    reference_seconds_ = meta.reference_seconds.value_or(0.0);

    for (std::uint32_t t : run.workers) {
        if (t == trace::no_index) continue;
        for (const trace::slice& s : m.tracks[t].slices) {
            if (s.kind != trace::slice_kind::node) continue;
            const trace::node_extent x = m.node_of(s);
            if (x.iteration < 0 || !x.stage_annotated || x.stage < 0) continue;
            const auto iteration = static_cast<std::uint64_t>(x.iteration), stage = static_cast<std::uint64_t>(x.stage);
            const std::uint64_t n = x.nodes;
            if (n <= 1) {
                add(graph_ ? key{stage, iteration} : key{iteration, stage}, s.duration());
                continue;
            }
            // A folded slice: consecutive stages of one iteration (pipelines), consecutive instances of
            // one stage (graphs); each node gets an equal share, the remainder to the last.
            const std::uint64_t last = graph_ ? static_cast<std::uint64_t>(std::max(x.last_iteration, 0LL)) : x.last_stage;
            const std::uint64_t first = graph_ ? iteration : stage;
            if (last < first || last - first + 1 != n)
                throw std::runtime_error(fmt::format("{}: a folded slice at {} ns holds {} nodes that are not consecutive; "
                                                     "record the costs with --trace-detail nodes",
                                                     path_, s.begin, n));
            const std::uint64_t share = s.duration() / n;
            for (std::uint64_t k = 0; k < n; ++k) {
                const std::uint64_t ns = k + 1 < n ? share : s.duration() - share * (n - 1);
                add(graph_ ? key{stage, first + k} : key{iteration, first + k}, ns);
            }
            folded_nodes_ += n;
        }
    }
    if (costs_.empty()) throw std::runtime_error(fmt::format("{}: its run has no node slices to take costs from", path_));
}

void trace_node_costs::add(key k, std::uint64_t ns) {
    if (!costs_.emplace(k, ns).second)
        throw std::runtime_error(fmt::format("{}: {} is recorded twice", path_, node_name(graph_, k.first, k.second)));
    total_ns_ += ns;
}

std::uint64_t trace_node_costs::lookup(key k, bool graph) const noexcept {
    if (graph == graph_)
        if (const auto it = costs_.find(k); it != costs_.end()) return it->second;
    std::lock_guard lock(missing_mutex_);
    if (missing_++ == 0) {
        try {
            first_missing_ = node_name(graph, k.first, k.second);
        } catch (...) {   // out of memory: the count still says it
        }
    }
    return 0;
}

std::uint64_t trace_node_costs::pipeline_node_ns(std::uint64_t iteration, std::uint64_t stage) const noexcept {
    return lookup({iteration, stage}, false);
}

std::uint64_t trace_node_costs::graph_node_ns(std::uint64_t stage, std::uint64_t instance) const noexcept {
    return lookup({stage, instance}, true);
}

std::uint64_t trace_node_costs::missing() const {
    std::lock_guard lock(missing_mutex_);
    return missing_;
}

std::string trace_node_costs::first_missing() const {
    std::lock_guard lock(missing_mutex_);
    return first_missing_;
}

std::string trace_node_costs::missing_error() const {
    std::lock_guard lock(missing_mutex_);
    if (missing_ == 0) return {};
    return fmt::format("{}: the recording has no {}{}: it is not a recording of this program's nodes (its run \"{}\"; "
                       "lost events or a cancelled run leave nodes out too)",
                       path_, first_missing_, missing_ > 1 ? fmt::format(" and {} more", missing_ - 1) : "", run_name_);
}

trace::node_cost_recording trace_node_costs::describe() const {
    return {.trace = std::filesystem::path(path_).filename().string(),
            .run = run_name_,
            .policy = policy_,
            .nodes = costs_.size(),
            .folded_nodes = folded_nodes_,
            .total_ns = total_ns_};
}

}   // namespace pipescope::recording
