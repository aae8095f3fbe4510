// The pipeline DAG of a run (seed 001 §2): its nodes read from the workers' node slices, sorted by
// (iteration, stage), and the edges between them. build_pipeline_dag reads as its steps; each step
// is one function below it.
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace pipescope::trace {

namespace v = vocab;

const char* to_string(dag_edge_kind k) {
    switch (k) {
        case dag_edge_kind::stage: return "stage";
        case dag_edge_kind::cross: return "cross";
        case dag_edge_kind::retire: return "retire";
        case dag_edge_kind::throttle: return "throttle";
    }
    return "?";
}

std::uint32_t pipeline_dag::find(std::uint64_t iteration, std::uint64_t stage) const {
    // The last node (or block) starting at or before (i, j): it holds j if it is i's and reaches j.
    auto it = std::upper_bound(nodes.begin(), nodes.end(), std::pair(iteration, stage),
                               [](const auto& key, const dag_node& n) { return key < std::pair(n.iteration, n.stage); });
    if (it == nodes.begin()) return no_index;
    --it;
    if (it->iteration != iteration || !it->holds(stage)) return no_index;
    return static_cast<std::uint32_t>(it - nodes.begin());
}

namespace {

bool node_before(const dag_node& a, const dag_node& b) {
    return std::tie(a.iteration, a.stage, a.start) < std::tie(b.iteration, b.stage, b.start);
}

// Reads the node (or folded block) a worker's slice stands for, from the slice's typed identity
// (trace_model::node_of), and reports the blocks it cannot read as one iteration's stages (once per
// run).
class node_reader {
public:
    node_reader(const trace_model& m, const run& r, std::vector<std::string>* problems)
        : m_(m), r_(r), problems_(problems), graph_(r.program_kind == v::graph_program) {}

    // Without these two annotations in the trace no slice is a node of the DAG.
    bool usable() const { return m_.node_args.iteration != no_index && m_.node_args.stage != no_index; }
    std::size_t slices(std::size_t w) const { return m_.tracks[r_.workers[w]].slices.size(); }

    // Whether slice k of worker w is a node of the DAG (its iteration and stage annotated); if so, n is that node.
    bool read(std::size_t w, std::size_t k, dag_node& n) {
        const slice& s = m_.tracks[r_.workers[w]].slices[k];
        if (s.kind != slice_kind::node) return false;
        const node_extent x = m_.node_of(s);
        if (x.iteration < 0 || !x.stage_annotated || x.stage < 0) return false;
        n = dag_node{};
        n.iteration = static_cast<std::uint64_t>(x.iteration);
        n.stage = n.last_stage = static_cast<std::uint64_t>(x.stage);
        n.waited = x.waited;
        if (x.pipeline_block()) {
            n.last_stage = x.last_stage;
            n.nodes = static_cast<std::uint32_t>(x.nodes);
        } else if (x.folded()) {
            report_bad_block(s);
        }
        n.start = s.begin;
        n.end = s.end;
        n.worker = static_cast<int>(w);
        n.slice = {r_.workers[w], static_cast<std::uint32_t>(k), false};
        return true;
    }

private:
    // A folded slice that is not one iteration's stages [stage, last_stage], one node each, is kept as
    // the node it starts with. A stage graph's folded slice holds one stage's consecutive instances:
    // it is not a pipeline block, and being kept as its first node is all a graph run needs here.
    void report_bad_block(const slice& s) {
        if (problems_ && !graph_ && bad_blocks_++ == 0)
            problems_->push_back("run '" + r_.name + "': folded slice at " + std::to_string(s.begin) +
                                 " ns does not hold one node per stage of one iteration (kept as its first node)");
    }

    const trace_model& m_;
    const run& r_;
    std::vector<std::string>* problems_;
    bool graph_;
    std::size_t bad_blocks_ = 0;
};

// The nodes sorted (stably) by (iteration, stage, start), when each worker's nodes already are (its
// iterations ascend, as they do): a merge of the workers' nodes in one pass. False, and `out` left
// partial, when it finds a worker's nodes out of order.
bool merge_workers(const run& r, node_reader& reader, std::vector<dag_node>& out) {
    struct cursor {
        std::size_t w, k;   // worker, next slice
        dag_node n;         // its current node
    };
    std::vector<cursor> cur;
    const auto advance = [&](cursor& c) {
        const std::size_t n = reader.slices(c.w);
        while (c.k < n)
            if (reader.read(c.w, c.k++, c.n)) return true;
        return false;
    };
    for (std::size_t w = 0; w < r.workers.size(); ++w) {
        if (r.workers[w] == no_index) continue;
        cursor c{w, 0, {}};
        if (advance(c)) cur.push_back(c);
    }
    // A min-heap of cursors by (node, worker): ties keep worker order, as a stable sort would.
    const auto after = [&](std::uint32_t a, std::uint32_t b) {
        if (node_before(cur[b].n, cur[a].n)) return true;
        if (node_before(cur[a].n, cur[b].n)) return false;
        return cur[a].w > cur[b].w;
    };
    std::vector<std::uint32_t> heap;
    for (std::uint32_t i = 0; i < cur.size(); ++i) heap.push_back(i);
    std::make_heap(heap.begin(), heap.end(), after);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), after);
        cursor& c = cur[heap.back()];
        out.push_back(c.n);
        if (!advance(c)) {
            heap.pop_back();
            continue;
        }
        if (node_before(c.n, out.back())) return false;
        std::push_heap(heap.begin(), heap.end(), after);
    }
    return true;
}

