// Which tracks the timeline draws, and in which order, given what the user arranged: pinned tracks
// first (at the top of the track area, in pin order), then run by run its tracks minus the pinned,
// hidden and filtered ones; a collapsed run shows only its header. Pure C++ (no ImGui): the
// timeline draws what this says, the state dump and the tests read it.
#pragma once

#include "document.hpp"
#include "file_state.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::viewer {

// The kinds of a run's tracks, in the order the timeline draws them.
enum class track_group : std::uint8_t { worker, line, counter, other };

struct run_track {
    std::uint32_t track = 0;   // index into the file's trace_model::tracks
    track_group group = track_group::worker;
    bool operator==(const run_track&) const = default;
};

// One run's part of the arrangement.
struct run_arrangement {
    std::vector<run_track> shown;   // drawn under the run's header, in order (empty when collapsed)
    std::size_t pinned = 0;         // its tracks drawn in the pinned band instead
    std::size_t hidden = 0;         // its tracks hidden (not pinned)
    std::size_t filtered = 0;       // its tracks the filter leaves out (neither pinned nor hidden)
    bool collapsed = false;
};

struct pinned_track {
    std::uint32_t file = 0, run = 0;   // run: index into document::runs
    run_track track;
};

struct track_arrangement {
    std::vector<pinned_track> pinned;    // the band at the top, in order
    std::vector<run_arrangement> runs;   // per document run
    std::size_t hidden() const;          // hidden tracks over all runs
};

// Whether a track name passes the filter: every word of the filter is part of the name, case aside
// (an empty filter passes everything).
bool track_name_matches(std::string_view name, std::string_view filter);

// A run's tracks in drawing order: workers, lines, counters, others.
std::vector<run_track> tracks_of_run(const run_ref& r);

// The core: one run's tracks (`names[i]` is the name of tracks[i]) under a file's arrangement.
// Pinned tracks leave the run (they are drawn in the band), hidden ones are counted, filtered ones
// too; a collapsed run keeps its counts but shows nothing.
run_arrangement arrange_run(std::span<const run_track> tracks, std::span<const std::string_view> names,
                            const file_arrangement& a, std::string_view filter, bool collapsed);

// The ordinal of document run `run` among its file's runs (how a file's state names its runs).
std::uint32_t run_ordinal(const document& d, std::uint32_t run);
// The document run of a file's run ordinal, or tm::no_index.
std::uint32_t run_of_ordinal(const document& d, std::uint32_t file, std::uint32_t ordinal);

// The whole timeline: `files[f]` is file f's arrangement (missing entries: nothing arranged). The
// pinned band holds the files' pinned tracks, file by file in pin order, minus hidden ones and
// tracks that no run shows; pinned tracks stay whatever the filter and a collapsed run.
track_arrangement arrange_tracks(const document& d, const std::vector<file_arrangement>& files, std::string_view filter);

}   // namespace pipescope::viewer
