// bench_engine_cost, pipeline section: what pipe_while costs per stage boundary and what
// bind-to-stage costs per queue hand-off.
//
// 1. Stage boundaries under piper (K = 4P, lazy enabling, folding: the defaults).
//    * empty stages: N iterations of S stages, every stage a stage_wait followed by one step of a
//      serial recurrence (the same step as the plain loop, so the only difference is the engine);
//    * pipe-fib (one bit per stage, the program of bench_pipe_fib): T_P − T_S over its boundaries.
//    Figure: (T_P − T_S) / boundaries. At P = 1 that is the engine's cost per boundary; at P = 2 it
//    is what a boundary costs the caller in wall-clock time (negative once parallelism pays).
//    A second figure uses process CPU time, (CPU_P − CPU_S) / boundaries: at P = 1 it is immune to
//    other processes taking the core (the waiting caller sleeps); at P = 2 it also counts what the
//    second worker spends spinning and stealing.
// 2. Hand-offs under bind-to-stage: N items through S = 4 declared stages (serial in order,
//    parallel, parallel, serial in order — dedup's shape) with c = P threads per parallel stage and
//    a few ns of work per stage, against the same stage functions in a plain loop. Figure:
//    (T − T_S) / (N · (S − 1)), per item per queue.
// Medians of o.runs runs, spread = (max − min) / median; runs interleaved over the cells.
#include "engine_cost.hpp"

#include <pipescope/pipeline.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bench {

namespace {

namespace wl = pipescope::workloads;
using pipescope::iteration;
using pipescope::pipe_task;

double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One step of the work every stage does: a serial recurrence, so the compiler cannot fold steps.
inline std::uint64_t step(std::uint64_t x, std::uint64_t i, std::uint64_t j) {
    return (x ^ (i + j)) * 0x9E3779B97F4A7C15ull;
}

// A measured program: runs once, returns its checksum (compared against the serial one).
struct cell {
    std::string name;
    unsigned p = 0;   // 0: the serial program
    std::function<std::uint64_t()> run;
    std::vector<double> wall, cpu;
};

struct group {
    std::string title;
    double steps = 0;          // boundaries or hand-offs per run
    std::vector<cell> cells;   // cells[0] is the serial program
};

bool measure(group& g, const engine_cost_options& o) {
    const std::uint64_t want = g.cells[0].run();   // warm-up and reference
    for (std::size_t c = 1; c < g.cells.size(); ++c)
        if (g.cells[c].run() != want) {
            fmt::print("  {}: {} gave a different result from the serial program\n", g.title, g.cells[c].name);
            return false;
        }
    for (unsigned r = 0; r < o.runs; ++r)
        for (std::size_t k = 0; k < g.cells.size(); ++k) {
            cell& c = g.cells[(k + r) % g.cells.size()];   // each round starts one cell further on
            std::uint64_t got = 0;
            const double cpu0 = process_cpu_seconds();
            c.wall.push_back(time_seconds([&] { got = c.run(); }));
            c.cpu.push_back(process_cpu_seconds() - cpu0);
            if (got != want) {
                fmt::print("  {}: {} gave a different result from the serial program\n", g.title, c.name);
                return false;
            }
            settle(o.settle_ms);
        }
    return true;
}

// ns per step from the paired samples of a cell and the serial cell (median, with the spread of
// the per-round differences).
std::string ns_per_step(const std::vector<double>& t, const std::vector<double>& ts, double steps) {
    std::vector<double> d;
    for (std::size_t r = 0; r < t.size() && r < ts.size(); ++r) d.push_back((t[r] - ts[r]) * 1e9 / steps);
    const summary s = summarize(d);
    return fmt::format("{} ({})", num::fixed(s.median, 2),
                       num::percent(s.median != 0 ? (s.max - s.min) / std::fabs(s.median) : 0.0));
}

void print_group(const group& g) {
    fmt::print("\n{} — {:.3g} steps per run\n", g.title, g.steps);
    table t({"program", "P", "wall s (spread)", "CPU s (spread)", "ns/step wall", "ns/step CPU"}, 1);
    const cell& serial = g.cells[0];
    for (const cell& c : g.cells) {
        const bool base = &c == &serial;
        t.add({c.name, c.p ? std::to_string(c.p) : "-", fmt_time(summarize(c.wall)), fmt_time(summarize(c.cpu)),
               base ? "-" : ns_per_step(c.wall, serial.wall, g.steps),
               base ? "-" : ns_per_step(c.cpu, serial.cpu, g.steps)});
    }
    t.print();
}

// ---------------------------------------------------------------------------------------------
// pipe_while: empty stages

std::uint64_t fold(const std::vector<std::uint64_t>& x) {
    std::uint64_t h = 0;
    for (std::uint64_t v : x) h = step(h, v, 0);
    return h;
}

std::uint64_t empty_serial(std::uint64_t n, std::uint64_t stages) {
    std::vector<std::uint64_t> x(stages + 1, 1);
    for (std::uint64_t i = 0; i < n; ++i)
        for (std::uint64_t j = 1; j <= stages; ++j) x[j] = step(x[j], i, j);
    return fold(x);
}

// Every stage waits for the same stage of the previous iteration, then takes one step of stage
// j's recurrence x[j] (as pipe-fib's stage j owns bit j): only the stage_waits keep it right.
std::uint64_t empty_pipeline(pipescope::scheduler& s, std::uint64_t n, std::uint64_t stages) {
    std::vector<std::uint64_t> x(stages + 1, 1);
    std::uint64_t next = 0;
    pipescope::pipe_while(
        s, [&] { return next < n; },
        [&](iteration& it) -> pipe_task {
            const std::uint64_t i = next++;
            std::uint64_t* xs = x.data();
            for (std::uint64_t j = 1; j <= stages; ++j) {
                co_await it.stage_wait(j);
                xs[j] = step(xs[j], i, j);
            }
        });
    return fold(x);
}

// ---------------------------------------------------------------------------------------------
// bind-to-stage: cheap stages

struct item_state {
    std::uint64_t v = 0;
};

// dedup's shape: S P P S. Stage work is one step each; the output stage folds in order.
std::uint64_t handoff_serial(std::uint64_t n) {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t v = step(i, i, 0);
        v = step(v, i, 1);
        v = step(v, i, 2);
        sum = step(sum, v, 3);
    }
    return sum;
}

