// bench_pipe_fib — seed 001 Fig. 14 on this machine.
//
// pipe-fib computes F_n in binary by repeated ripple-carry addition; every stage starts with a
// stage_wait, so it measures what a cross-edge check costs. pipe-fib uses one bit per stage,
// pipe-fib-256 coarsens to 256 bits. Each program runs with dynamic dependency folding off and on.
//
// For every row we report T_S (the plain serial program, no runtime), T_1 and T_P (PIPER on a
// scheduler of P workers, K = 4P, lazy enabling on), and the paper's derived columns:
// serial overhead T_1/T_S, scalability T_1/T_P and speedup T_S/T_P. One more row runs with lazy
// enabling off (eager check-right) for information.
//
// Runs are interleaved round-robin over all rows, so slow drift of the machine (frequency,
// neighbours) spreads evenly over the rows instead of biasing whichever ran last.
#include "bench_common.hpp"

#include <pipescope/pipeline.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace num = pipescope::analysis::numbers;

namespace wl = pipescope::workloads;

struct settings {
    unsigned n = 45000;   // T_S about 0.4 s on a 2.6 GHz EPYC (work grows as n^2)
    unsigned runs = 5;
    std::vector<unsigned> workers = {1, 2};
    int settle_ms = 20;
    bool raw = false;   // also print every sample
};

// One row of the table: which program, with which runtime switches.
struct row_config {
    std::string program;
    unsigned bits_per_stage;
    bool folding;
    bool lazy;
};

const std::vector<row_config> rows = {
    {"pipe-fib", 1, false, true},      {"pipe-fib-256", 256, false, true}, {"pipe-fib", 1, true, true},
    {"pipe-fib-256", 256, true, true}, {"pipe-fib", 1, true, false},   // information only: eager check-right instead of lazy enabling
};

pipescope::pipeline_options options_for(const row_config& row) {
    pipescope::pipeline_options o;
    o.policy = "piper";
    o.throttle = 0;   // the default, K = 4P
    o.dependency_folding = row.folding;
    o.lazy_enabling = row.lazy;
    return o;
}

// One scheduler per worker count, created once and reused by every run with that P.
using scheduler_set = std::map<unsigned, std::unique_ptr<pipescope::scheduler>>;

scheduler_set make_schedulers(const std::vector<unsigned>& workers) {
    scheduler_set s;
    for (unsigned p : workers) s.emplace(p, std::make_unique<pipescope::scheduler>(pipescope::scheduler_options{p}));
    return s;
}

// Exits with status 1 when the pipeline disagrees with the serial program: a benchmark of a
// wrong answer is worthless.
void check_result(const wl::fib_bits& got, const wl::fib_bits& want, const row_config& row, unsigned p, unsigned n) {
    if (got == want) return;
    fmt::print(stderr, "MISMATCH: {} (folding {}, lazy {}) on P={}, n={}: {} bits, serial has {} bits\n", row.program,
               row.folding ? "on" : "off", row.lazy ? "on" : "off", p, n, got.size(), want.size());
    std::exit(1);
}

// Runs one pipeline, checks it, and returns its time.
double run_pipeline(pipescope::scheduler& s, const row_config& row, unsigned n, const wl::fib_bits& want,
                    pipescope::pipeline_stats* stats) {
    wl::fib_bits got;
    const double t =
        bench::time_seconds([&] { got = wl::pipe_fib_pipeline(s, n, row.bits_per_stage, options_for(row), stats); });
    check_result(got, want, row, s.workers(), n);
    return t;
}

// One unmeasured pass over every row at a smaller n: faults in the pages, wakes the workers and
// fills the frame caches, and checks correctness once more on a different input.
void warm_up(scheduler_set& scheds, unsigned n) {
    const unsigned small = std::max(3u, n / 4);
    const wl::fib_bits want = wl::pipe_fib_serial(small);
    for (const auto& row : rows)
        for (auto& [p, s] : scheds) run_pipeline(*s, row, small, want, nullptr);
}

struct measurements {
    std::vector<double> round_trip_ns;   // measured before each round: the host may move the vCPUs
    std::vector<double> serial;
    // [row][P] -> one time per run
    std::vector<std::map<unsigned, std::vector<double>>> pipeline;
    // [row][P] -> counters of the last run
    std::vector<std::map<unsigned, pipescope::pipeline_stats>> stats;
};

measurements measure(scheduler_set& scheds, const settings& cfg, const wl::fib_bits& want) {
    measurements m;
    m.pipeline.resize(rows.size());
    m.stats.resize(rows.size());
    for (unsigned run = 0; run < cfg.runs; ++run) {
        m.round_trip_ns.push_back(bench::core_round_trip_ns());
        m.serial.push_back(bench::time_seconds([&] {
            const auto bits = wl::pipe_fib_serial(cfg.n);
            if (bits.size() != want.size()) std::exit(1);   // keeps the call from being optimized out
        }));
        bench::settle(cfg.settle_ms);
        for (std::size_t r = 0; r < rows.size(); ++r) {
            for (auto& [p, s] : scheds) {
                m.pipeline[r][p].push_back(run_pipeline(*s, rows[r], cfg.n, want, &m.stats[r][p]));
                bench::settle(cfg.settle_ms);
            }
        }
        fmt::print(stderr, "  run {}/{} done\n", run + 1, cfg.runs);
    }
    return m;
}

