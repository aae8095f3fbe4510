// Merge sort as a stage graph with a feedback queue (mergesort_graph.hpp).
#include "mergesort_graph.hpp"

#include <algorithm>
#include <bit>

namespace pipescope::workloads::mergesort {

sort_state::sort_state(std::uint64_t n, std::uint64_t leaf)
    : keys(n),
      chunk(leaf),
      chunks(n / leaf),
      levels(static_cast<std::uint32_t>(std::countr_zero(n / leaf))),
      pieces_left(std::make_unique<std::atomic<std::uint32_t>[]>(std::max<std::uint64_t>(n / leaf, 2) - 1)) {}

void sort_state::reset() {
    buffer[0] = input;
    if (levels > 0) buffer[1].assign(keys, 0);
    delivered.clear();
}

std::uint32_t sort_state::node(std::uint32_t level, std::uint64_t offset) const {
    return static_cast<std::uint32_t>((chunks >> level) - 1 + offset / (chunk << level));
}

namespace {

// The stable merge of sorted [a, a_end) and [b, b_end) into out (ties go to a, as in std::merge),
// without a branch on the comparison. std::merge branches on every key, and on random keys that
// branch goes either way at random: about half of the comparisons were mispredicted, which made
// merging the graph's largest cost (graph-serial 1.12 × the serial std::sort at size large). Here
// the comparison selects the key and advances one of the two cursors by arithmetic (a conditional
// move), so a merge step costs the same whichever run the key comes from.
void merge_branch_free(const std::uint64_t* a, const std::uint64_t* a_end, const std::uint64_t* b,
                       const std::uint64_t* b_end, std::uint64_t* out) {
    while (a != a_end && b != b_end) {
        const std::uint64_t x = *a, y = *b;
        const bool from_b = y < x;
        *out++ = from_b ? y : x;
        a += !from_b;
        b += from_b;
    }
    out = std::copy(a, a_end, out);
    std::copy(b, b_end, out);
}

}   // namespace

void sort_state::merge(const merge_piece& p) {
    const std::uint64_t* a = buffer[p.level % 2].data() + p.offset;
    const std::uint64_t* b = a + p.half;
    std::uint64_t* out = buffer[(p.level + 1) % 2].data() + p.offset;
    const std::uint64_t a0 = merge_split(a, p.half, b, p.half, p.begin);
    const std::uint64_t a1 = merge_split(a, p.half, b, p.half, p.end);
    merge_branch_free(a + a0, a + a1, b + (p.begin - a0), b + (p.end - a1), out + p.begin);
}

std::vector<std::uint64_t> make_keys(std::uint64_t n, std::uint64_t seed) {
    // splitmix64: every key a full 64-bit value, so the order is a real permutation to undo.
    std::vector<std::uint64_t> keys(n);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull;
    for (auto& k : keys) {
        std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        k = z ^ (z >> 31);
    }
    return keys;
}

std::uint64_t merge_split(const std::uint64_t* a, std::uint64_t na, const std::uint64_t* b, std::uint64_t nb,
                          std::uint64_t k) {
    // Taking i keys from a and k - i from b is right when a[i-1] comes before b[k-i] and b[k-i-1]
    // before a[i]. "a[i] comes no later than b[k-i-1]" (ties go to a) holds for small i and fails
    // from the answer on: binary search for the first i where it fails.
    std::uint64_t lo = k > nb ? k - nb : 0, hi = std::min(k, na);
    while (lo < hi) {
        const std::uint64_t i = lo + (hi - lo) / 2;
        if (a[i] <= b[k - i - 1]) lo = i + 1;
        else hi = i;
    }
    return lo;
}

std::vector<std::size_t> queue_floors(const sort_state& st) {
    const std::size_t c = static_cast<std::size_t>(st.chunks);
    return {0, std::max<std::size_t>(2 * c, 2), std::max<std::size_t>(c, 1), 0};
}

namespace {

// The "pair" stage: a run that arrives waits for its sibling; with both, the merge of the two is
// handed out in pieces to "merges" (output 0); the whole array goes to "sorted" (output 1).
graph::stage_task pair_runs(sort_state& st, graph::thread_context& ctx) {
    // waiting[l][j]: run j of level l (keys [j·len, (j+1)·len)) arrived and waits for its
    // sibling j ^ 1. Siblings are adjacent and together form run j / 2 of level l + 1.
    std::vector<std::vector<bool>> waiting(st.levels + 1);
    for (std::uint32_t l = 0; l <= st.levels; ++l) waiting[l].assign(st.chunks >> l, false);
    std::vector<run_desc> arrived;
    for (;;) {
        graph::pop_window w = co_await ctx.pop(0);
        if (!w) break;   // end of stream: every sort is done and the last merge closed the feedback
        arrived.clear();
        for (std::size_t i = 0; i < w.size(); ++i) arrived.push_back(w.at<run_desc>(i));
        ctx.commit(w);
        for (const run_desc& r : arrived) {
            if (r.length == st.keys) {
                co_await ctx.push(1, r);
                // A single chunk: the sort formed the whole array and no merge will ever run,
                // so nobody will close the feedback queue. Pair knows nothing more can come;
                // returning closes "merges", whose end finishes merge, which closes its side.
                if (st.chunks == 1) co_return;
                continue;
            }
            const std::uint64_t j = r.offset / r.length;
            if (!waiting[r.level][j ^ 1]) {
                waiting[r.level][j] = true;
                continue;
            }
            waiting[r.level][j ^ 1] = false;
            merge_piece p;
            p.offset = (j & ~std::uint64_t{1}) * r.length;
            p.half = r.length;
            p.level = r.level;
            p.node = st.node(r.level + 1, p.offset);
            const std::uint64_t pieces = 2 * r.length / st.piece_keys();
            // Set before any piece can run: the queue's commit publishes it to the merges.
            st.pieces_left[p.node].store(static_cast<std::uint32_t>(pieces), std::memory_order_relaxed);
            for (std::uint64_t k = 0; k < pieces; ++k) {
                p.begin = k * st.piece_keys();
                p.end = p.begin + st.piece_keys();
                co_await ctx.push(0, p);
            }
        }
    }
}

}   // namespace

graph::program build_graph(sort_state& st) {
    graph::program g;
    // One descriptor per packet everywhere: a parallel instance is then one chunk or one merge piece
    // (the unit of load balancing), and each instance pushes at most one run.
    const std::vector<std::size_t> floor = queue_floors(st);
    // "chunks" and "sorted": the application's capacities (GRAMPS' rule, seed 004 §II-C); DANBI's
    // rule and --param capacity resize every queue, down to these floors (graph_workload.hpp).
    // The feedback queue holds every run that has formed and waits for pair: at most C at once (runs
    // cover disjoint ranges), plus one reservation per running instance. 2C (at least 2) leaves room
    // for both, so a bounded policy never stops sort or merge on it for good — pair drains it as long
    // as "merges" has room, and merge drains "merges".
    const auto chunks = g.add_queue<run_desc>("chunks", {.packet_elements = 1, .capacity_packets = 16, .ordered = false});
    const auto runs = g.add_queue<run_desc>("runs", {.packet_elements = 1, .capacity_packets = floor[1], .ordered = false});
    // Pending pieces cover disjoint output ranges of pieces of 2·chunk keys: at most C/2, plus those
    // running. C (at least 1) leaves pair room to hand out a whole level at once.
    const auto merges =
        g.add_queue<merge_piece>("merges", {.packet_elements = 1, .capacity_packets = floor[2], .ordered = false});
    const auto sorted = g.add_queue<run_desc>("sorted", {.packet_elements = 1, .capacity_packets = 1, .ordered = false});

    g.add_serial("source", {}, {chunks}, [&st](graph::thread_context& ctx) -> graph::stage_task {
        for (std::uint64_t j = 0; j < st.chunks; ++j) {
            run_desc chunk;
            chunk.offset = j * st.chunk;
            chunk.length = st.chunk;
            co_await ctx.push(0, chunk);
        }
    });

    g.add_parallel("sort", chunks, {{runs, 1}}, [&st](graph::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i) {
            const run_desc chunk = ctx.in<run_desc>(i);
            std::uint64_t* k = st.buffer[0].data() + chunk.offset;
            std::sort(k, k + chunk.length);
            ctx.push(0, chunk);   // now a sorted run of level 0
        }
    });

    g.add_serial("pair", {runs}, {merges, sorted}, [&st](graph::thread_context& ctx) { return pair_runs(st, ctx); });

    g.add_parallel("merge", merges, {{runs, 1}}, [&st](graph::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i) {
            const merge_piece p = ctx.in<merge_piece>(i);
            st.merge(p);
            // The last piece to finish (acq_rel: it sees the others' keys) forms the run (Cilk's sync).
            if (st.pieces_left[p.node].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
            run_desc r;
            r.offset = p.offset;
            r.length = 2 * p.half;
            r.level = p.level + 1;
            ctx.push(0, r);
            if (r.length == st.keys) ctx.close_output(0);   // the final run: nothing more goes round
        }
    });

    g.add_serial("sink", {sorted}, {}, [&st](graph::thread_context& ctx) -> graph::stage_task {
        for (;;) {
            graph::pop_window w = co_await ctx.pop(0);
            if (!w) break;
            for (std::size_t i = 0; i < w.size(); ++i) st.delivered.push_back(w.at<run_desc>(i));
            ctx.commit(w);
        }
    });
    return g;
}

}   // namespace pipescope::workloads::mergesort