// Sorts nodes collected worker by worker (stably): when the iterations are dense (as they are), a
// counting sort by iteration and a sort of each iteration's nodes by (stage, start); a plain sort
// otherwise.
void sort_collected(std::vector<dag_node>& nodes) {
    if (std::is_sorted(nodes.begin(), nodes.end(), node_before)) return;
    std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
    for (const auto& n : nodes) lo = std::min(lo, n.iteration), hi = std::max(hi, n.iteration);
    if (hi - lo >= 4 * nodes.size() + 1024) {
        std::stable_sort(nodes.begin(), nodes.end(), node_before);
        return;
    }
    std::vector<std::uint32_t> start(static_cast<std::size_t>(hi - lo) + 2, 0);
    for (const auto& n : nodes) ++start[static_cast<std::size_t>(n.iteration - lo) + 1];
    for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    std::vector<dag_node> sorted(nodes.size());
    for (const auto& n : nodes) sorted[start[static_cast<std::size_t>(n.iteration - lo)]++] = n;
    // start[i] is now the end of iteration lo + i's bucket
    std::size_t b = 0;
    for (std::size_t i = 0; i + 1 < start.size(); ++i) {
        const std::size_t e = start[i];
        if (e - b > 16) {   // an iteration of many nodes (from several workers)
            std::stable_sort(sorted.begin() + b, sorted.begin() + e, node_before);
            b = e;
            continue;
        }
        for (std::size_t k = b + 1; k < e; ++k) {   // stable insertion sort of one bucket
            if (!node_before(sorted[k], sorted[k - 1])) continue;
            dag_node x = sorted[k];
            std::size_t m = k;
            for (; m > b && node_before(x, sorted[m - 1]); --m) sorted[m] = sorted[m - 1];
            sorted[m] = x;
        }
        b = e;
    }
    nodes = std::move(sorted);
}

// Every node of the run's workers, sorted (stably) by (iteration, stage, start).
std::vector<dag_node> sorted_nodes(const trace_model& m, const run& r, node_reader& reader) {
    std::size_t count = 0;
    for (auto w : r.workers)
        if (w != no_index) count += m.tracks[w].slices.size();
    std::vector<dag_node> nodes;
    nodes.reserve(count);
    if (merge_workers(r, reader, nodes)) return nodes;
    nodes.clear();
    for (std::size_t w = 0; w < r.workers.size(); ++w) {
        if (r.workers[w] == no_index) continue;
        dag_node node;
        for (std::size_t k = 0; k < reader.slices(w); ++k)
            if (reader.read(w, k, node)) nodes.push_back(node);
    }
    sort_collected(nodes);
    return nodes;
}

// A node appears once; a second slice for the same (i, j) — or one inside the previous block — is
// reported and dropped.
void drop_repeated_nodes(std::vector<dag_node>& nodes, const run& r, std::vector<std::string>* problems) {
    std::size_t out = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (out > 0 && nodes[out - 1].iteration == nodes[i].iteration && nodes[out - 1].last_stage >= nodes[i].stage) {
            if (problems)
                problems->push_back("run '" + r.name + "': node (" + std::to_string(nodes[i].iteration) + ", " +
                                    std::to_string(nodes[i].stage) + ") appears more than once");
            continue;
        }
        nodes[out++] = nodes[i];
    }
    nodes.resize(out);
}

// Each iteration's nodes, [first, last] indices into the sorted nodes, and the lookup of an iteration.
class iteration_ranges {
public:
    struct range {
        std::uint64_t iteration;
        std::uint32_t first, last;
    };

    explicit iteration_ranges(const std::vector<dag_node>& nodes) {
        for (std::uint32_t i = 0; i < nodes.size(); ++i) {
            if (ranges_.empty() || ranges_.back().iteration != nodes[i].iteration)
                ranges_.push_back({nodes[i].iteration, i, i});
            else ranges_.back().last = i;
        }
        // By index when the iterations are dense, else by binary search.
        lo_ = ranges_.empty() ? 0 : ranges_.front().iteration;
        dense_ = !ranges_.empty() && ranges_.back().iteration - lo_ < 4 * ranges_.size() + 1024;
        if (!dense_) return;
        index_.assign(static_cast<std::size_t>(ranges_.back().iteration - lo_) + 1, no_index);
        for (std::uint32_t k = 0; k < ranges_.size(); ++k) index_[static_cast<std::size_t>(ranges_[k].iteration - lo_)] = k;
    }

