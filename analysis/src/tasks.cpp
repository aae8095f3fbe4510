// Fork-join runs (tasks.hpp): work, span and parallelism of the spawn tree the task slices record.
//
// Work and span as in seed 001 §7 (T1, T∞, parallelism T1/T∞, T_P ≥ max(T1/P, T∞)) and as Cilkscale
// measures them: the work is the sum of the strands, the span the longest path of the spawn tree.
// Each `task` slice names its task, its parent and how long after its spawn it began; from those:
//
//   own(t)     its slice less the task / idle / parked slices nested in it (a sync that helps or waits)
//   s(c)       own time of c's parent t before c's spawn (exact: the spawn is recorded)
//   y(c)       own time of t before c's end: where t's sync for c is taken to be (the sync itself is not
//              recorded; the real sync is at or after it, so the part after it is never shorter)
//   span(t)    max(own(t), max over children c of s(c) + span(c) + own(t) - y(c))
//   T∞         the longest chain of root tasks one after the other (a root spawned after another
//              ended may follow it on the spawning thread), of their spans
//
// Exact for tasks that spawn their children before their first sync (divide and conquer, fib);
// a path through two children of one task that syncs in rounds is not followed. The spawning
// thread's own time outside tasks is not a task and counts in neither T1 nor T∞.
#include <pipescope/analysis/tasks.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pipescope::analysis {
namespace {

struct task_record {
    std::uint64_t id = 0, parent = 0;
    std::uint64_t begin = 0, end = 0, spawned = 0;               // spawned: begin less the spawn delay
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;   // nested slices that are not its own time
    std::uint64_t own() const { return own_before(end); }
    // Its own time in [begin, x].
    std::uint64_t own_before(std::uint64_t x) const {
        x = std::clamp(x, begin, end);
        std::uint64_t t = x - begin;
        for (const auto& [b, e] : gaps) {
            if (b >= x) break;
            t -= std::min(e, x) - b;
        }
        return t;
    }
};

struct arg_ids {
    tm::string_id task, parent, spawn_delay;
};

// Reads one task slice's annotations; false if it has no task id.
bool read_task(const tm::trace_model& m, const tm::slice& s, const arg_ids& ids, task_record& r, bool& has_parent) {
    bool has_id = false;
    std::uint64_t delay = 0;
    for (const tm::model_arg* a = m.args_begin(s); a != m.args_end(s); ++a) {
        if (a->name == ids.task) r.id = a->bits(), has_id = true;
        if (a->name == ids.parent) r.parent = a->bits(), has_parent = true;
        if (a->name == ids.spawn_delay) delay = a->bits();
    }
    r.begin = s.begin;
    r.end = s.end;
    r.spawned = s.begin - std::min(delay, s.begin);
    return has_id;
}

bool is_gap(slice_kind k) { return k == slice_kind::task || k == slice_kind::idle || k == slice_kind::parked; }

// Every task slice of the run's workers, with its nested gaps.
std::vector<task_record> collect_tasks(const run_scope& scope, bool& parents_named) {
    const tm::trace_model& m = *scope.model;
    const arg_ids ids{find_string(m, vocab::key(vocab::arg_key::task)), find_string(m, vocab::key(vocab::arg_key::parent)),
                      find_string(m, vocab::key(vocab::arg_key::spawn_delay))};
    std::vector<task_record> out;
    parents_named = false;
    struct open_slice {
        std::uint16_t depth;
        slice_kind kind;
        std::size_t record;   // out's index for a task
    };
    for (std::uint32_t track : scope.workers) {
        std::vector<open_slice> stack;
        for (const tm::slice& s : m.tracks[track].slices) {
            while (!stack.empty() && stack.back().depth >= s.depth) stack.pop_back();
            const slice_kind k = s.kind;
            if (!is_gap(k)) {
                stack.push_back({s.depth, k, 0});
                continue;
            }
            // The nearest enclosing gap kind: if it is a task, this slice is not that task's own time.
            for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
                if (!is_gap(it->kind)) continue;
                if (it->kind == slice_kind::task) out[it->record].gaps.emplace_back(s.begin, s.end);
                break;
            }
            std::size_t record = 0;
            if (k == slice_kind::task) {
                task_record r;
                bool has_parent = false;
                if (read_task(m, s, ids, r, has_parent)) {
                    parents_named = parents_named || has_parent;
                    record = out.size();
                    out.push_back(std::move(r));
                } else {
                    stack.push_back({s.depth, slice_kind::other, 0});   // not a pipescope task: its time is work
                    continue;
                }
            }
            stack.push_back({s.depth, k, record});
        }
    }
    return out;
}

