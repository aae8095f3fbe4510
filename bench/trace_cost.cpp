// bench_trace_cost — what tracing costs.
//
//   1. ns per recorded event on the hot path (median and p99 over batches of 1000), with one
//      thread recording and with every hardware thread recording at once;
//   2. run time with tracing off vs on, for fine-grained pipe-fib (one bit per stage), pipe-fib-256
//      and a coarse serial–parallel–serial pipeline (50 µs per item), on P = 1 and 2 workers.
//      "record": a consumer drains full chunks and discards them (the recording cost alone);
//      "record+write": the CLI's path (trace_session), the streaming Perfetto writer compressing into a file.
//      Both drain as the CLI does (trace::drain_thread: lazily, when half the pool is full), so a
//      run whose events fit in half the pool is timed without the writer at work;
//   3. the writer: bytes per event with and without compression (at each level of --levels), and
//      events converted (and compressed) per second. --writer-only runs this section alone.
// Prints medians of several runs with their spread; asserts nothing about time.
#include "bench_common.hpp"
#include "sps_pipeline.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/drain_thread.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace_session.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace pipescope;

namespace {

// ---------------------------------------------------------------------------------------------
// 1. The hot path

void per_event_cost(unsigned writers, int runs) {
    trace::recorder rec(writers, 64u << 20);
    std::atomic<bool> stop{false};
    std::thread consumer([&] {
        while (!stop.load())
            if (rec.drain([](unsigned, const trace::event_record*, std::size_t) {}) == 0)
                std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    std::vector<std::vector<double>> batch_ns(writers);
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < writers; ++w)
        threads.emplace_back([&, w] {
            trace::event_buffer& buf = rec.buffer(w);
            for (int r = 0; r < runs; ++r)
                for (int batch = 0; batch < 2000; ++batch) {
                    const auto t0 = bench::bench_clock::now();
                    for (std::uint64_t i = 0; i < 1000; ++i) buf.record(trace::event_kind::node_begin, i, 3, 1);
                    batch_ns[w].push_back(std::chrono::duration<double, std::nano>(bench::bench_clock::now() - t0).count() /
                                          1000);
                }
        });
    for (auto& t : threads) t.join();
    stop = true;
    consumer.join();
    std::vector<double> all;
    for (const auto& b : batch_ns) all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end());
    fmt::print("  {} thread{} recording: {:.2f} ns per event (median of {} batches of 1000), p99 {:.2f} ns; dropped {}\n",
               writers, writers == 1 ? " " : "s", all[all.size() / 2], all.size(), all[all.size() * 99 / 100],
               static_cast<unsigned long long>(rec.dropped_total()));
}

// What it costs to read the clock alone, for comparison: the floor of any timestamped record.
void clock_cost() {
    std::uint64_t sink = 0;
    const int n = 10'000'000;
    const double t = bench::time_seconds([&] {
        for (int i = 0; i < n; ++i) sink += trace::now_ticks();
    });
    fmt::print("  reading the clock alone (now_ticks): {:.2f} ns{}\n", t * 1e9 / n, sink == 42 ? " " : "");
}

// ---------------------------------------------------------------------------------------------
// 2. Tracing off vs on

enum class tracing { off, record, record_and_write };

struct program {
    const char* name;
    std::function<void(scheduler&)> run;
};

struct traced_run {
    double seconds = 0;
    std::uint64_t events = 0, dropped = 0;
};

traced_run run_once(scheduler& s, const program& p, tracing mode) {
    traced_run out;
    if (mode == tracing::off) {
        out.seconds = bench::time_seconds([&] { p.run(s); });
        return out;
    }
    if (mode == tracing::record_and_write) {   // what `pipescope run -o` and PIPESCOPE_TRACE do
        const auto path = std::filesystem::temp_directory_path() / "pipescope-bench-trace-cost.pftrace";
        trace_session session(s, path, {.name = p.name, .loops_are_runs = false});
        session.begin_run({.name = p.name, .metadata_json = "{}"});
        out.seconds = bench::time_seconds([&] { p.run(s); });
        session.end_run();
        session.close();
        out.events = session.stats().records;
        out.dropped = session.dropped_events();
        std::filesystem::remove(path);
        return out;
    }
    // Recording alone: the same lazy drain into a sink that discards.
    trace::recorder rec(s.workers(), 64u << 20);
    const trace::recorder::sink_fn sink = [&](unsigned, const trace::event_record*, std::size_t k) { out.events += k; };
    s.attach_recorder(&rec);
    std::optional<trace::drain_thread> consumer(std::in_place, rec, sink);
    out.seconds = bench::time_seconds([&] { p.run(s); });
    s.attach_recorder(nullptr);
    consumer->stop();
    rec.flush(sink);
    out.dropped = rec.dropped_total();
    return out;
}

void overhead(const program& p, unsigned workers, int runs) {
    scheduler s({workers});
    std::vector<double> off, rec, write;
    std::uint64_t events = 0, dropped = 0;
    p.run(s);                          // warm up
    for (int r = 0; r < runs; ++r) {   // interleaved, so drift hits every column
        off.push_back(run_once(s, p, tracing::off).seconds);
        const auto a = run_once(s, p, tracing::record);
        rec.push_back(a.seconds);
        const auto b = run_once(s, p, tracing::record_and_write);
        write.push_back(b.seconds);
        events = a.events;
        dropped += a.dropped + b.dropped;
    }
    const auto o = bench::summarize(off), a = bench::summarize(rec), b = bench::summarize(write);
    fmt::print("  {:<13} P={}  off {}  record {} ({:.3f}x)  record+write {} ({:.3f}x)  {:.1f}M events/run{}\n", p.name,
               workers, bench::fmt_time(o), bench::fmt_time(a), a.median / o.median, bench::fmt_time(b), b.median / o.median,
               static_cast<double>(events) / 1e6, dropped ? "  (some runs dropped events)" : "");
}

// ---------------------------------------------------------------------------------------------
// 3. The writer

// Converts the same recorded chunks (a pipe-fib-64 run) plain and at each compression level, the
// configurations interleaved within each round so that a noisy machine slows them alike.
void writer_cost(int runs, const std::vector<int>& levels) {
    scheduler s({2});
    trace::recorder rec(s.workers(), std::size_t{1} << 30);
    s.attach_recorder(&rec);
    pipeline_options o;
    o.throttle = 4;
    workloads::pipe_fib_pipeline(s, 20000, 64, o);
    s.attach_recorder(nullptr);
    std::vector<std::pair<unsigned, std::vector<trace::event_record>>> chunks;
    std::uint64_t events = 0;
    rec.flush([&](unsigned w, const trace::event_record* r, std::size_t n) {
        chunks.push_back({w, {r, r + n}});
        events += n;
    });
    const trace::tick_converter conv(rec.start_clock(), trace::clock_sample::take());
    const auto path = std::filesystem::temp_directory_path() / "pipescope-bench-writer.pftrace";
    struct config {
        bool compress;
        int level;
        std::vector<double> seconds;
        std::uint64_t bytes = 0;
    };
    std::vector<config> configs{{false, 1, {}}};
    for (const int level : levels) configs.push_back({true, level, {}});
    for (int r = 0; r < runs; ++r) {
        for (auto& c : configs) {
            trace::perfetto_writer w(path, {c.compress, c.level});
            c.seconds.push_back(bench::time_seconds([&] {
                w.begin_run({"pipe-fib-64", 2, "{}", {}}, trace::run_clock::fixed(conv, rec.start_clock().ticks));
                for (const auto& [worker, rs] : chunks) w.add_chunk(worker, rs.data(), rs.size());
                w.end_run();
                w.finish();
            }));
            c.bytes = w.stats().bytes;
        }
    }
    for (const auto& c : configs) {
        const auto t = bench::summarize(c.seconds);
        const std::string name = c.compress ? "level " + std::to_string(c.level) : "plain";
        fmt::print(
            "  {:<10} {:.2f} bytes per event, {:.1f} M events/s converted (min {:.1f}, max {:.1f}; {} for {:.2f}M events)\n",
            name, static_cast<double>(c.bytes) / static_cast<double>(events), static_cast<double>(events) / t.median / 1e6,
            static_cast<double>(events) / t.max / 1e6, static_cast<double>(events) / t.min / 1e6, bench::fmt_time(t),
            static_cast<double>(events) / 1e6);
    }
    std::filesystem::remove(path);
}

}   // namespace

