// The viewer's document: one or more loaded trace files and the runs they hold, with the
// indices the views need to draw a frame without touching more than what is visible.
// Pure C++ (no ImGui, no OpenGL): unit-tested in tests/viewer.
#pragma once

#include <pipescope/analysis/scope.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::viewer {

namespace tm = pipescope::trace;
namespace vocab = pipescope::trace::vocab;   // the trace's names (vocabulary.hpp)

// What colour a slice gets: a stage index (< key_special) or one of the scheduler/line states.
using colour_key = std::uint16_t;
inline constexpr colour_key key_special = 0xFF00;
inline constexpr colour_key key_idle = 0xFF00;
inline constexpr colour_key key_parked = 0xFF01;
inline constexpr colour_key key_task = 0xFF02;
inline constexpr colour_key key_running = 0xFF03;     // line: iteration running
inline constexpr colour_key key_waiting = 0xFF04;     // line: waiting at a stage / to retire
inline constexpr colour_key key_throttled = 0xFF05;   // control: throttled
inline constexpr colour_key key_other = 0xFFFF;
inline constexpr int key_count_special = 6;

// A slice name's colour from its meaning (typed by the model at load): a node of stage 3 -> 3 (stage
// colours below key_special), "idle" -> key_idle, ... anything else -> key_other.
colour_key colour_of(const tm::name_meaning& name);
colour_key stage_colour(std::uint64_t stage);
inline bool is_stage(colour_key k) { return k < key_special; }

// Instant kinds the timeline draws differently.
enum class instant_kind : std::uint8_t { other, events_lost, steal, stolen, wake, woken, suspend, resume, throttle };
instant_kind classify_instant_name(std::string_view name);

// A summary of a long row in fixed groups of consecutive slices, so that the level of detail can
// find and colour a pixel column holding thousands of slices from a few contiguous entries instead
// of reading the slices themselves (lod.hpp): levels[0][b] is the dominant colour of slices
// [16b, 16b + 16) of the row, levels[k + 1][b] that of levels[k][16b, 16b + 16); group_begin[b] and
// group_end[b] are the begin of slice 16b and the end of the group's last slice (both sorted).
struct row_summary_entry {
    colour_key key = 0;   // the key with the largest weight among what it covers (of the children's keys)
    float weight = 0;     // that key's weight: summed durations (+1 ns per slice) of its slices
};
struct row_summary {
    static constexpr std::size_t fan_out = 16;
    std::vector<std::vector<row_summary_entry>> levels;
    std::vector<std::uint64_t> group_begin;   // begin of each level-0 group's first slice
    std::vector<std::uint64_t> group_end;     // end of each level-0 group's last slice
};

// One row (depth) of a track's slices: the indices of its slices in begin order. Slices of one
// depth never overlap, so both begins and ends are sorted within a row.
struct row_view {
    const tm::slice* slices = nullptr;      // the track's slices
    const std::uint32_t* index = nullptr;   // nullptr: the row is the whole track (max_depth == 0)
    std::size_t size = 0;
    const row_summary* summary = nullptr;   // for long rows (loaded_file::summaries), else nullptr
    const tm::slice& operator[](std::size_t i) const { return index ? slices[index[i]] : slices[i]; }
    std::uint32_t slice_index(std::size_t i) const { return index ? index[i] : static_cast<std::uint32_t>(i); }
};

struct loaded_file {
    std::filesystem::path path;
    std::string name;   // file name for headers
    tm::trace_model model;
    std::uint64_t file_bytes = 0;
    double load_seconds = 0;
    std::vector<colour_key> key_of_string;   // per string_id
    std::vector<instant_kind> instant_of_string;
    // Per track: for tracks with nested slices, the slice indices of each depth; empty otherwise.
    std::vector<std::vector<std::vector<std::uint32_t>>> depth_rows;
    // Flows ordered by the timestamp of their first end (for "all flows in view").
    std::vector<std::uint32_t> flows_by_time;
    std::vector<std::uint64_t> flow_time;   // parallel to flows_by_time
    // Per track: the positions of its "events lost" instants (drawn whatever the zoom).
    std::vector<std::vector<std::uint32_t>> lost_instants;
    // Per track: the largest counter value (0 if none), for the plot's scale.
    std::vector<double> counter_max;
    // Per track, per depth: the summary of rows of at least summary_min_slices slices.
    static constexpr std::size_t summary_min_slices = 4096;
    std::vector<std::vector<row_summary>> summaries;

    row_view row(std::uint32_t track, std::uint16_t depth) const;
    colour_key key(const tm::slice& s) const { return key_of_string[s.name]; }
    std::uint64_t event_ts(const tm::event_ref& e) const;
    std::uint64_t event_end(const tm::event_ref& e) const;
};

// The summary of a row (keys: loaded_file::key_of_string).
row_summary build_row_summary(const row_view& row, const colour_key* keys);

// Builds the indices of a loaded model (called by load_file, and by tests on hand-made models).
std::unique_ptr<loaded_file> prepare_file(tm::trace_model model, std::filesystem::path path = {});
// Reads and prepares a file. A damaged file keeps what was read before the damage
// (trace_model::damage, damage_note); throws std::runtime_error naming the file if it cannot be
// read or is not a Perfetto trace (nothing could be read from it).
std::unique_ptr<loaded_file> load_file(const std::filesystem::path& path);

// "x.pftrace is damaged at byte N of M: showing the K packets read before it (byte N: ...)", or ""
// for a file read to its end.
std::string damage_note(const loaded_file& f);
// "x.pftrace: no runs in this file (12 packets, no track event)" for a trace that holds no event
// to show (the shell then does not add it), or "".
std::string no_runs_note(const loaded_file& f);
// Events the recorder lost on `tracks` of f: the sum of their "events lost" instants' counts.
std::uint64_t events_lost(const loaded_file& f, std::span<const std::uint32_t> tracks);

// A run as the timeline shows it: the analysis' scope of a pipescope run (or of all tracks of a
// foreign trace: run == no_index) — the same tracks, times and title the analysis uses — and the
// file it is in. The title names the file when the document holds several.
struct run_ref : analysis::run_scope {
    std::uint32_t file = 0;
    // Counts from this run are lower bounds (the title then ends "· incomplete: ..."): events the
    // recorder lost on its tracks, or the file is damaged and was read up to the damage.
    std::uint64_t events_lost = 0;
    bool truncated = false;
    // "virtual 16 cores" for a run on virtual workers (its metadata, analysis::virtual_badge), else
    // "": the title ends with it and the timeline's run header is tinted.
    std::string virtual_badge;
};

struct document {
    std::vector<std::unique_ptr<loaded_file>> files;
    std::vector<run_ref> runs;
    std::uint64_t start = 0, end = 0;   // over all runs (absolute ns)

    void add(std::unique_ptr<loaded_file> f);
    void remove_file(std::uint32_t file);
    void clear() {
        files.clear();
        runs.clear();
        start = end = 0;
    }
    bool empty() const { return files.empty(); }
    std::uint64_t event_count() const;   // track events in the files (slice begins and ends, instants, counter values)
private:
    void rebuild_runs();
};

// The viewer's time axis: display time (ns, relative to the document start, or to each run's own
// start when runs are aligned) of a run's absolute timestamp.
inline double display_offset(const document& d, const run_ref& r, bool aligned) {
    return aligned ? static_cast<double>(r.start) : static_cast<double>(d.start);
}

}   // namespace pipescope::viewer
