// Turns recorded event_records into a Perfetto protobuf trace (.pftrace) while the run goes on,
// written with our own proto::writer (no Perfetto SDK). See docs/tracing.md for the layout and
// docs/trace-format.md for the importer's rules it follows.
//
// Streaming: every chunk of records is converted and written as soon as it arrives (optionally as
// one zlib-compressed packet), so memory stays bounded whatever the run's length: the writer keeps
// only per-worker state (open slices, interning tables). Nothing here needs records of other
// workers: the runtime puts into each record what the conversion needs (the "since" tick of the
// state an event ends, wake ids, live counts), see events.hpp.
//
// Layout, per run r (several runs per file make a comparison):
//   process track   pid 1000 + r, named "workload · policy · P=n"; instants "run" (metadata JSON)
//                   at the start and "run summary" (what was written) at the end
//   thread tracks   "worker w": node slices "stage j", idle / parked / task slices, instants
//   "lines" group   "line k", one per in-flight iteration slot: "running" / "waiting at stage j"
//                   slices of the iteration in that slot; "control": "throttled" slices
//   counter tracks  "live iterations", and the run's own counters (run_info::counters)
//   flows           steals (stolen -> steal), wake-ups (wake -> woken), resumptions (resume -> node)
//   sequences       one trusted_packet_sequence_id per worker, (r << 16) | (worker + 1), plus
//                   (r << 16) | 0xFFFF for the run's own packets
//
// Usage:
//   perfetto_writer out("run.pftrace");
//   out.begin_run({"pipe-fib · piper · P=2", 2, "{...}"}, run_clock::calibrating(rec.start_clock()));
//   while (running) rec.drain(out.sink());
//   rec.flush(out.sink());
//   out.end_run();
//   out.finish();                 // run.pftrace.XXXXXX.tmp renamed to run.pftrace (atomic_output.hpp)
#pragma once

#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/clock.hpp>
#include <pipescope/trace/events.hpp>
#include <pipescope/trace/recorder.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::trace {

struct run_info {
    std::string name = {};   // "workload · policy · P=n"
    unsigned workers = 0;
    std::string metadata_json = {};           // the "metadata" annotation of the run's "run" instant
    std::vector<std::string> counters = {};   // names of the counter tracks `counter` records refer to by index
    // Names of the stages by number (may be shorter than the program or empty): node slices of stage
    // j are "stage j · stage_names[j]" (vocab::stage_name_infix) instead of "stage j".
    std::vector<std::string> stage_names = {};
};

struct writer_options {
    // Wrap each converted chunk in a zlib-compressed `compressed_packets` packet (level 1..9).
    bool compress = true;
    int compression_level = 1;
    // Counter changes of one recording thread closer together than this collapse into one sample
    // (plus the window's peak if it came earlier): docs/tracing.md, "Counters". 0 writes every sample.
    std::uint64_t counter_quantum_ns = 1000;
};

// What was written, summed over all runs (a run's own figures go into its "run summary").
struct perfetto_write_stats {
    std::uint64_t packets = 0;   // TrackEvent and descriptor packets (before compression)
    std::uint64_t slices = 0;    // SLICE_BEGINs written
    std::uint64_t instants = 0;
    std::uint64_t flows = 0;   // flows whose both ends were written
    std::uint64_t counter_values = 0;
    std::uint64_t records = 0;                  // event_records converted
    std::uint64_t unmatched_ends = 0;           // END records whose kind had no open slice: dropped
    std::uint64_t closed_at_end = 0;            // slices still open at a worker's last record: closed there
    std::uint64_t closed_early = 0;             // slices closed because an END for an outer slice arrived
    std::uint64_t closed_at_loss = 0;           // slices open when events were lost: closed at the loss marker
    std::uint64_t dropped_events = 0;           // sum of `dropped` records
    std::uint64_t folded_runs = 0;              // slices of folded node runs (trace_detail::folded), counted in slices
    std::uint64_t folded_nodes = 0;             // the nodes they hold
    std::uint64_t counter_samples = 0;          // counter records converted (counter_values: what was written)
    std::uint64_t annotations = 0;              // user annotation values written (on their slices' ENDs)
    std::uint64_t annotations_unattached = 0;   // annotation records with no slice open on their track: ignored
    std::uint64_t annotations_lost = 0;         // past the bound of pending annotations: counted on their slice
    std::uint64_t bytes = 0;                    // bytes written to the file
};

class perfetto_writer {
public:
    // Writes to `out`; the stream must outlive the writer.
    explicit perfetto_writer(std::ostream& out, writer_options options = {});
    // Writes to a temporary file next to `path` (atomic_output: refused at once if `path` cannot be
    // an output file) and renames it to `path` in finish(); without finish() the temporary file is
    // removed and `path` is left untouched. Each drained chunk is one write(2) of whole packets, so
    // the temporary file of a killed process holds a readable prefix of the trace.
    explicit perfetto_writer(const std::filesystem::path& path, writer_options options = {});
    ~perfetto_writer();
    perfetto_writer(const perfetto_writer&) = delete;
    perfetto_writer& operator=(const perfetto_writer&) = delete;

    // Writes the run's descriptors and its "run" instant at once.
    void begin_run(run_info info, run_clock clock);
    // Records of one worker, in the order they were recorded (recorder::drain/flush order):
    // converted and written now.
    void add_chunk(unsigned worker, const event_record* records, std::size_t count);
    // A recorder sink that forwards to add_chunk.
    recorder::sink_fn sink();
    // Closes the slices still open and writes the run's summary; a non-empty `outcome` (how the run
    // ended when it did not complete: "cancelled", "exception: ...") goes into it, and so does a
    // non-empty `end_metadata`, a JSON object of what the runtime saw during the run (its "metadata"
    // annotation: the stage kinds the loops used, the CPU time each worker got; docs/tracing.md, "Run
    // summary").
    void end_run(std::string_view outcome = {}, std::string_view end_metadata = {});
    // Flushes; for a path, syncs and renames the temporary file into place. Throws on I/O errors
    // (output_error, "cannot write PATH: no space left on device"). Once a write has failed, every
    // later call that writes, and finish(), throws that error again: the trace is lost.
    void finish();

    const perfetto_write_stats& stats() const noexcept { return stats_; }
    unsigned runs() const noexcept { return run_index_; }

    class run_state;   // the conversion state of the open run (perfetto_writer.cpp)

private:
    void write_packets(std::vector<std::uint8_t>& packets);

    void write_bytes(const std::vector<std::uint8_t>& header, const std::vector<std::uint8_t>& payload);

    std::unique_ptr<atomic_output> file_;   // for a path
    std::ostream* out_ = nullptr;           // for a stream
    std::exception_ptr failure_;            // the first write error: the writer is done
    writer_options options_;
    bool finished_ = false;
    unsigned run_index_ = 0;   // runs completed so far
    std::unique_ptr<run_state> run_;
    std::vector<std::uint8_t> packets_, compressed_;
    perfetto_write_stats stats_;
};

}   // namespace pipescope::trace
