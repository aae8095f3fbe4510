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

// Keys per packet: a packet carries one descriptor, and the descriptor stands for `packet` keys — a
// leaf chunk one sort instance sorts, or half of the 2·packet output keys of one merge piece. The
// keys stay in place (mergesort_graph.hpp), so this is what sets the work of a scheduler step.
// DANBI's MergeSort reserves "the number of elements" per operation (seed 002 §IV-A) and GRAMPS'
// msort keeps only a few KB in its queues (seed 004 Table III): both move work descriptors and
// ranges, as here. Measured at size large (docs/runtime.md, "Packet sizes of the graph workloads").
constexpr std::uint64_t default_packet = 4096;
constexpr std::uint64_t min_packet = 64, max_packet = std::uint64_t{1} << 26;

std::uint64_t keys_for(input_size s) {
    switch (s) {
        case input_size::tiny: return std::uint64_t{1} << 16;
        case input_size::small: return std::uint64_t{1} << 20;
        case input_size::large: return std::uint64_t{1} << 23;
    }
    return std::uint64_t{1} << 20;
}

// The packet (leaf chunk): a power of two; one larger than the input means the input is a single
// chunk. `packet` was called `chunk` before every graph workload took a `packet`.
std::uint64_t take_packet(param_set& params, std::uint64_t keys) {
    const std::uint64_t chunk = params.take_uint("packet", default_packet, min_packet, max_packet);
    if (!std::has_single_bit(chunk))
        throw std::invalid_argument("--param packet=" + std::to_string(chunk) +
                                    ": must be a power of two (leaf chunks pair up level by level)");
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
        return "packet=" + std::to_string(default_packet) +
               ": keys per packet: the leaf chunk one sort instance sorts; a merge piece writes 2·packet keys (a "
               "power of two, 64 to 2^26; at least the input: one chunk). Was chunk; chosen so that an instance is "
               "tens of µs of work or more\n" +
               capacity_parameter("chunks 16, runs 2C, merges C, sorted 1 packet (C = keys / packet chunks)",
                                  "whatever N or the rule says, runs keeps at least 2C and merges C (the feedback "
                                  "loop's room)") +
               "\n" + graph_policy_parameters();
    }
    bool is_graph() const override { return true; }

    run_report run(scheduler& s, run_request& request) const override {
        const std::uint64_t keys = keys_for(request.size);
        const std::uint64_t chunk = take_packet(request.params, keys);
        sort_state st(keys, chunk);
        const queue_sizing sizing{take_capacity(request.params), mergesort::queue_floors(st)};
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
            [&] { st.reset(); }, report, sizing);

        // Exactly one run reached the sink, and it is the whole array at the top level.
        const bool one_run = st.delivered.size() == 1 && st.delivered[0].offset == 0 && st.delivered[0].length == keys &&
                             st.delivered[0].level == st.levels;
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
        sort_state st(keys, take_packet(params, keys));
        const graph::program g = mergesort::build_graph(st);
        const queue_sizing sizing{take_capacity(params), mergesort::queue_floors(st)};
        return describe_graph(
            g, request,
            "a cycle: sorted chunks and merged runs go round pair → merge until one run covers the array; the "
            "last merge closes the feedback queue",
            {"one descriptor per leaf chunk", "sorts a chunk in place (std::sort): a run of level 0",
             "matches adjacent runs of the same level; emits each merge as pieces of 2·chunk keys; forwards the "
             "whole array",
             "merges one piece (merge-path split); the last piece of a merge feeds the new run back",
             "receives the sorted array"},
            sizing);
    }
};

}   // namespace

const workload& merge_sort() {
    static const mergesort_workload w;
    return w;
}

}   // namespace pipescope::workloads
