// Loading trace files on background threads, delivered in the order they were asked for.
//
// Files load in parallel (a big trace must not hold up a small one), but the document shows runs
// in the order the user gave them: the compare view's "vs first" baseline and a lesson's "the top
// run" depend on it. So take() hands results out in start order and holds back a finished load
// until every load started before it has finished too.
#pragma once

#include "document.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pipescope::viewer {

struct load_result {
    std::filesystem::path path;
    std::unique_ptr<loaded_file> file;
    std::string error;   // set (naming the file) when file is null
    // Opened by the user in the window (dialog, drop, recent files, examples): it goes into the
    // recent files. Command-line, --screenshot, --script and lesson-run loads do not.
    bool user_opened = false;
};

class loader {
public:
    using load_fn = std::function<load_result(const std::filesystem::path&)>;

    // `load` runs on the background threads; tests pass their own to control when loads finish.
    explicit loader(load_fn load = load_now);
    ~loader();
    loader(const loader&) = delete;
    loader& operator=(const loader&) = delete;

    void start(const std::filesystem::path& p, bool user_opened = false);
    // Called on the loading thread when a load finishes (the window wakes its idle wait with it).
    void on_finished(std::function<void()> f) { on_finished_ = std::move(f); }
    // The finished loads whose predecessors have all been handed out, in start order.
    std::vector<load_result> take();

    struct pending {
        std::string name;
        std::uint64_t bytes;
        double seconds;
    };
    std::vector<pending> in_progress() const;   // loads still running
    bool busy() const;                          // anything started and not yet taken

    static load_result load_now(const std::filesystem::path& p);   // on the calling thread

private:
    struct job {
        std::filesystem::path path;
        std::uint64_t bytes = 0;
        std::chrono::steady_clock::time_point t0;
        std::thread th;
        struct outcome {
            std::atomic<bool> done{false};
            load_result result;   // written by the thread before done is set
        };
        std::shared_ptr<outcome> out;
    };
    load_fn load_;
    std::function<void()> on_finished_;
    mutable std::mutex mu_;
    std::deque<job> jobs_;   // in start order
};

}   // namespace pipescope::viewer
