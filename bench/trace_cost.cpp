// What recording costs: nanoseconds per recorded event on the hot path, and run time with the
// recorder attached vs not for a coarse pipeline (pipe-fib-256) and a fine one (pipe-fib).
// A consumer thread drains full chunks (and discards them) so memory stays bounded, as the trace
// writer's thread will. Prints medians of several runs; asserts nothing about time.
#include "bench_common.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

using namespace pipescope;

namespace {

// Median and p99 of the per-event cost over batches of 1000 events, one writer, drained.
void per_event_cost(int runs) {
    std::vector<double> batch_ns;
    trace::recorder rec(1, 64u << 20);
    std::atomic<bool> stop{false};
    std::thread consumer([&] {
        while (!stop.load()) rec.drain([](unsigned, const trace::event_record*, std::size_t) {});
    });
    trace::event_buffer& buf = rec.buffer(0);
    for (int r = 0; r < runs; ++r)
        for (int batch = 0; batch < 2000; ++batch) {
            const auto t0 = bench::bench_clock::now();
            for (std::uint64_t i = 0; i < 1000; ++i) buf.record(trace::event_kind::node_begin, i, 3, 1);
            batch_ns.push_back(std::chrono::duration<double, std::nano>(bench::bench_clock::now() - t0).count() / 1000);
        }
    stop = true;
    consumer.join();
    std::sort(batch_ns.begin(), batch_ns.end());
    const double median = batch_ns[batch_ns.size() / 2];
    const double p99 = batch_ns[batch_ns.size() * 99 / 100];
    std::printf("recording, one writer: %.2f ns per event (median of %zu batches of 1000), p99 %.2f ns; dropped %llu\n",
                median, batch_ns.size(), p99, static_cast<unsigned long long>(rec.dropped_total()));
}

double run_pipe_fib(scheduler& s, unsigned n, unsigned bits, trace::recorder* rec) {
    std::atomic<bool> stop{false};
    std::uint64_t events = 0;
    std::thread consumer;
    if (rec) {
        s.attach_recorder(rec);
        consumer = std::thread([&] {
            auto sink = [&](unsigned, const trace::event_record*, std::size_t k) { events += k; };
            while (!stop.load()) rec->drain(sink);
        });
    }
    const double t = bench::time_seconds([&] { workloads::pipe_fib_pipeline(s, n, bits, {}); });
    if (rec) {
        s.attach_recorder(nullptr);
        stop = true;
        consumer.join();
        rec->flush([&](unsigned, const trace::event_record*, std::size_t k) { events += k; });
    }
    return t;
}

void overhead(unsigned workers, unsigned n, unsigned bits, int runs) {
    scheduler s({workers});
    std::vector<double> off, on;
    for (int r = 0; r < runs; ++r) {   // alternate, so drift hits both
        off.push_back(run_pipe_fib(s, n, bits, nullptr));
        trace::recorder rec(s.workers(), 64u << 20);
        on.push_back(run_pipe_fib(s, n, bits, &rec));
        if (rec.dropped_total()) std::printf("  (run %d dropped %llu events)\n", r, (unsigned long long)rec.dropped_total());
    }
    const auto a = bench::summarize(off), b = bench::summarize(on);
    std::printf("%-13s P=%u  tracing off %s   on %s   on/off %.3f\n", bits == 1 ? "pipe-fib" : "pipe-fib-256", workers,
                bench::fmt_time(a).c_str(), bench::fmt_time(b).c_str(), b.median / a.median);
}

}  // namespace

int main(int argc, char** argv) {
    int runs = 5;
    unsigned n = 30000;
    const bool go = bench::parse_command_line(
        argc, argv, "What recording costs: ns per event, and pipe-fib with tracing on vs off.",
        {{"--runs", "measured runs per cell (default 5)",
          [&](const std::string& v) { runs = static_cast<int>(bench::parse_positive(v)); }},
         {"--n", "compute F_n (default 30000)", [&](const std::string& v) { n = unsigned(bench::parse_positive(v)); }}});
    if (!go) return 0;
    bench::print_machine();
    per_event_cost(runs);
    for (unsigned p : {1u, 2u}) {
        overhead(p, n, 256, runs);
        overhead(p, n, 1, runs);
    }
}
