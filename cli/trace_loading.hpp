// Loading the trace files a command reads, with one clear message per file that cannot be read
// (shared by `stats`, `compare`, `export-json` and `recover`): every message names the file, and the
// system's refusals give the OS reason ("cannot open run.pftrace: no such file or directory").
//
// A file whose last packet was cut short (a recording killed mid-write, docs/trace-format.md) is
// read up to that packet: the commands say so on stderr ("pipescope: note: ...") and go on.
#pragma once

#include <pipescope/trace/trace_file.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <fmt/format.h>

#include <exception>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

struct loaded_trace {
    std::string path;
    pipescope::trace::trace_model model;
};

// How the commands read a trace: a torn last packet is accepted, any other damage is an error.
inline pipescope::trace::read_options cli_read_options() {
    pipescope::trace::read_options o;
    o.accept_cut_short = true;
    return o;
}

// "FILE: the recording was cut short at byte N ...; run 'X' has no summary: ...", or "".
inline std::string incomplete_note(const pipescope::trace::trace_model& m, const std::string& file) {
    std::string out;
    for (const std::string& n : pipescope::trace::incomplete_notes(m, file)) out += (out.empty() ? "" : "; ") + n;
    return out;
}

// A trace file mapped and loaded, for the commands that write it out again (recover, annotate): the
// model and the file's bytes. Prints "pipescope: FILE: malformed at OFFSET<decode_note>" or the
// open error and returns nothing on failure.
struct mapped_trace {
    pipescope::trace::mapped_file file;
    pipescope::trace::trace_model model;
};
inline std::optional<mapped_trace> open_mapped_trace(const std::string& f, const pipescope::trace::read_options& o,
                                                     const char* decode_note) {
    try {
        mapped_trace t;
        t.file = pipescope::trace::open_trace_file(f);
        t.model = pipescope::trace::load_trace(t.file.bytes(), o);
        return t;
    } catch (const pipescope::trace::proto::decode_error& e) {
        fmt::print(stderr, "pipescope: {}: malformed at {}{}\n", f, e.what(), decode_note);
    } catch (const std::runtime_error& e) {
        fmt::print(stderr, "pipescope: {}\n", e.what());
    }
    return std::nullopt;
}

// Loads one file; prints "pipescope: what is wrong" (naming the file) and returns nothing on failure.
inline std::optional<pipescope::trace::trace_model> load_one_trace(const std::string& f) {
    try {
        pipescope::trace::trace_model m = pipescope::trace::load_trace_file(f, cli_read_options());
        if (const std::string note = incomplete_note(m, f); !note.empty()) fmt::print(stderr, "pipescope: note: {}\n", note);
        return m;
    } catch (const pipescope::trace::proto::decode_error& e) {
        fmt::print(stderr, "pipescope: {}: not a readable Perfetto trace: malformed at {}\n", f, e.what());
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: {}\n", e.what());
    }
    return std::nullopt;
}

// Loads every file; prints "pipescope: FILE: what is wrong" for each failure. False if any failed.
inline bool load_traces(const std::vector<std::string>& files, std::vector<loaded_trace>& out) {
    bool ok = true;
    out.reserve(files.size());
    for (const auto& f : files) {
        std::optional<pipescope::trace::trace_model> m = load_one_trace(f);
        if (!m) {
            ok = false;
            continue;
        }
        if (m->tracks.empty() && m->events == 0) {
            fmt::print(stderr, "pipescope: {}: holds no trace events (empty, or not a Perfetto trace)\n", f);
            ok = false;
            continue;
        }
        out.push_back({f, std::move(*m)});
    }
    return ok;
}
