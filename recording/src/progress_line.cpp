// The progress line (progress_line.hpp).
#include "progress_line.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace pipescope::recording {

bool progress_line::available() {
    const char* term = std::getenv("TERM");
    return isatty(STDERR_FILENO) && term && std::strcmp(term, "dumb") != 0;
}

progress_line::progress_line(std::string what, std::function<std::string()> status, std::chrono::milliseconds delay)
    : what_(std::move(what)), status_(std::move(status)), start_(std::chrono::steady_clock::now()) {
    if (available()) thread_ = std::thread([this, delay] { loop(delay); });
}

progress_line::~progress_line() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
    if (drawn_) std::fputs("\r\033[K", stderr);   // the command's own output follows on a clean line
}

void progress_line::loop(std::chrono::milliseconds delay) {
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, delay, [this] { return stop_; })) return;
    do {
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        fmt::print(stderr, "\r\033[K{}: {} s, {}", what_, pipescope::analysis::numbers::fixed(seconds, 1), status_());
        std::fflush(stderr);
        drawn_ = true;
    } while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; }));
}

}   // namespace pipescope::recording
