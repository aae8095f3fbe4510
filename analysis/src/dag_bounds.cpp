// Work, span, parallelism and the critical path (dag_bounds.hpp).
#include <pipescope/analysis/dag_bounds.hpp>

#include <algorithm>
#include <cmath>

namespace pipescope::analysis {

const char* to_string(path_edge e) {
    switch (e) {
        case path_edge::start: return "start";
        case path_edge::stage: return "stage";
        case path_edge::cross: return "cross";
        case path_edge::retire: return "retire";
        case path_edge::throttle: return "throttle";
        case path_edge::control: return "control";
    }
    return "?";
}

namespace {

path_edge path_kind(tm::dag_edge_kind k) {
    switch (k) {
        case tm::dag_edge_kind::stage: return path_edge::stage;
        case tm::dag_edge_kind::cross: return path_edge::cross;
        case tm::dag_edge_kind::retire: return path_edge::retire;
        case tm::dag_edge_kind::throttle: return path_edge::throttle;
    }
    return path_edge::stage;
}

// The implicit control edges: first node of i-1 -> first node of i, both stage 0.
std::vector<std::pair<std::uint32_t, std::uint32_t>> control_edges(const tm::pipeline_dag& dag) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> control;
    std::uint32_t prev_first = tm::no_index;
    for (std::uint32_t i = 0; i < dag.nodes.size(); ++i) {
        if (i > 0 && dag.nodes[i].iteration == dag.nodes[i - 1].iteration) continue;
        if (prev_first != tm::no_index && dag.nodes[i].stage == 0 && dag.nodes[prev_first].stage == 0 &&
            dag.nodes[prev_first].iteration + 1 == dag.nodes[i].iteration)
            control.emplace_back(prev_first, i);
        prev_first = i;
    }
    return control;
}

// Incoming edges by target (counting sort): node v's are in[first[v], first[v + 1]), in the order
// of the model's edges, then the control edges.
struct incoming {
    struct edge {
        std::uint32_t from;
        path_edge kind;
    };
    std::vector<std::uint32_t> first;
    std::vector<edge> in;

    incoming(const tm::pipeline_dag& dag, bool with_throttle) : first(dag.nodes.size() + 1, 0) {
        const std::size_t n = dag.nodes.size();
        const auto control = control_edges(dag);
        auto counted = [&](const tm::dag_edge& e) { return with_throttle || e.kind != tm::dag_edge_kind::throttle; };
        for (const auto& e : dag.edges)
            if (counted(e)) ++first[e.to + 1];
        for (const auto& c : control) ++first[c.second + 1];
        for (std::size_t i = 1; i <= n; ++i) first[i] += first[i - 1];
        in.resize(first[n]);
        std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
        for (const auto& e : dag.edges)
            if (counted(e)) in[fill[e.to]++] = {e.from, path_kind(e.kind)};
        for (const auto& c : control) in[fill[c.second]++] = {c.first, path_edge::control};
    }
};

// The longest path to the end of each node, in node order: every edge goes from a node of a
// smaller (iteration, stage) to a larger one, so node order is a topological order.
//
// Retirement: iteration i retires when its last node has finished and i-1 has retired (the
// implicit final stage, zero work). The model's retire edges (last of i-1 -> last of i) stand
// for it; here it is kept as R_i = max(finish of i's last node, R_{i-1}), and throttling edges
// leave from R_{i-K} (seed 001 §1: from the end of iteration i to the start of i + K).
class longest_paths {
public:
    longest_paths(const tm::pipeline_dag& dag, const incoming& edges)
        : dist(dag.nodes.size(), 0),
          pred(dag.nodes.size(), tm::no_index),
          via(dag.nodes.size(), path_edge::start),
          retire_of_(dag.nodes.size()) {
        for (std::uint32_t v = 0; v < dag.nodes.size(); ++v) visit(dag, edges, v);
    }

    std::vector<std::uint64_t> dist;   // the longest path's length to the end of the node
    std::vector<std::uint32_t> pred;   // its previous node (no_index: none)
    std::vector<path_edge> via;        // the edge from there
    std::uint32_t best = 0;            // the node the longest path ends at

private:
    struct retired {
        std::uint64_t at = 0;
        std::uint32_t node = tm::no_index;   // the node whose finish sets it
    };

    void visit(const tm::pipeline_dag& dag, const incoming& edges, std::uint32_t v) {
        if (v > 0 && dag.nodes[v].iteration != dag.nodes[v - 1].iteration) iter_first_ = v;
        std::uint64_t d = 0;
        for (std::uint32_t k = edges.first[v]; k < edges.first[v + 1]; ++k) {
            const incoming::edge& e = edges.in[k];
            std::uint32_t u = e.from;
            if (u >= v || e.kind == path_edge::retire) continue;   // retire: see R above
            std::uint64_t du = dist[u];
            if (e.kind == path_edge::throttle) {
                du = retire_of_[u].at;
                u = retire_of_[u].node;
            }
            if (pred[v] == tm::no_index || du > d) {   // ties: the first incoming edge
                d = du;
                pred[v] = u;
                via[v] = e.kind;
            }
        }
        const auto& node = dag.nodes[v];
        dist[v] = d + (node.end > node.start ? node.end - node.start : 0);
        if (dist[v] > dist[best]) best = v;
        if (v + 1 == dag.nodes.size() || dag.nodes[v + 1].iteration != node.iteration) retire(v);
    }

