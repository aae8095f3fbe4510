// bench_sps_vs_tbb — a serial–parallel–serial pipeline under pipescope and under oneTBB.
//
//   stage 0, serial in order : produce item i (fill a small buffer with a hash sequence)
//   stage 1, parallel        : `rounds` rounds of multiply–xorshift mixing over the buffer
//   stage 2, serial in order : fold the item's digest into an order-dependent checksum
//
// Both versions call the very same stage functions on the same ring of K item buffers, use the
// same limit K on items in flight (pipescope's throttle, TBB's max_number_of_live_tokens) and the
// same number P of threads. The per-item work of stage 1 is calibrated to a target grain
// (default 1 µs and 20 µs), so the small grain shows per-item scheduling overhead and the large
// grain shows how well each runtime keeps P threads busy.
//
// Every run's checksum is compared against a plain serial loop's; a mismatch exits with status 1.
#include "bench_common.hpp"
#include "sps_pipeline.hpp"

#include <pipescope/pipeline.hpp>
#include <pipescope/scheduler.hpp>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

namespace num = pipescope::analysis::numbers;

using namespace bench::sps;

// Must be called inside the arena that limits TBB to P threads.
std::uint64_t run_tbb(const workload& w, std::vector<work_item>& ring) {
    std::uint64_t next = 0;
    std::uint64_t checksum = checksum_seed;
    tbb::parallel_pipeline(
        ring.size(),
        tbb::make_filter<void, work_item*>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> work_item* {
            if (next >= w.items) {
                fc.stop();
                return nullptr;
            }
            const std::uint64_t i = next++;
            work_item* item = &ring[i % ring.size()];
            produce(*item, i);
            return item;
        }) & tbb::make_filter<work_item*, work_item*>(tbb::filter_mode::parallel, [&](work_item* item) {
            transform(*item, w.rounds);
            return item;
        }) & tbb::make_filter<work_item*, void>(tbb::filter_mode::serial_in_order, [&](work_item* item) {
            checksum = fold(checksum, *item);
        }));
    return checksum;
}

// ---------------------------------------------------------------------------------------------
// Settings, calibration, measurement

struct settings {
    unsigned runs = 7;
    std::vector<unsigned> workers = {1, 2};
    std::vector<unsigned> grains_us = {1, 20};
    std::vector<unsigned> rounds;   // if given: fixed stage-1 rounds instead of calibrated grains
    unsigned long items = 0;        // 0: chosen per grain so the serial loop takes about run_ms
    unsigned run_ms = 300;
    unsigned throttle_factor = 4;   // K = factor * P, as pipescope's default
    int settle_ms = 20;
    bool raw = false;               // also print every sample
    std::string policy = "piper";   // the pipescope policy (tbb: pipescope's own construct-and-run tokens)
};

