// A pipescope run in the writer's layout (docs/design.md, "Events and the Perfetto layout"), written with
// trace_builder: process, worker threads, lines, the live-iterations counter, the `run` instant
// with its metadata, and node slices. For tests that need a whole run with a known DAG.
#pragma once

#include "trace_builder.hpp"

#include <cstdint>
#include <string>

namespace pipescope::test {

struct pipescope_run_builder {
    trace_builder& b;
    std::uint64_t base;   // uuids: base | kind
    std::int64_t pid;
    unsigned workers;

    std::uint64_t process() const { return base | 1; }
    std::uint64_t counter() const { return base | 2; }
    std::uint64_t worker(unsigned w) const { return base | (0x100000u + w); }
    std::uint64_t lines() const { return base | 3; }
    std::uint64_t line(unsigned k) const { return base | (0x200000u + k); }
    std::uint64_t control() const { return base | 4; }
    std::uint64_t run_seq() const { return 1000 + static_cast<std::uint64_t>(pid); }
    std::uint64_t worker_seq(unsigned w) const { return static_cast<std::uint64_t>(pid) * 10 + w; }

    void describe(const std::string& name, const std::string& metadata, unsigned line_count = 2, std::uint64_t ts = 0) {
        b.process(process(), pid, name);
        for (unsigned w = 0; w < workers; ++w) b.thread(worker(w), pid, pid * 100 + w + 1, "worker " + std::to_string(w));
        b.custom(lines(), process(), "lines");
        for (unsigned k = 0; k < line_count; ++k) b.custom(line(k), lines(), "line " + std::to_string(k));
        b.custom(control(), lines(), "control");
        b.counter_track(counter(), process(), "live iterations");
        trace_builder::event e;
        e.ts = ts;
        e.seq = run_seq();
        e.type = trace_builder::instant;
        e.track = process();
        e.name = "run";
        e.str_args = {{"name", name}, {"metadata", metadata}};
        e.uint_args = {{"workers", workers}};
        b.add(e);
    }
    void node(unsigned w, std::uint64_t i, std::uint64_t j, std::uint64_t start, std::uint64_t end, bool waited = false) {
        b.slice_begin(start, worker(w), "stage " + std::to_string(j), {{"iteration", i}, {"stage", j}, {"waited", waited}},
                      worker_seq(w));
        b.slice_end(end, worker(w), worker_seq(w));
    }
    void state(unsigned w, const std::string& name, std::uint64_t start, std::uint64_t end) {
        b.slice_begin(start, worker(w), name, {}, worker_seq(w));
        b.slice_end(end, worker(w), worker_seq(w));
    }
    void mark(unsigned w, std::uint64_t ts, const std::string& name,
              std::vector<std::pair<std::string, std::uint64_t>> args = {}) {
        b.mark(ts, worker(w), name, std::move(args), {}, {}, worker_seq(w));
    }
    void line_state(unsigned k, const std::string& name, std::uint64_t start, std::uint64_t end, std::uint64_t iteration) {
        b.slice_begin(start, line(k), name, {{"iteration", iteration}}, run_seq());
        b.slice_end(end, line(k), run_seq());
    }
    void end_marker(std::uint64_t ts) {   // the run summary instant: the run's last event
        b.mark(ts, process(), "run summary", {}, {}, {}, run_seq());
    }
    // ... with the runtime's end metadata (docs/tracing.md, "Run summary").
    void end_marker(std::uint64_t ts, const std::string& end_metadata) {
        trace_builder::event e;
        e.ts = ts;
        e.seq = run_seq();
        e.type = trace_builder::instant;
        e.track = process();
        e.name = "run summary";
        e.str_args = {{"metadata", end_metadata}};
        b.add(e);
    }
};

}   // namespace pipescope::test