    const std::vector<range>& all() const { return ranges_; }

    // Iteration it's range, or nullptr when it has no nodes.
    const range* find(std::uint64_t it) const {
        if (dense_) {
            if (it < lo_ || it - lo_ >= index_.size()) return nullptr;
            const std::uint32_t k = index_[static_cast<std::size_t>(it - lo_)];
            return k == no_index ? nullptr : &ranges_[k];
        }
        auto p = std::lower_bound(ranges_.begin(), ranges_.end(), it,
                                  [](const range& a, std::uint64_t v) { return a.iteration < v; });
        return p != ranges_.end() && p->iteration == it ? &*p : nullptr;
    }

private:
    std::vector<range> ranges_;
    std::uint64_t lo_ = 0;
    bool dense_ = false;
    std::vector<std::uint32_t> index_;
};

// The edges into each iteration's nodes, grouped by target: stage edges down the iteration, cross
// edges from iteration i-1, the retire edge into its last node, the throttle edge from i-K.
void add_edges(pipeline_dag& dag, const iteration_ranges& iters) {
    dag.edges.reserve(dag.nodes.size() * 2);
    for (const auto& cur : iters.all()) {
        const auto* prev = cur.iteration > 0 ? iters.find(cur.iteration - 1) : nullptr;
        const auto* throttler = dag.K && cur.iteration >= dag.K ? iters.find(cur.iteration - dag.K) : nullptr;
        // The node of i-1 that holds stage j: its last node with stage <= j. Stages ascend in both
        // iterations, so one pointer walks i-1's nodes once (not once per node of i). A folded block
        // may hold waited nodes anywhere in it: its cross edge comes from the node of i-1 holding its
        // last stage.
        std::uint32_t holder = no_index;   // last node of i-1 with stage <= the current node's stage
        std::uint32_t next_p = prev ? prev->first : 0;
        for (std::uint32_t i = cur.first; i <= cur.last; ++i) {
            if (i > cur.first) dag.edges.push_back({i - 1, i, dag_edge_kind::stage});
            std::uint32_t cross_from = no_index;
            if ((dag.nodes[i].waited || dag.nodes[i].folded()) && prev) {
                while (next_p <= prev->last && dag.nodes[next_p].stage <= dag.nodes[i].last_stage) holder = next_p++;
                cross_from = holder;
                if (cross_from != no_index) dag.edges.push_back({cross_from, i, dag_edge_kind::cross});
            }
            if (i == cur.last && prev && cross_from != prev->last)
                dag.edges.push_back({prev->last, i, dag_edge_kind::retire});
            if (i == cur.first && throttler) dag.edges.push_back({throttler->last, i, dag_edge_kind::throttle});
        }
    }
}

}   // namespace

pipeline_dag build_pipeline_dag(const trace_model& m, const run& r, std::vector<std::string>* problems) {
    pipeline_dag dag;
    dag.K = r.dag.K;
    node_reader reader(m, r, problems);
    if (!reader.usable()) return dag;
    dag.nodes = sorted_nodes(m, r, reader);
    drop_repeated_nodes(dag.nodes, r, problems);
    for (const dag_node& n : dag.nodes) {
        dag.node_count += n.nodes;
        if (n.folded()) ++dag.folded_blocks;
    }
    const iteration_ranges iters(dag.nodes);
    dag.iterations = iters.all().size();
    add_edges(dag, iters);
    return dag;
}

}   // namespace pipescope::trace

namespace pipescope::trace {

std::string recorded_stage_kind(const run& r, std::uint64_t j) {
    for (const used_stage& u : r.used_stages)
        if (u.index == j || (u.and_later && j >= u.index)) return u.kind;
    return {};
}

std::string inferred_stage_kind(const run& r, std::uint64_t j) {
    if (j == 0) return "serial";   // where the loop condition runs and each iteration starts, in order
    std::uint64_t nodes = 0, waited = 0;
    const dag_node* prev = nullptr;   // the stage's node of the previous iteration that has one
    bool overlap = false;
    for (const dag_node& n : r.dag.nodes) {   // sorted by (iteration, stage)
        if (n.stage != j || n.folded()) continue;
        ++nodes;
        waited += n.waited;
        if (prev && prev->iteration + 1 == n.iteration && n.start < prev->end) overlap = true;
        prev = &n;
    }
    if (nodes < 2) return {};
    return overlap || waited + 1 < nodes ? "parallel" : "serial";
}

}   // namespace pipescope::trace