[[noreturn]] void mismatch(const char* who, unsigned p, std::uint64_t got, std::uint64_t want) {
    fmt::print(stderr, "MISMATCH: {} on P={}: checksum {:016x}, serial loop has {:016x}\n", who, p,
               static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
    std::exit(1);
}

// The amount of stage-1 work per item, and how to label it in the table.
struct grain_spec {
    std::string label;
    unsigned rounds;
    unsigned long default_items;   // items per run when --items is not given
};

std::vector<grain_spec> grain_specs(const settings& cfg) {
    std::vector<grain_spec> out;
    if (!cfg.rounds.empty()) {
        // Fixed work: the serial loop's time per item is measured and shown instead of a target.
        for (unsigned r : cfg.rounds) out.push_back({std::to_string(r) + " rounds", r, 100000});
        return out;
    }
    for (unsigned g : cfg.grains_us)
        out.push_back({std::to_string(g) + " us", calibrate_rounds(g), std::max(1000ul, cfg.run_ms * 1000ul / g)});
    return out;
}

double once_serial(const workload& w, std::uint64_t want) {
    std::uint64_t got = 0;
    const double t = bench::time_seconds([&] { got = run_serial(w); });
    if (got != want) mismatch("serial loop (rerun)", 0, got, want);
    return t;
}

struct cell {   // one (grain, P) combination
    std::string grain;
    workload work;
    unsigned p;
    unsigned k;
    bench::summary serial;
    bench::summary pipescope;
    bench::summary tbb;
    std::vector<double> serial_runs, pipescope_runs, tbb_runs;   // in run order, for --raw
    std::vector<double> round_trip_ns;                           // measured before each round
};

// Runs pipescope and TBB alternately (even runs pipescope first, odd runs TBB first) so neither
// always benefits from, or pays for, what ran just before it. The first pair is a warm-up. The
// serial loop runs once per round too, so its baseline sees the same machine conditions.
void measure_cell(cell& c, const settings& cfg, std::uint64_t want) {
    pipescope::scheduler sched(pipescope::scheduler_options{c.p});
    // Both limits: global_control caps TBB's worker pool, the arena caps this pipeline's concurrency.
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, c.p);
    tbb::task_arena arena(static_cast<int>(c.p));
    std::vector<work_item> ring(c.k);

    auto once_pipescope = [&] {
        std::uint64_t got = 0;
        const double t = bench::time_seconds([&] { got = run_pipescope(sched, c.work, ring, cfg.policy); });
        if (got != want) mismatch("pipescope", c.p, got, want);
        bench::settle(cfg.settle_ms);
        return t;
    };
    auto once_tbb = [&] {
        std::uint64_t got = 0;
        const double t = bench::time_seconds([&] { arena.execute([&] { got = run_tbb(c.work, ring); }); });
        if (got != want) mismatch("oneTBB", c.p, got, want);
        bench::settle(cfg.settle_ms);
        return t;
    };

    once_pipescope();   // warm-up: thread start-up, page faults, frame caches
    once_tbb();
    std::vector<double>& serial = c.serial_runs;
    std::vector<double>& ps = c.pipescope_runs;
    std::vector<double>& tb = c.tbb_runs;
    for (unsigned run = 0; run < cfg.runs; ++run) {
        c.round_trip_ns.push_back(bench::core_round_trip_ns());
        serial.push_back(once_serial(c.work, want));
        bench::settle(cfg.settle_ms);
        if (run % 2 == 0) {
            ps.push_back(once_pipescope());
            tb.push_back(once_tbb());
        } else {
            tb.push_back(once_tbb());
            ps.push_back(once_pipescope());
        }
    }
    c.serial = bench::summarize(serial);
    c.pipescope = bench::summarize(ps);
    c.tbb = bench::summarize(tb);
}

void print_cells(const std::vector<cell>& cells) {
    bench::table t({"grain", "us/item", "rounds", "items", "P", "K", "serial loop", "pipescope", "oneTBB", "ps/TBB",
                    "ps speedup", "TBB speedup"},
                   1);
    std::string last_grain;
    for (const cell& c : cells) {
        if (!last_grain.empty() && c.grain != last_grain) t.separator();
        last_grain = c.grain;
        const double items = double(c.work.items);
        t.add({c.grain, num::fixed(c.serial.median * 1e6 / items, 2), std::to_string(c.work.rounds),
               std::to_string(c.work.items), std::to_string(c.p), std::to_string(c.k), bench::fmt_time(c.serial),
               bench::fmt_time(c.pipescope), bench::fmt_time(c.tbb), bench::fmt_ratio(c.pipescope.median / c.tbb.median),
               bench::fmt_ratio(c.serial.median / c.pipescope.median), bench::fmt_ratio(c.serial.median / c.tbb.median)});
    }
    t.print();
}

// Every sample in run order: shows whether a large spread is one outlier or a bimodal cell.
void print_raw(const std::vector<cell>& cells) {
    fmt::print("\nEvery run, in run order (seconds; even runs started with pipescope):\n\n");
    bench::table t({"grain", "P", "version", "times"}, 3);
    for (const cell& c : cells) {
        t.add({c.grain, std::to_string(c.p), "serial loop", bench::fmt_samples(c.serial_runs)});
        t.add({c.grain, std::to_string(c.p), "pipescope", bench::fmt_samples(c.pipescope_runs)});
        t.add({c.grain, std::to_string(c.p), "oneTBB", bench::fmt_samples(c.tbb_runs)});
        t.add({c.grain, std::to_string(c.p), "round trip (ns)", bench::fmt_samples(c.round_trip_ns, 0)});
    }
    t.print();
}

}   // namespace

