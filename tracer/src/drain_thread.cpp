#include <pipescope/trace/drain_thread.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

namespace pipescope::trace {

drain_thread::drain_thread(recorder& rec, recorder::sink_fn sink, std::chrono::milliseconds staleness)
    : rec_(rec), sink_(std::move(sink)) {
    // Read here, not on the thread: the pool grows when a thread that is not a worker takes a buffer
    // (recorder::add_writer, e.g. bind-to-stage's stage threads), possibly while the thread starts.
    const std::size_t backlog = rec_.chunks_in_pool() / 2;
    // 0: no catch-ups at all (a period far beyond any run's length).
    if (staleness.count() <= 0) staleness = std::chrono::hours(24 * 365);
    thread_ = std::thread([this, backlog, staleness] {
        using clock = std::chrono::steady_clock;
        try {
            auto due = clock::now() + staleness;
            while (!stop_.load(std::memory_order_acquire)) {
                const auto left = std::chrono::ceil<std::chrono::milliseconds>(due - clock::now());
                if (left.count() > 0 && rec_.wait_for_backlog(backlog, left)) {
                    rec_.drain(sink_);
                    bursts_.fetch_add(1, std::memory_order_relaxed);
                } else if (clock::now() >= due) {
                    // Everything recorded so far reaches the file, partly filled chunks too: what a
                    // SIGKILL loses is bounded by `staleness`, not by the pool's size. One wake-up
                    // per period; the conversion is work the run's end would have done anyway.
                    rec_.drain_recorded(sink_);
                    catch_ups_.fetch_add(1, std::memory_order_relaxed);
                    due = clock::now() + staleness;
                }
            }
        } catch (...) {
            error_ = std::current_exception();
        }
    });
}

void drain_thread::join() {
    if (!thread_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    rec_.wake_consumer();
    thread_.join();
}

drain_thread::~drain_thread() { join(); }

void drain_thread::stop() {
    join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}   // namespace pipescope::trace
