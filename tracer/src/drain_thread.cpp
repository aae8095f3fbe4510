#include <pipescope/trace/drain_thread.hpp>

#include <chrono>
#include <utility>

namespace pipescope::trace {

drain_thread::drain_thread(recorder& rec, recorder::sink_fn sink) : rec_(rec), sink_(std::move(sink)) {
    // Read here, not on the thread: the pool grows when a thread that is not a worker takes a buffer
    // (recorder::add_writer, e.g. bind-to-stage's stage threads), possibly while the thread starts.
    const std::size_t backlog = rec_.chunks_in_pool() / 2;
    thread_ = std::thread([this, backlog] {
        try {
            while (!stop_.load(std::memory_order_acquire)) {
                // The timeout only bounds a wait whose wake-up was missed; a timed-out wait drains
                // nothing (the pool still has room), so it costs a wake-up per second at most.
                if (rec_.wait_for_backlog(backlog, std::chrono::seconds(1))) {
                    rec_.drain(sink_);
                    bursts_.fetch_add(1, std::memory_order_relaxed);
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
