// Machine-readable progress of a recording (`pipescope run --progress json`): one JSON object per
// line on stderr, for a program that runs the command and shows how far it got (the viewer's run
// panel, docs/viewer.md, "Running a workload from the viewer"). Each line starts with
// {"pipescope_progress":PHASE, and says elapsed_s (since the command started); the phases come in
// order: "reference" (the serial reference and set-up), "measured" (with reference_s once, then
// every 200 ms measured_s, jobs and steals), "writing" (the trace is being finished), "done".
#pragma once

#include <pipescope/pipescope.hpp>

#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace pipescope::recording {

// The jobs run and steals made so far by all workers: relaxed reads of counters the workers keep
// anyway, safe while the run goes on (the terminal's progress line and the JSON lines both show them).
struct work_so_far {
    std::uint64_t jobs = 0, steals = 0;
};
work_so_far work_counts(const pipescope::scheduler& sched);

class progress_json {
public:
    explicit progress_json(bool on, const pipescope::scheduler& sched);
    ~progress_json();   // stops the ticker
    progress_json(const progress_json&) = delete;
    progress_json& operator=(const progress_json&) = delete;

    void phase(std::string_view name);               // a line for a new phase
    void measured_start(double reference_seconds);   // "measured", then a line every 200 ms
    void done(const std::string& trace_path);        // the last line

private:
    void print(std::string_view phase, const std::string& fields);
    void tick();
    void stop_ticker();

    bool on_;
    const pipescope::scheduler& sched_;
    const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point measured_at_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread ticker_;
};

}   // namespace pipescope::recording
