// Turns recorded event_records into a Perfetto protobuf trace (.pftrace), written with our own
// proto::writer (no Perfetto SDK). See /work/shared/reference/perfetto-format.md and
// docs/trace-format.md for the field numbers and the importer's rules this follows.
//
// Layout, per run (run index r):
//   process track   pid = 1000 + r, process_name = run name
//   thread tracks   tid = pid * 100 + worker + 1, thread_name "worker w"
//   counter track   "live iterations" (iteration_start +1, iteration_retire -1)
//   sequences       one trusted_packet_sequence_id per worker, (r << 16) | (worker + 1), plus one
//                   for the run's own packets (counter values, the "run" instant), (r << 16) | 0xFFFF
//
// Usage:
//   perfetto_writer out("run.pftrace");
//   out.begin_run({"pipe-fib · piper · P=2", 2, "{...}"});
//   rec.flush(out.sink());                       // or drain() while the run goes on
//   out.end_run(tick_converter(rec.start_clock(), clock_sample::take()));
//   out.finish();                                // writes run.pftrace.tmp, then renames it
//
// A run is buffered (as raw records) until end_run, which converts and writes it.
#pragma once

#include <pipescope/trace/clock.hpp>
#include <pipescope/trace/events.hpp>
#include <pipescope/trace/recorder.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iosfwd>
#include <string>
#include <vector>

namespace pipescope::trace {

struct run_info {
    std::string name;            // "workload · policy · P=n"
    unsigned workers = 0;
    std::string metadata_json;   // stored verbatim as a debug annotation on the run's "run" instant
};

// What the conversion had to repair, summed over all runs.
struct perfetto_write_stats {
    std::uint64_t packets = 0;
    std::uint64_t slices = 0;               // SLICE_BEGINs written
    std::uint64_t unmatched_ends = 0;       // END records whose kind had no open slice: dropped
    std::uint64_t closed_at_end = 0;        // slices still open at a worker's last record: closed there
    std::uint64_t closed_early = 0;         // slices closed because an END for an outer slice arrived
    std::uint64_t flows = 0;                // steal and wake-up flows
    std::uint64_t dropped_events = 0;       // sum of `dropped` records
};

class perfetto_writer {
public:
    // Writes to `out`; the stream must outlive the writer.
    explicit perfetto_writer(std::ostream& out);
    // Writes to "<path>.tmp" and renames it to `path` in finish(); without finish() the
    // temporary file is removed and `path` is left untouched.
    explicit perfetto_writer(const std::filesystem::path& path);
    ~perfetto_writer();
    perfetto_writer(const perfetto_writer&) = delete;
    perfetto_writer& operator=(const perfetto_writer&) = delete;

    void begin_run(run_info info);
    // Records of one worker, in the order they were recorded (recorder::drain/flush order).
    void add_chunk(unsigned worker, const event_record* records, std::size_t count);
    // A recorder sink that forwards to add_chunk.
    recorder::sink_fn sink();
    // Converts the run's records (timestamps through `clock`) and writes its packets.
    void end_run(const tick_converter& clock);
    // Flushes; for a path, renames the temporary file into place. Throws on I/O errors.
    void finish();

    const perfetto_write_stats& stats() const noexcept { return stats_; }
    unsigned runs() const noexcept { return run_index_; }

private:
    void write(const std::vector<std::uint8_t>& bytes);

    std::filesystem::path path_;
    std::filesystem::path tmp_path_;
    std::ofstream file_;
    std::ostream* out_ = nullptr;
    bool finished_ = false;

    bool in_run_ = false;
    unsigned run_index_ = 0;          // runs completed so far
    run_info run_;
    std::vector<std::vector<event_record>> records_;   // per worker, current run
    std::uint64_t next_flow_id_ = 1;
    perfetto_write_stats stats_;
};

}  // namespace pipescope::trace
