// bench_engine_cost, graph section: what the stage-graph engine costs per step.
//
// A chain whose stages do almost nothing, so that the time is the engine's:
//
//   source (serial) ─a─> add (parallel) ─b─> scale (parallel) ─c─> sink (serial)
//
// The source fills whole packets of 64-bit integers through reserve/commit windows, each parallel
// instance maps one packet into one packet, the sink sums what arrives (checked against the
// closed form, so a lost or doubled packet shows). With `packet` elements per packet and n
// elements, the run has 2·n/packet instances and a handful of serial resumptions per packet. The
// figure is time / instances: a graph instance's whole engine cost (reserve input and output,
// commit both, signal, schedule), plus a share of the serial stages' resumptions. The same
// arithmetic without the engine takes under 1 ns per element and is printed next to it.
#include "engine_cost.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

namespace {

namespace g = pipescope::graph;

struct chain {
    std::uint64_t elements = 0;
    std::size_t packet = 0;
    std::uint64_t sum = 0;   // the sink's result
};

// (i + 1) * 3 summed over i < n.
std::uint64_t expected_sum(std::uint64_t n) { return 3 * (n * (n + 1) / 2); }

g::program build(chain& c) {
    g::program p;
    const g::queue_shape shape{.packet_elements = c.packet, .capacity_packets = 8, .ordered = false};
    const auto a = p.add_queue<std::uint64_t>("a", shape);
    const auto b = p.add_queue<std::uint64_t>("b", shape);
    const auto q = p.add_queue<std::uint64_t>("c", shape);
    chain* st = &c;
    p.add_serial("source", {}, {a}, [st](g::thread_context& ctx) -> g::stage_task {
        for (std::uint64_t i = 0; i < st->elements;) {
            g::push_window w = co_await ctx.reserve(0);
            std::size_t n = 0;
            for (; n < w.capacity() && i < st->elements; ++n, ++i) w.at<std::uint64_t>(n) = i;
            ctx.commit(w, n);
        }
    });
    p.add_parallel("add", a, {{b, 1}}, [](g::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) + 1);
    });
    p.add_parallel("scale", b, {{q, 1}}, [](g::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) * 3);
    });
    p.add_serial("sink", {q}, {}, [st](g::thread_context& ctx) -> g::stage_task {
        for (;;) {
            g::pop_window w = co_await ctx.pop(0);
            if (!w) break;
            for (std::size_t i = 0; i < w.size(); ++i) st->sum += w.at<std::uint64_t>(i);
            ctx.commit(w);
        }
    });
    return p;
}

// CPU time of the whole process (every worker, spinning included), in seconds: at P = 2 a cost that
// moved from one worker's wall time into the other's spinning shows here.
double process_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return s(u.ru_utime) + s(u.ru_stime);
}

struct point {
    std::vector<double> ns_per_instance, ns_per_step, cpu_ns_per_instance;
    bool wrong = false;
};

}   // namespace

void print_graph_costs(const engine_cost_options& o) {
    const std::uint64_t elements = o.quick ? 1u << 16 : 1u << 21;
    std::vector<std::size_t> packets = {1, 16, 64};
    if (!o.packets.empty()) packets.assign(o.packets.begin(), o.packets.end());
    const std::vector<std::string> policies =
        o.policies.empty() ? std::vector<std::string>{"graph-serial", "gramps", "task-stealing", "danbi"} : o.policies;

    // The chain's arithmetic without the engine: the floor under every figure below.
    std::vector<double> plain;
    for (unsigned r = 0; r < o.runs; ++r) {
        volatile std::uint64_t sink = 0;
        plain.push_back(time_seconds([&] {
                            std::uint64_t s = 0;
                            for (std::uint64_t i = 0; i < elements; ++i) s += (i + 1) * 3;
                            sink = s;
                        }) *
                        1e9 / static_cast<double>(elements));
    }
    fmt::print("\n== stage graph: source | add | scale | sink, {} elements of 8 bytes; the same arithmetic in a "
               "plain loop: {:.2f} ns per element\n",
               static_cast<unsigned long long>(elements), summarize(plain).median);
    fmt::print("ns per instance = run time / parallel instances (two per packet); ns per step also counts the serial "
               "stages' resumptions;\nCPU ns per instance = the process's CPU time (every worker, spinning included) / "
               "parallel instances\n\n");

    for (unsigned p : o.workers) {
        pipescope::scheduler sched({p});
        std::vector<std::vector<point>> cells(packets.size(), std::vector<point>(policies.size()));
        for (unsigned r = 0; r < o.runs; ++r) {
            for (std::size_t k = 0; k < packets.size(); ++k) {
                for (std::size_t j = 0; j < policies.size(); ++j) {
                    chain c{elements, packets[k], 0};
                    const g::program prog = build(c);
                    g::run_options ro;
                    ro.policy = policies[j];
                    g::run_stats stats;
                    const double cpu0 = process_cpu_seconds();
                    const double s = time_seconds([&] { stats = g::run(sched, prog, ro); });
                    const double cpu = process_cpu_seconds() - cpu0;
                    point& pt = cells[k][j];
                    pt.wrong |= c.sum != expected_sum(elements);
                    pt.ns_per_instance.push_back(s * 1e9 / static_cast<double>(stats.instances));
                    pt.cpu_ns_per_instance.push_back(cpu * 1e9 / static_cast<double>(stats.instances));
                    pt.ns_per_step.push_back(s * 1e9 / static_cast<double>(stats.instances + stats.resumptions));
                    settle(o.settle_ms);
                }
            }
        }
        table t({"P", "packet", "policy", "ns / instance (spread)", "ns / step (spread)", "CPU ns / instance", "result"}, 3);
        for (std::size_t k = 0; k < packets.size(); ++k) {
            if (k) t.separator();
            for (std::size_t j = 0; j < policies.size(); ++j) {
                const point& pt = cells[k][j];
                const summary a = summarize(pt.ns_per_instance), b = summarize(pt.ns_per_step),
                              c = summarize(pt.cpu_ns_per_instance);
                t.add({std::to_string(p), std::to_string(packets[k]), policies[j],
                       fmt::format("{:.0f} ({})", a.median, num::percent(a.rel_spread())),
                       fmt::format("{:.0f} ({})", b.median, num::percent(b.rel_spread())),
                       fmt::format("{:.0f} ({})", c.median, num::percent(c.rel_spread())), pt.wrong ? "WRONG" : "ok"});
            }
        }
        t.print();
        fmt::print("\n");
    }
}

}   // namespace bench