int main(int argc, char** argv) {
    int runs = 5;
    unsigned n = 30000;
    bool writer_only = false;
    std::vector<int> levels{1};
    const bool go = bench::parse_command_line(
        argc, argv, "What tracing costs: ns per event, run time with tracing off/on, the writer's bytes and speed.",
        {{"--runs", "measured runs per cell (default 5)",
          [&](const std::string& v) { runs = static_cast<int>(bench::parse_positive(v)); }},
         {"--n", "pipe-fib computes F_n (default 30000)",
          [&](const std::string& v) { n = unsigned(bench::parse_positive(v)); }},
         {"--writer-only", "run section 3 (the writer) only", [&](const std::string&) { writer_only = true; }, false},
         {"--levels", "compression levels section 3 measures, e.g. 1,6,9 (default 1)", [&](const std::string& v) {
              levels.clear();
              for (std::size_t at = 0; at <= v.size();) {
                  const std::size_t comma = std::min(v.find(',', at), v.size());
                  const auto level = bench::parse_positive(v.substr(at, comma - at));
                  if (level > 9) throw std::invalid_argument("levels are 1..9");
                  levels.push_back(static_cast<int>(level));
                  at = comma + 1;
              }
          }}});
    if (!go) return 0;
    bench::print_machine();

    if (!writer_only) {
        fmt::print("\n1. recording, per event\n");
        clock_cost();
        per_event_cost(1, runs);
        const unsigned hw = std::max(2u, std::thread::hardware_concurrency());
        per_event_cost(hw, runs);

        fmt::print("\n2. run time, tracing off vs on (median (spread) of {} runs)\n", runs);
        const unsigned rounds = bench::sps::calibrate_rounds(50.0);
        const bench::sps::workload coarse{4000, rounds};
        const std::uint64_t coarse_checksum = bench::sps::run_serial(coarse);
        const std::vector<program> programs = {
            {"sps-50us",
             [&](scheduler& s) {
                 std::vector<bench::sps::work_item> ring(4 * s.workers());
                 if (bench::sps::run_pipescope(s, coarse, ring) != coarse_checksum) std::abort();
             }},
            {"pipe-fib-256", [&](scheduler& s) { workloads::pipe_fib_pipeline(s, n, 256, {}); }},
            {"pipe-fib", [&](scheduler& s) { workloads::pipe_fib_pipeline(s, n, 1, {}); }},
        };
        for (const auto& p : programs)
            for (unsigned workers : {1u, 2u}) overhead(p, workers, runs);
    }

    fmt::print("\n3. the Perfetto writer (a pipe-fib-64 run with K=4 on 2 workers; median of {} interleaved runs)\n", runs);
    writer_cost(runs, levels);
}
