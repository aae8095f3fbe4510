// The nodes inside folded blocks (dag_state.hpp): each takes an equal share of its block's time.
#include "dag_state.hpp"

#include <pipescope/analysis/scope.hpp>

#include <algorithm>

namespace pipescope::viewer {

std::uint32_t nodes_done_at(const tm::dag_node& nd, std::uint64_t t) { return nodes_done_at(nd.start, nd.end, nd.nodes, t); }

std::uint32_t nodes_done_at(std::uint64_t start, std::uint64_t end, std::uint32_t nodes, std::uint64_t t) {
    const std::uint64_t n = std::max<std::uint32_t>(1, nodes);
    end = std::max(start, end);
    if (t < start) return 0;
    if (t >= end) return static_cast<std::uint32_t>(n);
    // Node k ends at start + share(d, k + 1, n), ascending in k: count the ends at or before t.
    const std::uint64_t d = end - start, x = t - start;
    std::uint64_t lo = 0, hi = n - 1;   // t < end: the last node is not done
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;   // are nodes 0 .. mid - 1 done?
        if (analysis::node_share(d, mid, n) <= x) lo = mid;
        else hi = mid - 1;
    }
    return static_cast<std::uint32_t>(lo);
}

std::pair<std::uint64_t, std::uint64_t> node_share_times(const tm::dag_node& nd, std::uint32_t k) {
    const std::uint64_t n = std::max<std::uint32_t>(1, nd.nodes), d = nd.end > nd.start ? nd.end - nd.start : 0;
    return {nd.start + analysis::node_share(d, k, n), nd.start + analysis::node_share(d, std::uint64_t{k} + 1, n)};
}

namespace {

// The folded block running at t on a worker's blocks (by start), or nullptr.
const dag_index::block_time* running_at(const std::vector<dag_index::block_time>& blocks, std::uint64_t t) {
    auto it = std::upper_bound(blocks.begin(), blocks.end(), t,
                               [](std::uint64_t x, const dag_index::block_time& b) { return x < b.start; });
    return it != blocks.begin() && t < (it - 1)->end ? &*(it - 1) : nullptr;
}

}   // namespace

std::uint64_t dag_index::folded_done_at(std::uint64_t t) const {
    std::uint64_t done = 0;
    for (const auto& blocks : folded_by_worker)
        if (const block_time* b = running_at(blocks, t)) done += nodes_done_at(b->start, b->end, b->nodes, t);
    return done;
}

std::optional<std::uint64_t> dag_index::next_event(std::uint64_t t) const {
    std::optional<std::uint64_t> best;
    if (auto it = std::upper_bound(events.begin(), events.end(), t); it != events.end()) best = *it;
    // Inside a running folded block: the end of its running node's share.
    for (const auto& blocks : folded_by_worker)
        if (const block_time* b = running_at(blocks, t)) {
            const std::uint64_t k = nodes_done_at(b->start, b->end, b->nodes, t);
            const std::uint64_t at = b->start + analysis::node_share(b->end - b->start, k + 1, b->nodes);
            if (!best || at < *best) best = at;
        }
    return best;
}

std::optional<std::uint64_t> dag_index::prev_event(std::uint64_t t) const {
    std::optional<std::uint64_t> best;
    if (auto it = std::lower_bound(events.begin(), events.end(), t); it != events.begin()) best = *(it - 1);
    if (t == 0) return best;
    // Inside a folded block running just before t: the start of the node's share running then.
    for (const auto& blocks : folded_by_worker)
        if (const block_time* b = running_at(blocks, t - 1)) {
            const std::uint64_t k = nodes_done_at(b->start, b->end, b->nodes, t - 1);
            const std::uint64_t at = b->start + analysis::node_share(b->end - b->start, k, b->nodes);
            if (!best || at > *best) best = at;
        }
    return best;
}

node_state state_in_block(const tm::pipeline_dag& dag, const dag_index& idx, std::uint32_t v, std::uint32_t k,
                          std::uint64_t t, edge_mask ready_mask) {
    const tm::dag_node& nd = dag.nodes[v];
    if (!nd.folded() || (k == 0 && t < nd.start)) return state_at(dag, idx, v, t, ready_mask);
    if (t < nd.start) return node_state::not_ready;   // its stage predecessor (node k - 1) has not started
    const std::uint32_t done = nodes_done_at(nd, t);
    if (k < done) return node_state::done;
    return k == done ? node_state::running : node_state::not_ready;
}

}   // namespace pipescope::viewer
