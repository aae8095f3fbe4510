// $PIPESCOPE_FRAME_LOG=FILE: each frame of the window (or a script) appends "MS RUNNING" to FILE, the
// time the frame took to build and whether a run panel recording was going on, for the benchmark that
// checks a recording does not stall frames (scripts/bench-run-panel.sh; docs/viewer.md, "Running a
// workload from the viewer").
#pragma once

#include <cstdio>
#include <cstdlib>

namespace pipescope::viewer {

class frame_log {
public:
    frame_log() {
        if (const char* p = std::getenv("PIPESCOPE_FRAME_LOG"); p && *p) file_ = std::fopen(p, "w");
    }
    ~frame_log() {
        if (file_) std::fclose(file_);
    }
    frame_log(const frame_log&) = delete;
    frame_log& operator=(const frame_log&) = delete;

    void add(double ms, bool recording) {
        if (file_) std::fprintf(file_, "%.3f %d\n", ms, recording ? 1 : 0);
    }

private:
    std::FILE* file_ = nullptr;
};

}   // namespace pipescope::viewer