std::uint64_t handoff_pipeline(pipescope::scheduler& s, std::uint64_t n, unsigned c) {
    using pipescope::stage_kind;
    pipescope::pipeline_options o;
    o.policy = "bind-to-stage";
    o.stage_threads = c;
    o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::parallel,
                         stage_kind::serial_in_order};
    std::uint64_t sum = 0;
    std::uint64_t next = 0;
    pipescope::pipe_while(
        s, [&] { return next < n; },
        [&](iteration& it) -> pipe_task {
            const std::uint64_t i = next++;
            std::uint64_t v = step(i, i, 0);
            co_await it.stage(1);
            v = step(v, i, 1);
            co_await it.stage(2);
            v = step(v, i, 2);
            co_await it.stage_wait(3);
            sum = step(sum, v, 3);
        },
        o);
    return sum;
}

// Boundaries of pipe_fib_pipeline(n, 1 bit per stage): iteration k-3 (computing F_k) has one stage
// per bit of F_k plus its first and final boundaries. bits(F_k) = floor(log2 F_k) + 1 with
// F_k ≈ φ^k / √5; off by one at most now and then, which does not matter at this size.
double pipe_fib_boundaries(unsigned n) {
    const double log2_phi = std::log2((1 + std::sqrt(5.0)) / 2), log2_sqrt5 = std::log2(std::sqrt(5.0));
    double total = 0;
    for (unsigned k = 3; k <= n; ++k) total += std::floor(k * log2_phi - log2_sqrt5) + 1 + 1;
    return total;
}

std::uint64_t fib_checksum(const wl::fib_bits& b) {
    std::uint64_t h = b.size();
    for (std::uint8_t x : b) h = h * 3 + x;
    return h;
}

}   // namespace

void print_pipeline_costs(const engine_cost_options& o) {
    std::map<unsigned, std::unique_ptr<pipescope::scheduler>> scheds;
    for (unsigned p : o.workers) scheds.emplace(p, std::make_unique<pipescope::scheduler>(pipescope::scheduler_options{p}));
    fmt::print("\n== pipe_while: cost per stage boundary (piper, K = 4P, lazy enabling, folding) ==\n");
    fmt::print("ns/step = (T_P - T_S) / boundaries; CPU: the same with process CPU time\n");

    const std::uint64_t n_empty = o.quick ? 20'000 : 200'000, stages = 64;
    group empty{"empty stages: " + std::to_string(n_empty) + " iterations x " + std::to_string(stages) + " stage_waits",
                double(n_empty) * double(stages + 1),
                {}};
    empty.cells.push_back({"plain loop", 0, [=] { return empty_serial(n_empty, stages); }, {}, {}});
    for (auto& [p, s] : scheds)
        empty.cells.push_back({"pipe_while", p, [=, sp = s.get()] { return empty_pipeline(*sp, n_empty, stages); }, {}, {}});
    if (measure(empty, o)) print_group(empty);

    const unsigned n_fib = o.quick ? 6000 : 20000;
    group fib{"pipe-fib, n = " + std::to_string(n_fib) + ", 1 bit per stage", pipe_fib_boundaries(n_fib), {}};
    fib.cells.push_back({"pipe_fib_serial", 0, [=] { return fib_checksum(wl::pipe_fib_serial(n_fib)); }, {}, {}});
    for (auto& [p, s] : scheds)
        fib.cells.push_back(
            {"pipe-fib",
             p,
             [=, sp = s.get()] { return fib_checksum(wl::pipe_fib_pipeline(*sp, n_fib, 1, pipescope::pipeline_options{})); },
             {},
             {}});
    if (measure(fib, o)) print_group(fib);

    fmt::print("\n== bind-to-stage: cost per queue hand-off (S P P S, c = P, Queue_size 20) ==\n");
    fmt::print("ns/step = (T - T_S) / (items x 3 queues)\n");
    const std::uint64_t n_items = o.quick ? 20'000 : 200'000;
    group hand{"cheap stages: " + std::to_string(n_items) + " items", double(n_items) * 3, {}};
    hand.cells.push_back({"plain loop", 0, [=] { return handoff_serial(n_items); }, {}, {}});
    for (auto& [p, s] : scheds)
        hand.cells.push_back(
            {"bind-to-stage", p, [=, sp = s.get(), c = p] { return handoff_pipeline(*sp, n_items, c); }, {}, {}});
    if (measure(hand, o)) print_group(hand);
}

}   // namespace bench
