// A progress line on stderr for commands that run a while: after `delay` it shows what is running
// and a status (e.g. "3.2 s, 1,204,331 jobs, 412 steals"), updated four times a second, and clears
// itself when done. Only on a terminal: piped or redirected stderr gets nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace pipescope::recording {

class progress_line {
public:
    // `status` is called on the progress thread; it must be safe to call while the work goes on.
    progress_line(std::string what, std::function<std::string()> status,
                  std::chrono::milliseconds delay = std::chrono::seconds(2));
    ~progress_line();   // stops and clears the line
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;

    // Whether stderr is a terminal that can redraw a line (not TERM=dumb).
    static bool available();

private:
    void loop(std::chrono::milliseconds delay);

    std::string what_;
    std::function<std::string()> status_;
    std::chrono::steady_clock::time_point start_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    bool drawn_ = false;
    std::thread thread_;
};

}   // namespace pipescope::recording
