// The progress lines of `pipescope run --progress json` (progress_json.hpp).
#include "progress_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace pipescope::recording {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}   // namespace

work_so_far work_counts(const pipescope::scheduler& sched) {
    work_so_far w;
    for (unsigned i = 0; i < sched.workers(); ++i) {
        w.jobs += sched.counters(i).jobs_run;
        w.steals += sched.counters(i).steals;
    }
    return w;
}

progress_json::progress_json(bool on, const pipescope::scheduler& sched) : on_(on), sched_(sched) { phase("reference"); }

progress_json::~progress_json() { stop_ticker(); }

void progress_json::print(std::string_view phase, const std::string& fields) {
    if (!on_) return;
    // One write per line, flushed: the reader sees whole lines as they happen.
    const std::string line = fmt::format("{{\"pipescope_progress\":{},\"elapsed_s\":{:.3f}{}}}\n",
                                         nlohmann::json(phase).dump(), seconds_since(start_), fields);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
}

void progress_json::phase(std::string_view name) {
    stop_ticker();   // no "measured" line after the next phase's
    std::lock_guard lock(mutex_);
    print(name, "");
}

void progress_json::stop_ticker() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    if (ticker_.joinable()) ticker_.join();
}

void progress_json::measured_start(double reference_seconds) {
    if (!on_) return;
    std::lock_guard lock(mutex_);
    measured_at_ = std::chrono::steady_clock::now();
    print("measured", fmt::format(",\"reference_s\":{:.6f},\"measured_s\":0", reference_seconds));
    if (!ticker_.joinable()) ticker_ = std::thread([this] { tick(); });
}

// Every 200 ms: how long the measured run has taken and what the workers have done (work_counts).
void progress_json::tick() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) {
        const work_so_far w = work_counts(sched_);
        print("measured", fmt::format(",\"measured_s\":{:.3f},\"jobs\":{},\"steals\":{}", seconds_since(measured_at_),
                                      w.jobs, w.steals));
    }
}

void progress_json::done(const std::string& trace_path) {
    stop_ticker();
    std::lock_guard lock(mutex_);
    print("done", trace_path.empty() ? std::string() : ",\"trace\":" + nlohmann::json(trace_path).dump());
}

}   // namespace pipescope::recording
