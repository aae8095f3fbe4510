// Work, span, parallelism and the critical path (dag_bounds.hpp).
#include <pipescope/analysis/dag_bounds.hpp>

#include <algorithm>

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

span_result longest_path(const tm::pipeline_dag& dag, bool with_throttle) {
    span_result out;
    const std::size_t n = dag.nodes.size();
    if (n == 0) return out;
    // Incoming edges by target (counting sort): every edge goes from a node of a smaller
    // (iteration, stage) to a larger one, so node order is a topological order.
    std::vector<std::uint32_t> first(n + 1, 0);
    struct in_edge {
        std::uint32_t from;
        path_edge kind;
    };
    auto kind_of = [](tm::dag_edge_kind k) {
        switch (k) {
            case tm::dag_edge_kind::stage: return path_edge::stage;
            case tm::dag_edge_kind::cross: return path_edge::cross;
            case tm::dag_edge_kind::retire: return path_edge::retire;
            case tm::dag_edge_kind::throttle: return path_edge::throttle;
        }
        return path_edge::stage;
    };
    // The implicit control edges: first node of i-1 -> first node of i, both stage 0.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> control;
    {
        std::uint32_t prev_first = tm::no_index;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (i > 0 && dag.nodes[i].iteration == dag.nodes[i - 1].iteration) continue;
            if (prev_first != tm::no_index && dag.nodes[i].stage == 0 && dag.nodes[prev_first].stage == 0 &&
                dag.nodes[prev_first].iteration + 1 == dag.nodes[i].iteration)
                control.emplace_back(prev_first, i);
            prev_first = i;
        }
    }
    for (const auto& e : dag.edges)
        if (with_throttle || e.kind != tm::dag_edge_kind::throttle) ++first[e.to + 1];
    for (const auto& c : control) ++first[c.second + 1];
    for (std::size_t i = 1; i <= n; ++i) first[i] += first[i - 1];
    std::vector<in_edge> in(first[n]);
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (const auto& e : dag.edges)
        if (with_throttle || e.kind != tm::dag_edge_kind::throttle) in[fill[e.to]++] = {e.from, kind_of(e.kind)};
    for (const auto& c : control) in[fill[c.second]++] = {c.first, path_edge::control};

    // Retirement: iteration i retires when its last node has finished and i-1 has retired (the
    // implicit final stage, zero work). The model's retire edges (last of i-1 -> last of i) stand
    // for it; here it is kept as R_i = max(finish of i's last node, R_{i-1}), and throttling edges
    // leave from R_{i-K} (seed 001 §1: from the end of iteration i to the start of i + K).
    struct retired {
        std::uint64_t at = 0;
        std::uint32_t node = tm::no_index;   // the node whose finish sets it
    };
    std::vector<retired> retire_of(n);         // per node: R of its iteration (valid once the iteration is done)
    std::vector<std::uint64_t> dist(n, 0);
    std::vector<std::uint32_t> pred(n, tm::no_index);
    std::vector<path_edge> via(n, path_edge::start);
    std::uint32_t best = 0;
    retired prev_r;
    std::uint32_t iter_first = 0;
    for (std::uint32_t v = 0; v < n; ++v) {
        if (v > 0 && dag.nodes[v].iteration != dag.nodes[v - 1].iteration) iter_first = v;
        std::uint64_t d = 0;
        for (std::uint32_t k = first[v]; k < first[v + 1]; ++k) {
            std::uint32_t u = in[k].from;
            if (u >= v || in[k].kind == path_edge::retire) continue;   // retire: see R above
            std::uint64_t du = dist[u];
            if (in[k].kind == path_edge::throttle) {
                du = retire_of[u].at;
                u = retire_of[u].node;
            }
            if (pred[v] == tm::no_index || du > d) {   // ties: the first incoming edge
                d = du;
                pred[v] = u;
                via[v] = in[k].kind;
            }
        }
        const auto& node = dag.nodes[v];
        dist[v] = d + (node.end > node.start ? node.end - node.start : 0);
        if (dist[v] > dist[best]) best = v;
        if (v + 1 == n || dag.nodes[v + 1].iteration != node.iteration) {   // v is its iteration's last node
            retired r{dist[v], v};
            if (prev_r.node != tm::no_index && prev_r.at > r.at) r = prev_r;
            for (std::uint32_t k = iter_first; k <= v; ++k) retire_of[k] = r;
            prev_r = r;
        }
    }
    out.span = dist[best];
    for (std::uint32_t v = best; v != tm::no_index; v = pred[v]) {
        const auto& node = dag.nodes[v];
        out.critical_path.push_back({v, node.iteration, node.stage, node.start, node.end, node.worker, via[v]});
        out.throttle_edges_on_path += via[v] == path_edge::throttle;
    }
    std::reverse(out.critical_path.begin(), out.critical_path.end());
    return out;
}

dag_bounds compute_dag_bounds(const run_scope& scope, unsigned workers, std::optional<double> reference_seconds) {
    dag_bounds b;
    b.workers = workers;
    b.makespan = scope.makespan();
    const tm::run* r = scope.run_info();
    if (!r || r->dag.nodes.empty()) return b;
    const tm::pipeline_dag& dag = r->dag;
    b.available = true;
    b.nodes = dag.nodes.size();
    b.edges = dag.edges.size();
    b.iterations = dag.iterations;
    b.K = dag.K;
    for (const auto& n : dag.nodes) b.work += n.end > n.start ? n.end - n.start : 0;
    b.with_throttle = longest_path(dag, true);
    b.without_throttle = longest_path(dag, false);
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

}  // namespace pipescope::analysis
