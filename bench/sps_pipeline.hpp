// The serial–parallel–serial pipeline of bench_sps_vs_tbb, shared with bench_trace_cost (its
// coarse-grained case): produce (serial) -> transform (parallel, calibrated grain) -> fold (serial,
// in order), with a checksum that any reordering changes.
#pragma once

#include "bench_common.hpp"

#include <pipescope/pipeline.hpp>
#include <pipescope/scheduler.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace bench::sps {

// ---------------------------------------------------------------------------------------------
// The stage work, shared by all three versions

constexpr std::size_t item_words = 64;   // 512-byte buffer: fits in L1, large enough to be real work

struct alignas(64) work_item {   // own cache lines: neighbouring items never falsely share
    std::array<std::uint64_t, item_words> buf;
    std::uint64_t index = 0;
    std::uint64_t digest = 0;
};

// Stage 0: the buffer of item i is a splitmix64 sequence seeded by i.
inline void produce(work_item& item, std::uint64_t i) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + 1;
    for (auto& w : item.buf) {
        x += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        w = z ^ (z >> 31);
    }
    item.index = i;
}

// Stage 1: a serial dependency chain through `acc` (so the compiler cannot shortcut it), written
// back into the buffer so every round depends on the previous one.
inline void transform(work_item& item, unsigned rounds) {
    std::uint64_t acc = item.index;
    for (unsigned r = 0; r < rounds; ++r) {
        for (auto& w : item.buf) {
            acc ^= w;
            acc *= 0xD6E8FEB86659FD93ull;
            acc ^= acc >> 29;
            w = acc;
        }
    }
    item.digest = acc;
}

// Stage 2: FNV-1a style folding; swapping any two items changes the result.
inline std::uint64_t fold(std::uint64_t checksum, const work_item& item) {
    checksum = (checksum ^ item.digest) * 0x100000001B3ull;
    checksum = (checksum ^ item.index) * 0x100000001B3ull;
    return checksum;
}

constexpr std::uint64_t checksum_seed = 0xCBF29CE484222325ull;

struct workload {
    std::uint64_t items;
    unsigned rounds;
};

// ---------------------------------------------------------------------------------------------
// The three versions

inline std::uint64_t run_serial(const workload& w) {
    work_item item;
    std::uint64_t checksum = checksum_seed;
    for (std::uint64_t i = 0; i < w.items; ++i) {
        produce(item, i);
        transform(item, w.rounds);
        checksum = fold(checksum, item);
    }
    return checksum;
}

// Items in flight never exceed K, and iterations retire in order, so item i may reuse the buffer
// of item i-K: by the time i starts, i-K has left the last stage (in both runtimes).
// `policy` is any pipe_while policy; the filter kinds are declared for construct-and-run ones (tbb).
inline std::uint64_t run_pipescope(pipescope::scheduler& s, const workload& w, std::vector<work_item>& ring,
                                   const std::string& policy = "piper") {
    pipescope::pipeline_options options;
    options.policy = policy;
    options.throttle = static_cast<unsigned>(ring.size());
    options.declared_stages = {pipescope::stage_kind::serial_in_order, pipescope::stage_kind::parallel,
                               pipescope::stage_kind::serial_in_order};
    std::uint64_t next = 0;
    std::uint64_t checksum = checksum_seed;
    pipescope::pipe_while(
        s, [&] { return next < w.items; },
        [&](pipescope::iteration& it) -> pipescope::pipe_task {
            const std::uint64_t i = next++;
            work_item& item = ring[i % ring.size()];
            produce(item, i);
            co_await it.stage(1);
            transform(item, w.rounds);
            co_await it.stage_wait(2);
            checksum = fold(checksum, item);
        },
        options);
    return checksum;
}

// Stage-1 rounds for a target grain, from the measured cost of one round on this machine.
inline unsigned calibrate_rounds(double grain_us) {
    constexpr unsigned probe_rounds = 16;
    constexpr unsigned probe_items = 4000;
    work_item item;
    produce(item, 0);
    transform(item, probe_rounds);   // warm the caches and the branch predictor
    double best = 1e9;
    for (int attempt = 0; attempt < 5; ++attempt) {   // the fastest probe is the least disturbed
        const double t = bench::time_seconds([&] {
            for (unsigned i = 0; i < probe_items; ++i) {
                item.index = i;
                transform(item, probe_rounds);
            }
        });
        best = std::min(best, t);
    }
    if (item.digest == 42) fmt::print(" ");   // keeps the probe from being optimized away
    const double us_per_round = best * 1e6 / (double(probe_items) * probe_rounds);
    return std::max(1u, static_cast<unsigned>(std::lround(grain_us / us_per_round)));
}

}   // namespace bench::sps