int main(int argc, char** argv) {
    settings cfg;
    const bool go = bench::parse_command_line(
        argc, argv, "Serial-parallel-serial pipeline: pipescope (PIPER) against oneTBB parallel_pipeline.",
        {{"--runs", "measured runs per cell and runtime (default 7)",
          [&](const std::string& v) { cfg.runs = unsigned(bench::parse_positive(v)); }},
         {"--workers", "thread counts P, comma-separated (default 1,2)",
          [&](const std::string& v) { cfg.workers = bench::parse_list(v); }},
         {"--grains-us", "target stage-1 work per item in microseconds (default 1,20)",
          [&](const std::string& v) { cfg.grains_us = bench::parse_list(v); }},
         {"--rounds", "fixed stage-1 rounds per item, comma-separated (overrides --grains-us)",
          [&](const std::string& v) { cfg.rounds = bench::parse_list(v); }},
         {"--items", "items per run (default: serial loop takes about --run-ms)",
          [&](const std::string& v) { cfg.items = bench::parse_positive(v); }},
         {"--run-ms", "target serial-loop time when --items is not given (default 300)",
          [&](const std::string& v) { cfg.run_ms = unsigned(bench::parse_positive(v)); }},
         {"--k-factor", "K = factor * P items in flight, for both runtimes (default 4)",
          [&](const std::string& v) { cfg.throttle_factor = unsigned(bench::parse_positive(v)); }},
         {"--settle-ms", "pause between measurements so idle threads go to sleep (default 20)",
          [&](const std::string& v) { cfg.settle_ms = std::stoi(v); }},
         {"--policy", "pipescope policy: piper (default), piper-earliest, tbb (declared filters, N = K tokens)",
          [&](const std::string& v) { cfg.policy = v; }},
         {"--raw", "also print every run's time, in run order", [&](const std::string&) { cfg.raw = true; }, false}});
    if (!go) return 0;

    fmt::print("bench_sps_vs_tbb: serial-parallel-serial pipeline, pipescope vs oneTBB {}.{}\n", TBB_VERSION_MAJOR,
               TBB_VERSION_MINOR);
    bench::print_machine();
    fmt::print("{} measured runs per cell and runtime after one warm-up, order alternating; K = {}*P\n", cfg.runs,
               cfg.throttle_factor);
    fmt::print("pipescope column: policy '{}'\n", cfg.policy);

    bench::print_conditions("conditions at start", *std::max_element(cfg.workers.begin(), cfg.workers.end()));
    fmt::print("\n");
    std::fflush(stdout);   // the header before the progress lines on stderr

    std::vector<cell> cells;
    for (const grain_spec& g : grain_specs(cfg)) {
        const workload w{cfg.items ? cfg.items : g.default_items, g.rounds};
        const std::uint64_t want = run_serial(w);   // also warms up the serial loop
        for (unsigned p : cfg.workers) {
            cell c{g.label, w, p, cfg.throttle_factor * p, {}, {}, {}, {}, {}, {}, {}};
            measure_cell(c, cfg, want);
            cells.push_back(c);
            fmt::print(stderr, "  grain {}, P={} done\n", g.label, p);
        }
    }

    bench::print_conditions("conditions at end", *std::max_element(cfg.workers.begin(), cfg.workers.end()));
    fmt::print("Times in seconds: median over the runs, (x%) = (max - min) / median.\n");
    fmt::print("ps/TBB = pipescope median / oneTBB median: below 1 means pipescope was faster.\n");
    fmt::print("grain = target stage-1 work per item; us/item = measured serial-loop time per item (all three\n"
               "stages); speedup = serial loop / pipeline.\n\n");
    print_cells(cells);
    if (cfg.raw) print_raw(cells);
    fmt::print("\nAll checksums matched the serial loop.\n");
    return 0;
}