    // v is its iteration's last node: the iteration retires.
    void retire(std::uint32_t v) {
        retired r{dist[v], v};
        if (prev_r_.node != tm::no_index && prev_r_.at > r.at) r = prev_r_;
        for (std::uint32_t k = iter_first_; k <= v; ++k) retire_of_[k] = r;
        prev_r_ = r;
    }

    std::vector<retired> retire_of_;   // per node: R of its iteration (valid once the iteration is done)
    retired prev_r_;                   // R of the previous iteration
    std::uint32_t iter_first_ = 0;     // the current iteration's first node
};

}   // namespace

span_result longest_path(const tm::pipeline_dag& dag, bool with_throttle) {
    span_result out;
    if (dag.nodes.empty()) return out;
    const longest_paths lp(dag, incoming(dag, with_throttle));   // the edges are needed only while it is built
    out.span = lp.dist[lp.best];
    for (std::uint32_t v = lp.best; v != tm::no_index; v = lp.pred[v]) {
        const auto& node = dag.nodes[v];
        out.critical_path.push_back({v, node.iteration, node.stage, std::max(node.stage, node.last_stage),
                                     std::max<std::uint64_t>(1, node.nodes), node.start, node.end, node.worker, lp.via[v]});
        out.throttle_edges_on_path += lp.via[v] == path_edge::throttle;
    }
    std::reverse(out.critical_path.begin(), out.critical_path.end());
    return out;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> path_time_by_stage(const span_result& path) {
    // Each block adds duration / stages to every stage of its range: a sweep over the ranges' ends
    // (O(path log path + stages covered), not one step per node of the blocks).
    struct change {
        std::uint64_t stage;
        long double rate;   // ns per stage the range adds from here on (subtracts when !open)
        bool open;
    };
    std::vector<change> ev;
    ev.reserve(2 * path.critical_path.size());
    for (const auto& n : path.critical_path) {
        const std::uint64_t last = std::max(n.stage, n.last_stage);
        const long double rate =
            static_cast<long double>(n.end > n.begin ? n.end - n.begin : 0) / static_cast<long double>(last - n.stage + 1);
        ev.push_back({n.stage, rate, true});
        if (last != ~std::uint64_t{0}) ev.push_back({last + 1, rate, false});
    }
    std::sort(ev.begin(), ev.end(), [](const change& a, const change& b) { return a.stage < b.stage; });
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    long double rate = 0;
    std::size_t active = 0;   // ranges covering the current stages
    for (std::size_t k = 0; k < ev.size();) {
        const std::uint64_t at = ev[k].stage;
        for (; k < ev.size() && ev[k].stage == at; ++k) {
            rate += ev[k].open ? ev[k].rate : -ev[k].rate;
            if (ev[k].open) ++active;
            else --active;
        }
        if (active == 0) continue;
        const std::uint64_t until = k < ev.size() ? ev[k].stage : at + 1;   // the last range reaching the last stage
        const auto ns = static_cast<std::uint64_t>(std::llround(static_cast<double>(std::max<long double>(rate, 0))));
        for (std::uint64_t j = at; j < until; ++j) out.emplace_back(j, ns);
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

std::uint64_t path_nodes(const span_result& path) {
    std::uint64_t n = 0;
    for (const auto& p : path.critical_path) n += p.nodes;
    return n;
}

dag_bounds compute_dag_bounds(const run_scope& scope, unsigned workers, std::optional<double> reference_seconds) {
    dag_bounds b;
    b.workers = workers;
    b.makespan = scope.makespan();
    const tm::run* r = scope.run_info();
    if (!r || r->dag.nodes.empty()) return b;
    const tm::pipeline_dag& dag = r->dag;
    b.available = true;
    b.blocks = dag.nodes.size();
    b.edges = dag.edges.size();
    b.iterations = dag.iterations;
    b.K = dag.K;
    for (const auto& n : dag.nodes) {
        b.work += n.end > n.start ? n.end - n.start : 0;
        b.nodes += std::max<std::uint32_t>(1, n.nodes);
        b.folded_blocks += n.folded();
    }
    if (b.folded_blocks) {
        b.approximate = true;
        b.approximate_reason = "folded trace: " + std::to_string(b.folded_blocks) + " of " + std::to_string(b.blocks) +
                               " DAG blocks are folded runs (" + std::to_string(b.nodes) +
                               " nodes in all); work T1 is exact, the span over blocks is an upper bound of the span "
                               "over nodes (so T1/Tinf is a lower bound) and times per stage are shares (duration / nodes)";
    }
    b.with_throttle = longest_path(dag, true);
    b.without_throttle = longest_path(dag, false);
    if (b.approximate && b.with_throttle.span > b.makespan)
        b.approximate_reason += "; here it exceeds the makespan: a block waits for all of iteration i-1's stages up to "
                                "its last, while its first nodes waited only for the earlier ones";
    auto ratio = [](double a, double c) { return c > 0 ? a / c : 0.0; };
    b.parallelism = ratio(static_cast<double>(b.work), static_cast<double>(b.with_throttle.span));
    b.parallelism_unthrottled = ratio(static_cast<double>(b.work), static_cast<double>(b.without_throttle.span));
    b.speedup_bound = workers ? std::min(static_cast<double>(workers), b.parallelism) : b.parallelism;
    if (reference_seconds && b.makespan) {
        b.observed_speedup = *reference_seconds * 1e9 / static_cast<double>(b.makespan);
        b.observed_from_reference = true;
    } else {
        b.observed_speedup = ratio(static_cast<double>(b.work), static_cast<double>(b.makespan));
    }
    return b;
}

}   // namespace pipescope::analysis
