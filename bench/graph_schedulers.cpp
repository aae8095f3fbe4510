// bench_graph_schedulers — every stage-graph workload under every graph scheduler: time and peak
// footprint (seed 004 Table III: footprint; Fig. 6–7: time), side by side, and the serial reference.
//
// For each workload and scheduler the run is repeated --runs times (interleaved round-robin over the
// schedulers, so slow drift of the machine spreads evenly); the table gives the median time with the
// runs' spread, the ratio to the serial reference's median, and the peak footprint (packets and
// bytes in use in all queues at once). Every run's output is checked against the serial reference;
// a mismatch is reported in the table (and the exit status is 1). Nothing here asserts on time.
#include "bench_common.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/workload.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

namespace wl = pipescope::workloads;

struct settings {
    std::string size = "small";
    unsigned runs = 5;
    unsigned workers = 2;
    std::vector<std::string> only;   // workload names; empty: every graph workload
    int settle_ms = 20;
};

struct cell {
    std::vector<double> seconds, reference;
    std::size_t peak_packets = 0, peak_bytes = 0;
    bool mismatch = false;
};

std::string bytes_text(std::size_t b) {
    if (b >= 10u << 20) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
    if (b >= 10u << 10) return fmt::format("{:.1f} KiB", static_cast<double>(b) / (1 << 10));
    return std::to_string(b) + " B";
}

}   // namespace

int main(int argc, char** argv) {
    settings s;
    const std::vector<bench::option> options = {
        bench::size_option(s.size),
        bench::runs_option(s.runs),
        {"--workers", "P (default 2)", [&](const std::string& v) { s.workers = bench::parse_positive(v); }},
        bench::workload_option(s.only),
    };
    if (!bench::parse_command_line(argc, argv, "stage-graph workloads under every graph scheduler: time and peak footprint",
                                   options))
        return 0;

    std::vector<const wl::workload*> workloads;
    for (const wl::workload* w : wl::all_workloads()) {
        if (!w->is_graph() && !w->has_chain_graph()) continue;
        if (!s.only.empty() && std::find(s.only.begin(), s.only.end(), w->name()) == s.only.end()) continue;
        workloads.push_back(w);
    }
    const auto policies = pipescope::graph::policies();
    bench::print_machine();
    bench::print_conditions("before", s.workers);
    fmt::print("graph schedulers, size {}, P = {}, {} runs per point (median, spread = (max - min) / median)\n\n", s.size,
               s.workers, s.runs);

    pipescope::scheduler sched({s.workers});
    bool all_match = true;
    for (const wl::workload* w : workloads) {
        std::map<std::string, cell> cells;
        for (unsigned run = 0; run < s.runs; ++run) {
            for (const auto& p : policies) {
                fmt::print(stderr, "\r{}: run {}/{}, {:<14}", w->name(), run + 1, s.runs, p.name);
                wl::run_request r;
                r.policy = p.name;
                r.size = wl::parse_size(s.size);
                const wl::run_report rep = w->run(sched, r);
                cell& c = cells[p.name];
                c.seconds.push_back(rep.seconds);
                c.reference.push_back(rep.reference_seconds);
                c.mismatch |= !rep.matches_reference;
                if (rep.graph) {
                    c.peak_packets = std::max(c.peak_packets, rep.graph->peak_packets);
                    c.peak_bytes = std::max(c.peak_bytes, rep.graph->peak_bytes);
                }
                bench::settle(s.settle_ms);
            }
        }
        fmt::print(stderr, "\r{:>60}\r", "");
        std::vector<double> all_reference;
        for (const auto& [name, c] : cells)
            all_reference.insert(all_reference.end(), c.reference.begin(), c.reference.end());
        const bench::summary ref = bench::summarize(all_reference);
        fmt::print("{} — serial reference {} s\n", w->name(), bench::fmt_time(ref));
        bench::table t({"scheduler", "time s (spread)", "time / serial", "peak packets", "peak footprint", "output"});
        for (const auto& p : policies) {
            const cell& c = cells[p.name];
            const bench::summary sm = bench::summarize(c.seconds);
            t.add({p.name, bench::fmt_time(sm), bench::fmt_ratio(ref.median > 0 ? sm.median / ref.median : 0),
                   std::to_string(c.peak_packets), bytes_text(c.peak_bytes), c.mismatch ? "DIFFERS" : "ok"});
            all_match &= !c.mismatch;
        }
        t.print();
        fmt::print("\n");
    }
    bench::print_conditions("after", s.workers);
    return all_match ? 0 : 1;
}
