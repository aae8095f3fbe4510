// How fast a pipescope trace is read back: events per second for decoding alone
// (decode_perfetto with a visitor that only counts) and for the full load_trace (the trace model,
// slice matching, flows, runs and the pipeline DAG), on a compressed (the writer's default: zlib
// compressed_packets) and on a plain file. The synthetic trace is written by the real
// perfetto_writer from synthetic event_records (a pipe-fib-like run: three stages per iteration,
// stage waits, line and counter tracks, now and then idle time and a steal), so it has the layout
// and the encoding of real files. A real trace can be measured as well with --file.
// Prints medians of several runs with their spread, by wall time and by CPU time (the latter less
// disturbed on a shared machine); asserts nothing about time.
#include "bench_common.hpp"

#include <pipescope/trace/clock.hpp>
#include <pipescope/trace/events.hpp>
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace pipescope;
using trace::event_kind;
using trace::event_record;

namespace {

namespace num = pipescope::analysis::numbers;

event_record rec(std::uint64_t ticks, event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0,
                 std::uint16_t d = 0) {
    return event_record{ticks, a, b, c, k, 0, d};
}

std::string metadata(unsigned workers, unsigned K) {
    return R"({"workload":"synthetic","policy":"piper","workers":)" + std::to_string(workers) +
           R"(,"params":{},"program":{"kind":"pipeline","K":)" + std::to_string(K) + R"(,"line_slots":)" +
           std::to_string(K) +
           R"(,"stages":[{"index":0,"name":"s0","kind":"serial"},{"index":1,"name":"s1","kind":"parallel"},)"
           R"({"index":2,"name":"s2","kind":"serial"}]},"machine":{}})";
}

// A pipe-fib-like run of `iterations` iterations on `workers` workers, written by the real writer.
std::string synthetic_trace(unsigned workers, std::uint64_t iterations, bool compress) {
    const unsigned K = 8;
    std::ostringstream bytes;
    trace::perfetto_writer out(bytes, {compress, 1});
    out.begin_run({"synthetic · piper · P=" + std::to_string(workers), workers, metadata(workers, K), {}},
                  trace::run_clock::fixed(trace::tick_converter({0, 0}, {1000, 1000}), 0));
    constexpr std::size_t chunk_events = 4096;   // the recorder's chunk size
    std::vector<std::vector<event_record>> chunks(workers);
    std::vector<std::uint64_t> now(workers, 1000);
    auto push = [&](unsigned w, const event_record& r) {
        chunks[w].push_back(r);
        if (chunks[w].size() == chunk_events) {
            out.add_chunk(w, chunks[w].data(), chunks[w].size());
            chunks[w].clear();
        }
    };
    for (std::uint64_t i = 0; i < iterations; ++i) {
        const unsigned w = static_cast<unsigned>(i % workers);
        std::uint64_t& t = now[w];
        const auto slot = static_cast<std::uint16_t>(i % K);
        const std::uint64_t started = t;
        push(w, rec(t += 3, event_kind::iteration_start, i, 0, static_cast<std::uint32_t>(1 + i % K), slot));
        for (std::uint64_t j = 0; j < 3; ++j) {
            std::uint32_t flags = 0;
            if (j > 0) {
                const bool satisfied = (i + j) % 3 != 0;
                push(w, rec(t += 2, event_kind::stage_wait_check, i, j, satisfied ? 1 : 0));
                if (!satisfied) {
                    push(w, rec(t += 5, event_kind::iteration_suspend, i, started, static_cast<std::uint32_t>(j), slot));
                    const std::uint64_t suspended = t;
                    push(w, rec(t += 40, event_kind::iteration_resume, i, suspended, static_cast<std::uint32_t>(j), slot));
                    flags |= trace::node_resumed;
                }
                flags |= trace::node_waited;
            }
            push(w, rec(t += 4, event_kind::node_begin, i, j, flags));
            push(w, rec(t += 50 + (i * 7 + j * 13) % 90, event_kind::node_end, i, j));
        }
        push(w, rec(t += 3, event_kind::iteration_retire, i, started, static_cast<std::uint32_t>(i % K), slot));
        if (i % 64 == 63) {   // now and then: idle time and a steal
            push(w, rec(t += 2, event_kind::idle_begin));
            push(w, rec(t += 30, event_kind::steal, (w + 1) % workers, i, 1));
            push(w, rec(t += 5, event_kind::idle_end, 3));
        }
    }
    for (unsigned w = 0; w < workers; ++w)
        if (!chunks[w].empty()) out.add_chunk(w, chunks[w].data(), chunks[w].size());
    out.end_run();
    out.finish();
    return bytes.str();
}

struct counting_visitor final : trace::perfetto_visitor {
    std::uint64_t events = 0, tracks = 0, problems = 0;
    void on_track(const trace::decoded_track&) override { ++tracks; }
    void on_event(const trace::decoded_event&) override { ++events; }
    void on_problem(std::string) override { ++problems; }
};

// CPU time of the process (on a shared machine, less disturbed by other work than wall time).
double cpu_now() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class F>
double time_both(F&& f, std::vector<double>& cpu) {
    const double c0 = cpu_now();
    const double wall = bench::time_seconds(std::forward<F>(f));
    cpu.push_back(cpu_now() - c0);
    return wall;
}

struct input {
    std::string label;
    std::string bytes;
    std::uint64_t events = 0;
};

std::string mevents(double events, const bench::summary& s) {
    // events/s at the median time; the spread is that of the times.
    return fmt::format("{} M/s ({})", num::fixed(events / s.median / 1e6, 2), num::percent(s.rel_spread(), 1));
}

}   // namespace

