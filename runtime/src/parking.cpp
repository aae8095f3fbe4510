// Parking idle workers on a futex. The protocol avoids lost wake-ups like an eventcount:
//   sleeper:  register in `sleeping_` (seq_cst increment of sleepers_), re-check every deque and the
//             injection queue, and only then sleep on its own token;
//   producer: make the work visible, then (seq_cst) read sleepers_; if non-zero, pop one sleeper
//             and hand it a token.
// Either the producer sees the sleeper, or the sleeper sees the work.
#include "scheduler_impl.hpp"
#include "trace_hooks.hpp"
#include "virtual/virtual_executor.hpp"

#include <algorithm>
#include <climits>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace pipescope::detail {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::microseconds timeout) noexcept {
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout.count() > 0) {
        ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000);
        ts.tv_nsec = static_cast<long>((timeout.count() % 1000000) * 1000);
        tsp = &ts;
    }
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
}

void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void scheduler_impl::notify_work() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    worker* w = nullptr;
    {
        std::lock_guard lock(sleep_mutex_);
        if (!sleeping_.empty()) {
            w = sleeping_.back();
            sleeping_.pop_back();
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
    }
    if (w) {
        // Recorded by the waker if it is a traced worker; the wake id links it to the woken's park_end.
        std::uint64_t wake_id = 0;
        if (worker* me = tls_worker; me && me->trace_buffer()) {
            wake_id = me->next_wake_id();
            trace_event(*me, trace::event_kind::unpark, w->index(), wake_id);
        }
        w->unpark(wake_id);
    }
}

bool scheduler_impl::enter_sleep(worker& w) {
    {
        std::lock_guard lock(sleep_mutex_);
        sleeping_.push_back(&w);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
    }
    if (!work_visible() && !stopping()) return true;
    leave_sleep(w);
    return false;
}

void scheduler_impl::leave_sleep(worker& w) {
    std::lock_guard lock(sleep_mutex_);
    auto it = std::find(sleeping_.begin(), sleeping_.end(), &w);
    if (it != sleeping_.end()) {
        sleeping_.erase(it);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    // Not found: a producer popped us and is handing us a token; the next park returns at once.
}

bool scheduler_impl::work_visible() const {
    if (injected_size_.load(std::memory_order_seq_cst) != 0) return true;
    for (const auto& w : workers_)
        if (!w->deque_.looks_empty()) return true;
    return false;
}

void worker::unpark(std::uint64_t wake_id) noexcept {
    woken_by_.store(wake_id, std::memory_order_relaxed);   // published by the token's release store
    if (virtual_executor* vx = sched_.virtual_time()) {
        // A virtual worker wakes at the waker's time plus the wake-up latency; from outside, now.
        worker* waker = tls_worker;
        const bool inside = waker && &waker->sched() == &sched_;
        vx->unpark(index_, inside ? std::optional<unsigned>(waker->index()) : std::nullopt, sched_.options().costs.wake_ns);
        return;
    }
    wake_token_.store(1, std::memory_order_release);
    futex_wake_one(wake_token_);
}

std::uint64_t worker::park(std::chrono::microseconds timeout) {
    live_counters::bump(counters.parks);
    if (virtual_executor* vx = sched_.virtual_time()) {
        const auto timeout_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(timeout).count());
        return vx->park(index_, timeout_ns) ? woken_by_.exchange(0, std::memory_order_relaxed) : 0;
    }
    if (wake_token_.exchange(0, std::memory_order_acq_rel) != 1) {
        futex_wait(wake_token_, 0, timeout);
        // A timeout or a spurious return leaves the token at 0: nobody woke us.
        if (wake_token_.exchange(0, std::memory_order_acq_rel) != 1) return 0;
    }
    return woken_by_.exchange(0, std::memory_order_relaxed);
}

}   // namespace pipescope::detail
