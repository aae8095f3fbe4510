// Merge sort as a stage graph with a feedback queue (internal to the `mergesort` workload).
//
// The graph (seed 002 Fig. 2 and §IV-A: Cilk's merge sort as a DANBI program whose recursive merge
// is a backward feedback queue; seed 004 Fig. 3b and §V-A: "mergesort ... two nested loops"):
//
//   source ──chunks──▶ sort ──runs──▶ pair ──merges──▶ merge
//   (serial)          (parallel)    (serial)          (parallel)
//                                ▲    │                 │
//                                │    └──sorted──▶ sink │ (serial)
//                                └────── runs ◀─────────┘  the feedback (backward) queue
//
// "runs" has two producers, sort and merge, and one consumer, pair; since merge lies downstream
// of pair, it is a backward queue (GRAMPS applies no backpressure on it, seed 004 §III-A).
//
// - source: one descriptor per leaf chunk of `chunk` keys.
// - sort: sorts its chunk in place (std::sort) and emits it as a run of level 0.
// - pair: matches sibling runs — two runs of the same level that are adjacent in the array and
//   together form the next level's run — and emits the merge of each pair as pieces; it forwards
//   the run that covers the whole array to the sink, and runs until "runs" ends. With a single
//   chunk no merge ever runs to close the feedback queue: pair then returns after forwarding the
//   sort's run, and its return ends "merges", so merge finishes and closes its side.
// - merge: merges one piece; the piece that completes its run (the last of its siblings, counted
//   down in an atomic per run, as Cilk's sync) feeds the new run back to pair. The merge that forms
//   the whole array closes the feedback queue: nothing more will go round the cycle, so pair sees end
//   of stream and the termination propagates (seed 002 §III-A5).
// - sink: records the runs it is given (exactly one: the sorted array).
//
// The queues carry work units — chunk, run and piece descriptors — and the keys stay in place in two
// arrays the state owns, as in Cilk's merge sort, which passes index ranges to its recursive calls.
// Copying keys through the queues would add a copy per level and size every packet by the run it
// carries (runs grow to the whole array); descriptors keep packets small and fixed. Runs of level l
// live in buffer l % 2, and merging them writes level l + 1 into the other buffer (double buffering
// by level): a parent's range in the other buffer held its grandchildren, which are consumed by then.
//
// Parallel merging (seed 002 §IV-A: DANBI's Split kernel "splits two sorted arrays into smaller
// chunks for a parallel merge"): the merge of two runs of `half` keys is cut into pieces of
// 2·chunk output keys; each piece finds where its output range starts and ends in the two inputs by
// a binary search over the merge path, so the pieces of one merge run in parallel and every level
// offers the same number of pieces (chunks / 2).
#pragma once

#include <pipescope/graph/program.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace pipescope::workloads::mergesort {

// Keys [offset, offset + length) of buffer level % 2, sorted. Level 0 is a leaf chunk.
struct run_desc {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::uint32_t level = 0;
    std::uint32_t unused = 0;
};

// Output keys [begin, end) (relative to `offset`) of the merge of the two level-`level` runs at
// offset and offset + half, into level + 1. `node` numbers the parent run (its countdown).
struct merge_piece {
    std::uint64_t offset = 0;
    std::uint64_t half = 0;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::uint32_t level = 0;
    std::uint32_t node = 0;
};

// The workload's data and the counters the graph shares. Sizes are powers of two.
struct sort_state {
    sort_state(std::uint64_t keys, std::uint64_t chunk);

    std::uint64_t keys = 0;     // N
    std::uint64_t chunk = 0;    // leaf chunk (≤ N)
    std::uint64_t chunks = 0;   // C = N / chunk
    std::uint32_t levels = 0;   // log2(C): the level of the run covering the array

    std::vector<std::uint64_t> input;
    std::array<std::vector<std::uint64_t>, 2> buffer;
    // Pieces of each merge still to finish, per internal node of the merge tree (C - 1 of them).
    std::unique_ptr<std::atomic<std::uint32_t>[]> pieces_left;
    std::vector<run_desc> delivered;   // what the sink received

    // Fresh input in buffer 0, nothing delivered (before every graph run).
    void reset();
    const std::vector<std::uint64_t>& result() const { return buffer[levels % 2]; }

    // Internal node of the run of `level` ≥ 1 at `offset`: the root is 0, level 1 holds the last C/2.
    std::uint32_t node(std::uint32_t level, std::uint64_t offset) const;
    // Output keys per merge piece.
    std::uint64_t piece_keys() const { return 2 * chunk; }
    // Merges one piece (data only; the caller counts it down).
    void merge(const merge_piece& p);
};

// N keys, a deterministic function of `seed`.
std::vector<std::uint64_t> make_keys(std::uint64_t n, std::uint64_t seed);

// How many of the first k keys of the stable merge of sorted a[0, na) and b[0, nb) come from a
// (ties go to a): the point where output position k crosses the merge path.
std::uint64_t merge_split(const std::uint64_t* a, std::uint64_t na, const std::uint64_t* b, std::uint64_t nb,
                          std::uint64_t k);

// The graph over `st` (which must outlive it). Its structure depends only on the sizes.
graph::program build_graph(sort_state& st);

// By queue id, the least each queue of build_graph must hold for the feedback loop never to stop
// for good, whatever a policy's capacity rule or --param capacity says: 2C in "runs" and C in
// "merges" (why: build_graph), nothing in "chunks" and "sorted".
std::vector<std::size_t> queue_floors(const sort_state& st);

}   // namespace pipescope::workloads::mergesort
