// `mergesort`: merge sort as a stage graph with a feedback queue (mergesort_graph.hpp).
#include "mergesort_graph.hpp"

#include <pipescope/workloads/graph_workload.hpp>
#include <pipescope/workloads/workload.hpp>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace pipescope::workloads {

namespace {

using mergesort::sort_state;

constexpr std::uint64_t default_chunk = 4096;
constexpr std::uint64_t min_chunk = 64, max_chunk = std::uint64_t{1} << 26;

std::uint64_t keys_for(input_size s) {
    switch (s) {
        case input_size::tiny: return std::uint64_t{1} << 16;
        case input_size::small: return std::uint64_t{1} << 20;
        case input_size::large: return std::uint64_t{1} << 23;
    }
    return std::uint64_t{1} << 20;
}

// The leaf chunk: a power of two; one larger than the input means the input is a single chunk.
std::uint64_t take_chunk(param_set& params, std::uint64_t keys) {
    const std::uint64_t chunk = params.take_uint("chunk", default_chunk, min_chunk, max_chunk);
    if (!std::has_single_bit(chunk))
        throw std::invalid_argument("--param chunk=" + std::to_string(chunk) +
                                    ": must be a power of two (chunks pair up level by level)");
    return std::min(chunk, keys);
}

class mergesort_workload final : public workload {
public:
    std::string name() const override { return "mergesort"; }
    std::string summary() const override {
        return "merge sort of 64-bit keys with a feedback queue: sort chunks, pair runs, merge in pieces "
               "(seed 002 Fig. 2, §IV-A; seed 004 Fig. 3b)";
    }
    std::string parameters() const override {
        return "chunk=4096: keys per leaf chunk (a power of two, 64 to 2^26; at least the input: one chunk)\n" +
               graph_policy_parameters();
    }
    bool is_graph() const override { return true; }

    run_report run(scheduler& s, run_request& request) const override {
        const std::uint64_t keys = keys_for(request.size);
        const std::uint64_t chunk = take_chunk(request.params, keys);
        sort_state st(keys, chunk);
        st.input = mergesort::make_keys(keys, request.seed);
        const graph::program g = mergesort::build_graph(st);

        std::vector<std::uint64_t> reference;
        run_report report;
        run_graph_workload(
            name(), s, request, request.params, g,
            [&] {
                reference = st.input;
                std::sort(reference.begin(), reference.end());
            },
            [&] { st.reset(); }, report);

        // Exactly one run reached the sink, and it is the whole array at the top level.
        const bool one_run = st.delivered.size() == 1 && st.delivered[0].offset == 0 &&
                             st.delivered[0].length == keys && st.delivered[0].level == st.levels;
        report.matches_reference = one_run && st.result() == reference;
        report.description = "sorted " + std::to_string(keys) + " keys: " +
                             (st.chunks == 1 ? std::string("a single chunk, no merge")
                                             : std::to_string(st.chunks) + " chunks of " + std::to_string(chunk) + ", " +
                                                   std::to_string(st.levels) + " merge levels of " +
                                                   std::to_string(st.chunks / 2) + " pieces");
        if (!one_run) report.description += "; the sink received " + std::to_string(st.delivered.size()) + " runs, not one";
        return report;
    }

    program_info program(const run_request& request) const override {
        param_set params = request.params;
        const std::uint64_t keys = keys_for(request.size);
        sort_state st(keys, take_chunk(params, keys));
        const graph::program g = mergesort::build_graph(st);
        return describe_graph(
            g, request,
            "a cycle: sorted chunks and merged runs go round pair → merge until one run covers the array; the "
            "last merge closes the feedback queue",
            {"one descriptor per leaf chunk",
             "sorts a chunk in place (std::sort): a run of level 0",
             "matches adjacent runs of the same level; emits each merge as pieces of 2·chunk keys; forwards the "
             "whole array",
             "merges one piece (merge-path split); the last piece of a merge feeds the new run back",
             "receives the sorted array"});
    }
};

}  // namespace

const workload& merge_sort() {
    static const mergesort_workload w;
    return w;
}

}  // namespace pipescope::workloads