// The Fig. 14 table: times (median and relative spread) and the three derived ratios.
void print_times(const measurements& m, const settings& cfg) {
    std::vector<unsigned> parallel;   // the P > 1 columns
    for (unsigned p : cfg.workers)
        if (p > 1) parallel.push_back(p);

    std::vector<std::string> header = {"Program", "Folding", "Lazy", "T_S", "T_1"};
    for (unsigned p : parallel) header.push_back("T_" + std::to_string(p));
    header.push_back("T_1/T_S");
    for (unsigned p : parallel) header.push_back("T_1/T_" + std::to_string(p));
    for (unsigned p : parallel) header.push_back("T_S/T_" + std::to_string(p));
    bench::table t(header, 3);

    const bench::summary ts = bench::summarize(m.serial);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (!rows[r].lazy) t.separator();   // the information-only row stands apart
        const bench::summary t1 = bench::summarize(m.pipeline[r].at(1));
        std::vector<std::string> line = {rows[r].program, rows[r].folding ? "yes" : "no", rows[r].lazy ? "yes" : "no",
                                         bench::fmt_time(ts), bench::fmt_time(t1)};
        std::map<unsigned, bench::summary> tp;
        for (unsigned p : parallel) {
            tp[p] = bench::summarize(m.pipeline[r].at(p));
            line.push_back(bench::fmt_time(tp[p]));
        }
        line.push_back(bench::fmt_ratio(t1.median / ts.median));
        for (unsigned p : parallel) line.push_back(bench::fmt_ratio(t1.median / tp[p].median));
        for (unsigned p : parallel) line.push_back(bench::fmt_ratio(ts.median / tp[p].median));
        t.add(line);
    }
    t.print();
}

// What the runtime counted in the last run of each row: explains where time went (e.g. how many
// cross-edge checks found the predecessor behind and had to suspend).
void print_stats(const measurements& m) {
    bench::table t({"Program", "Folding", "Lazy", "P", "K", "iterations", "suspensions", "susp/iter", "throttle waits",
                    "tail swaps", "peak live"},
                   3);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        for (const auto& [p, st] : m.stats[r]) {
            t.add({rows[r].program, rows[r].folding ? "yes" : "no", rows[r].lazy ? "yes" : "no", std::to_string(p),
                   std::to_string(st.throttle), std::to_string(st.iterations), std::to_string(st.suspensions),
                   num::fixed(st.iterations ? double(st.suspensions) / double(st.iterations) : 0.0, 3),
                   std::to_string(st.throttle_waits), std::to_string(st.tail_swaps), std::to_string(st.peak_live)});
        }
    }
    t.print();
}

// Every sample in run order: shows whether a large spread is one outlier or a bimodal cell.
void print_raw(const measurements& m) {
    fmt::print("\nEvery run, in run order (seconds):\n\n");
    bench::table t({"Program", "Folding", "Lazy", "P", "times"}, 3);
    t.add({"serial program", "", "", "", bench::fmt_samples(m.serial)});
    t.add({"core round trip (ns)", "", "", "", bench::fmt_samples(m.round_trip_ns, 0)});
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (const auto& [p, samples] : m.pipeline[r])
            t.add({rows[r].program, rows[r].folding ? "yes" : "no", rows[r].lazy ? "yes" : "no", std::to_string(p),
                   bench::fmt_samples(samples)});
    t.print();
}

}   // namespace

int main(int argc, char** argv) {
    settings cfg;
    const bool go = bench::parse_command_line(
        argc, argv, "Reproduces seed 001 Fig. 14 (pipe-fib, dependency folding) on this machine.",
        {{"--n", "compute F_n (default 45000)", [&](const std::string& v) { cfg.n = unsigned(bench::parse_positive(v)); }},
         {"--runs", "measured runs per cell (default 5)",
          [&](const std::string& v) { cfg.runs = unsigned(bench::parse_positive(v)); }},
         {"--workers", "worker counts P, comma-separated (default 1,2; 1 is always added)",
          [&](const std::string& v) { cfg.workers = bench::parse_list(v); }},
         {"--settle-ms", "pause between measurements so idle workers park (default 20)",
          [&](const std::string& v) { cfg.settle_ms = std::stoi(v); }},
         {"--raw", "also print every run's time, in run order", [&](const std::string&) { cfg.raw = true; }, false}});
    if (!go) return 0;
    // T_1 is needed for the overhead and scalability columns, whatever the user asked for.
    if (std::find(cfg.workers.begin(), cfg.workers.end(), 1u) == cfg.workers.end()) cfg.workers.push_back(1);
    std::sort(cfg.workers.begin(), cfg.workers.end());
    cfg.workers.erase(std::unique(cfg.workers.begin(), cfg.workers.end()), cfg.workers.end());

    fmt::print("bench_pipe_fib: seed 001 Fig. 14 on this machine\n");
    bench::print_machine();
    fmt::print("n = {}, {} runs per cell (interleaved), policy piper, K = 4P\n", cfg.n, cfg.runs);

    const wl::fib_bits want = wl::pipe_fib_serial(cfg.n);
    fmt::print("F_{} has {} bits\n", cfg.n, want.size());

    bench::print_conditions("conditions at start", cfg.workers.back());
    fmt::print("\n");
    std::fflush(stdout);   // the header before the progress lines on stderr

    scheduler_set scheds = make_schedulers(cfg.workers);
    warm_up(scheds, cfg.n);
    const measurements m = measure(scheds, cfg, want);

    bench::print_conditions("conditions at end", cfg.workers.back());
    fmt::print("Times in seconds: median over {} runs, (x%) = (max - min) / median.\n", cfg.runs);
    fmt::print("T_1/T_S = serial overhead, T_1/T_P = scalability, T_S/T_P = speedup.\n\n");
    print_times(m, cfg);
    fmt::print("\nRuntime counters of the last run of each cell:\n\n");
    print_stats(m);
    if (cfg.raw) print_raw(m);
    fmt::print("\nAll pipeline results matched the serial program.\n");
    return 0;
}