std::uint64_t nearest_rank(const std::vector<std::uint64_t>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// span_ns and depth of the spawn tree (see the top of this file).
void spawn_tree_span(const std::vector<task_record>& tasks, task_stats& out) {
    const std::size_t n = tasks.size();
    std::unordered_map<std::uint64_t, std::size_t> by_id;
    by_id.reserve(n);
    for (std::size_t i = 0; i < n; ++i) by_id.emplace(tasks[i].id, i);
    std::vector<std::vector<std::size_t>> children(n);
    std::vector<std::size_t> order;   // parents before children
    for (std::size_t i = 0; i < n; ++i) {
        const auto p = tasks[i].parent ? by_id.find(tasks[i].parent) : by_id.end();
        if (p != by_id.end() && p->second != i) children[p->second].push_back(i);
        else order.push_back(i);
    }
    out.roots = order.size();
    std::vector<std::uint64_t> depth(n, 1);
    for (std::size_t k = 0; k < order.size(); ++k)   // breadth first; a cycle (a corrupt trace) is never entered
        for (std::size_t c : children[order[k]]) {
            depth[c] = depth[order[k]] + 1;
            order.push_back(c);
        }
    std::vector<std::uint64_t> span(n, 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const task_record& t = tasks[*it];
        const std::uint64_t own = t.own();
        std::uint64_t best = own;
        for (std::size_t c : children[*it]) {
            const std::uint64_t s = t.own_before(tasks[c].spawned);
            const std::uint64_t y = std::max(s, t.own_before(tasks[c].end));
            best = std::max(best, s + span[c] + (own - y));
        }
        span[*it] = best;
        out.depth = std::max(out.depth, depth[*it]);
    }
    // Roots: the longest chain of roots each spawned after the previous one ended.
    std::vector<std::size_t> roots(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(out.roots));
    std::vector<std::size_t> by_end = roots;
    std::sort(roots.begin(), roots.end(), [&](auto a, auto b) { return tasks[a].spawned < tasks[b].spawned; });
    std::sort(by_end.begin(), by_end.end(), [&](auto a, auto b) { return tasks[a].end < tasks[b].end; });
    std::vector<std::uint64_t> chain(n, 0);
    std::uint64_t before = 0;   // the longest chain of roots that ended before the current root's spawn
    std::size_t e = 0;
    for (std::size_t r : roots) {
        while (e < by_end.size() && tasks[by_end[e]].end <= tasks[r].spawned) before = std::max(before, chain[by_end[e++]]);
        chain[r] = before + span[r];
        out.span_ns = std::max(out.span_ns, chain[r]);
    }
}

}   // namespace

task_stats compute_task_stats(const run_scope& scope, const run_breakdown& breakdown, const run_stats& stats) {
    task_stats out;
    if (!scope.model) return out;
    bool parents_named = false;
    const std::vector<task_record> tasks = collect_tasks(scope, parents_named);
    out.tasks = tasks.size();
    out.steals = stats.steals_made;
    out.scheduling_ns = breakdown.total.time[time_category::scheduler] + breakdown.total.time[time_category::stealing];
    if (tasks.empty()) return out;
    std::vector<std::uint64_t> own;
    own.reserve(tasks.size());
    for (const task_record& t : tasks) own.push_back(t.own());
    std::sort(own.begin(), own.end());
    for (std::uint64_t o : own) out.work_ns += o;
    out.own_mean_ns = static_cast<double>(out.work_ns) / static_cast<double>(own.size());
    out.own_p50_ns = nearest_rank(own, 0.50);
    out.own_p95_ns = nearest_rank(own, 0.95);
    out.own_max_ns = own.back();
    out.spawn_tree = parents_named;
    if (parents_named) spawn_tree_span(tasks, out);
    return out;
}

}   // namespace pipescope::analysis