int main(int argc, char** argv) {
    int runs = 5;
    unsigned workers = 4;
    std::uint64_t iterations = 400'000;
    std::vector<std::string> files;
    bool raw = false;
    std::string save;
    const bool go = bench::parse_command_line(
        argc, argv,
        "Reading speed: events/s of decode_perfetto alone and of load_trace, for a synthetic trace written\n"
        "by perfetto_writer (compressed and plain), and for any --file given.",
        {{"--runs", "measured runs per cell (default 5)",
          [&](const std::string& v) { runs = static_cast<int>(bench::parse_positive(v)); }},
         {"--iterations", "iterations of the synthetic run (default 400000, ~8 events each)",
          [&](const std::string& v) { iterations = bench::parse_positive(v); }},
         {"--workers", "workers of the synthetic run (default 4)",
          [&](const std::string& v) { workers = static_cast<unsigned>(bench::parse_positive(v)); }},
         {"--file", "also measure this trace file (may be given several times)",
          [&](const std::string& v) { files.push_back(v); }},
         {"--save", "write the synthetic traces to PREFIX-compressed.pftrace and PREFIX-plain.pftrace",
          [&](const std::string& v) { save = v; }},
         {"--raw", "print every run's time", [&](const std::string&) { raw = true; }, false}});
    if (!go) return 0;
    bench::print_machine();
    bench::print_conditions("before", 2);

    std::vector<input> inputs;
    for (const bool compress : {true, false})
        inputs.push_back(
            {compress ? "synthetic, compressed" : "synthetic, plain", synthetic_trace(workers, iterations, compress)});
    if (!save.empty())
        for (const auto& in : inputs) {
            const std::string path = save + (in.label == "synthetic, plain" ? "-plain" : "-compressed") + ".pftrace";
            std::ofstream(path, std::ios::binary) << in.bytes;
            fmt::print("wrote {}\n", path);
        }
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) {
            fmt::print(stderr, "{}: cannot read {}\n", argv[0], f);
            return 1;
        }
        inputs.push_back({f, std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())});
    }

    bench::table tab({"input", "events", "bytes", "B/event", "decode only", "load_trace", "decode s", "load s",
                      "decode (CPU)", "load_trace (CPU)"});
    for (auto& in : inputs) {
        std::vector<double> decode, load, decode_cpu, load_cpu;
        std::uint64_t slices = 0, problems = 0, nodes = 0;
        for (int r = 0; r < runs; ++r) {
            counting_visitor v;
            trace::string_table strings;
            decode.push_back(time_both([&] { trace::decode_perfetto(in.bytes, v, strings); }, decode_cpu));
            in.events = v.events;
            problems = v.problems;
            trace::trace_model m;
            load.push_back(time_both([&] { m = trace::load_trace(in.bytes); }, load_cpu));
            slices = m.slices;
            nodes = 0;
            for (const auto& run : m.runs) nodes += run.dag.nodes.size();
            if (m.events != in.events)
                fmt::print(stderr, "{}: load_trace saw {} events, decode {}\n", in.label, (unsigned long long)m.events,
                           (unsigned long long)in.events);
        }
        const auto d = bench::summarize(decode), l = bench::summarize(load);
        const auto dc = bench::summarize(decode_cpu), lc = bench::summarize(load_cpu);
        tab.add({in.label, std::to_string(in.events), std::to_string(in.bytes.size()),
                 num::fixed(double(in.bytes.size()) / double(in.events ? in.events : 1), 2), mevents(double(in.events), d),
                 mevents(double(in.events), l), bench::fmt_time(d), bench::fmt_time(l), mevents(double(in.events), dc),
                 mevents(double(in.events), lc)});
        fmt::print("{}: {} slices, {} DAG nodes, {} problems\n", in.label, (unsigned long long)slices,
                   (unsigned long long)nodes, (unsigned long long)problems);
        if (raw) fmt::print("  decode: {}\n  load:   {}\n", bench::fmt_samples(decode), bench::fmt_samples(load));
    }
    fmt::print("\nmedian of {} runs (spread = (max - min) / median of the times); (CPU): events per second of the\n"
               "process's CPU time, less disturbed than wall time when the machine is shared\n",
               runs);
    tab.print();
    bench::print_conditions("after", 2);
}
