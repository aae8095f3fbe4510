// Loading the trace files a command reads, with one clear message per file that cannot be read
// (shared by `stats` and `compare`).
#pragma once

#include <pipescope/trace/trace_model.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

struct loaded_trace {
    std::string path;
    pipescope::trace::trace_model model;
};

// Loads every file; prints "pipescope: FILE: what is wrong" for each failure. False if any failed.
inline bool load_traces(const std::vector<std::string>& files, std::vector<loaded_trace>& out) {
    bool ok = true;
    out.reserve(files.size());
    for (const auto& f : files) {
        try {
            loaded_trace t{f, pipescope::trace::load_trace_file(f)};
            if (t.model.tracks.empty() && t.model.events == 0) {
                std::cerr << "pipescope: " << f << ": holds no trace events (empty, or not a Perfetto trace)\n";
                ok = false;
                continue;
            }
            out.push_back(std::move(t));
        } catch (const pipescope::trace::proto::decode_error& e) {
            std::cerr << "pipescope: " << f << ": not a readable Perfetto trace: malformed at " << e.what() << "\n";
            ok = false;
        } catch (const std::exception& e) {
            std::cerr << "pipescope: " << e.what() << "\n";
            ok = false;
        }
    }
    return ok;
}
