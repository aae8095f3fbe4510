// What a user arranged in one trace file, kept with that file across launches: pinned, hidden and
// filtered tracks, collapsed runs, and bookmarks with notes (docs/viewer.md, "Arranging tracks and
// bookmarks"). Stored as one JSON file per trace in the config dir, named after the trace's
// identity (its canonical path, size and modification time), written atomically. Pure C++.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::viewer {

// A bookmark (a flag on the timeline): a time of one run of the file, with a note.
struct bookmark {
    std::uint32_t run = 0;   // the run's ordinal among the file's runs (its display offset)
    std::uint64_t ts = 0;    // trace ns, the file's clock
    std::string note;
    bool operator==(const bookmark&) const = default;
};

// A bookmark of the document: file index, position in that file's list.
struct bookmark_ref {
    std::uint32_t file = 0;
    std::size_t index = 0;
    bool operator==(const bookmark_ref&) const = default;
};

// One file's arrangement. Tracks are the file's track indices (trace_model::tracks); runs are
// ordinals among the file's runs (document order).
struct file_arrangement {
    std::vector<std::uint32_t> pinned;           // in pin order: drawn at the top in this order
    std::vector<std::uint32_t> hidden;           // not drawn
    std::vector<std::uint32_t> collapsed_runs;   // only the run's header is drawn
    std::string filter;                          // the track filter when it was saved
    std::vector<bookmark> bookmarks;             // in the order they were added
    bool operator==(const file_arrangement&) const = default;
    bool empty() const { return *this == file_arrangement{}; }
};

// Adds v to the list, or takes it out if it is there; whether it is there now.
bool toggle_in(std::vector<std::uint32_t>& list, std::uint32_t v);
bool contains(const std::vector<std::uint32_t>& list, std::uint32_t v);

// Which file a state belongs to: a rewritten file (another size or time) starts afresh.
struct file_identity {
    std::string path;   // canonical
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const file_identity&) const = default;
};
// The identity of the file at `p`, or nothing if it cannot be read (no such file).
std::optional<file_identity> identify_file(const std::filesystem::path& p);
// Where the state of `id` lives under `dir`: dir/files/<16 hex digits of a hash of the identity>.json.
std::filesystem::path state_path(const std::filesystem::path& dir, const file_identity& id);

// The JSON text of a state (format "pipescope-file-state/1"); track names go with the indices so
// that a state whose tracks no longer match is not applied to other tracks.
std::string state_to_json(const file_identity& id, const file_arrangement& a, const std::vector<std::string>& track_names);
// Reads a state written by state_to_json for `id`: entries naming a track index out of range or
// of another name are dropped. Throws std::runtime_error with the reason if the text is malformed,
// another format, or the state of another file.
file_arrangement state_from_json(const std::string& text, const file_identity& id,
                                 const std::vector<std::string>& track_names);

// Writes `text` to `path` atomically: a temporary file in the same directory, then a rename, so a
// reader sees the old or the new state, never half of one. Creates the directory. Throws
// std::runtime_error on failure (the temporary file is removed).
void write_atomically(const std::filesystem::path& path, const std::string& text);

// The states of the document's files: read when a file is added, written when one changes.
class file_state_store {
public:
    explicit file_state_store(std::filesystem::path dir = {}) : dir_(std::move(dir)) {}
    void set_dir(std::filesystem::path dir) { dir_ = std::move(dir); }
    // A file added to the document (its index is the number of files added before): its saved
    // state if `keep` and one exists, else an empty one. `warning` gets why a state file was
    // ignored (malformed), else "".
    file_arrangement attach(const std::filesystem::path& trace, bool keep, const std::vector<std::string>& track_names,
                            std::string& warning);
    // Writes the states that differ from what was last read or written (files kept only).
    // Returns the messages of writes that failed.
    std::vector<std::string> save_changed(const std::vector<file_arrangement>& now);
    void clear() { slots_.clear(); }
    std::size_t writes() const { return writes_; }   // states written so far (tests)

private:
    struct slot {
        std::optional<file_identity> id;   // nothing: not kept
        std::vector<std::string> names;
        file_arrangement saved;
    };
    std::filesystem::path dir_;
    std::vector<slot> slots_;
    std::size_t writes_ = 0;
};

}   // namespace pipescope::viewer
