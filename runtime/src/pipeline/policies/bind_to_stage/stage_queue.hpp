// The bounded queue in front of a bind-to-stage stage (seed 000 §2.1: "object data is passed between
// stages using software queues", of Queue_size entries; §3.1: stage S_i is an input queue Q_i and
// c_i threads). A producer waits while the queue is full, a consumer while it is empty.
//
// Besides its items the queue carries *skip marks* for a serial_in_order stage: "iteration i jumped
// over this stage". They take no capacity (an iteration that skips a stage is not in its queue),
// and a consumer waiting for work wakes up for them, because the stage's turn may move past i.
//
// close(): no more pushes will come; consumers drain what is left, then pop() says so.
// abort(): the loop is stopping; every waiter wakes and gives up at once.
//
// Hand-off without a sleep/wake pair. A blocking OS queue (a mutex and two condition variables, as
// in PARSEC's pthreads queues) puts the consumer to sleep whenever it runs ahead of its producer and
// wakes it for every item: two system calls and a context switch per item per queue, which is what
// bind-to-stage paid on fine items (issue 17). Here a thread that finds the queue empty (or full)
// first spins for a few microseconds, then yields its core a few times, watching lock-free mirrors
// of the state (`size_`, `attention_`), and only then parks on the condition variable. A producer
// notifies only when a consumer is parked (and vice versa), so while both sides keep running no
// system call is made at all.
//
// On virtual cores (bind-to-stage on virtual workers, use_virtual): a thread that must wait parks in
// the virtual executor instead — a real spin or sleep would keep the token, and the thread that could
// end the wait would never run — and leaves its virtual core until a push, pop, mark, close or abort
// wakes it (virtual_actor_unpark: ready after the wake-up latency). Only the token holder runs, and
// a waiter registers before it gives the token up, so no wake-up is lost here either.
// A slot pushed by a thread on one virtual core and taken by a thread on another moves its cache
// lines between cores: the taker's next step pays virtual_costs::handoff_ns (issue 34), counted in
// handoffs().
//
// Locking rules: every change to the ring, the marks and the flags is made under m_; the atomics
// mirror them (stored under m_, read anywhere) and serve only as hints for spinning — the decision
// to wait and the take itself are made under m_ again. parked_consumers_ / parked_producers_ are
// changed under m_ around the condition-variable wait, and read under m_ by the side that might
// have to notify, so a wake-up cannot be lost: whoever changes the state under m_ after a waiter
// registered sees it registered.
#pragma once

#include "../../../scheduler_impl.hpp"
#include "../../../virtual/virtual_executor.hpp"

#include <pipescope/detail/cpu_relax.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace pipescope::detail {

// How long a thread keeps watching a queue before it parks (spin, then yield: on an oversubscribed
// machine the yields hand the core to the thread we wait for).
struct queue_spin {
    // Measured with dedup (small) under bind-to-stage at P = 2: futex calls per run fell from about
    // 6,900 (1.3 per hand-off, the sleep/wake pairs) to a few dozen to a few hundred; the yields do
    // most of it, because with more stage threads than cores the thread we wait for is usually
    // runnable but not running.
    static constexpr std::chrono::nanoseconds spin{2000};
    static constexpr int yields = 16;

    // Returns true as soon as ready() holds, false when the budget is spent.
    template <class Ready>
    static bool wait_for(Ready&& ready) {
        if (ready()) return true;
        const auto until = std::chrono::steady_clock::now() + spin;
        for (unsigned n = 1;; ++n) {
            for (int k = 0; k < 8; ++k) cpu_relax();
            if (ready()) return true;
            if (n % 8 == 0 && std::chrono::steady_clock::now() >= until) break;
        }
        for (int y = 0; y < yields; ++y) {
            std::this_thread::yield();
            if (ready()) return true;
        }
        return false;
    }
};

template <class T>
class stage_queue {
public:
    explicit stage_queue(std::size_t capacity) : ring_(capacity) {}

    std::size_t capacity() const noexcept { return ring_.size(); }

    // Waiting threads are actors of `executor` (virtual cores): they park there. Before any use.
    void use_virtual(virtual_executor* executor) {
        vx_ = executor;
        pushed_on_.assign(ring_.size(), -1);
    }

    // Waits while the queue is full. blocked(true) is called when the thread starts waiting and
    // blocked(false) when it stops, whether it spun, yielded or parked: a wait is a wait in the
    // trace (the imbalance lesson measures bind-to-stage threads by it), however cheaply it was
    // done. moved(fill) once the item is in, under the lock, with the fill after the push. Returns
    // false (nothing pushed) if aborted.
    template <class Blocked, class Moved>
    bool push(T v, Blocked&& blocked, Moved&& moved) {
        const auto room = [&] {
            return size_.load(std::memory_order_acquire) < ring_.size() || aborted_.load(std::memory_order_acquire);
        };
        const auto has_room = [&] { return count_ < ring_.size() || aborted_.load(std::memory_order_relaxed); };
        std::unique_lock lock(m_, std::defer_lock);
        if (wait_locked(lock, room, has_room, not_full_, parked_producers_, virtual_producers_, blocked)) blocked(false);
        if (aborted_.load(std::memory_order_relaxed)) return false;
        if (vx_) pushed_on_[(head_ + count_) % ring_.size()] = vx_->core_of(tls_virtual_actor->index);
        ring_[(head_ + count_) % ring_.size()] = std::move(v);
        ++count_;
        size_.store(count_, std::memory_order_release);
        if (count_ > peak_) peak_ = count_;
        moved(count_);
        wake_virtual(virtual_consumers_, false);
        const bool wake = parked_consumers_ > 0;
        lock.unlock();
        if (wake) not_empty_.notify_one();
        return true;
    }

    // Iteration `i` skipped the stage (serial_in_order stages only: one consumer).
    void mark(std::uint64_t i) {
        bool wake;
        {
            std::lock_guard lock(m_);
            marks_.push_back(i);
            attention_.store(true, std::memory_order_release);
            wake_virtual(virtual_consumers_, false);
            wake = parked_consumers_ > 0;
        }
        if (wake) not_empty_.notify_one();
    }

    // Waits while there is neither an item nor a mark and the queue is open. Takes up to `max` items
    // (appended to `out`, in queue order) and every mark (appended to `marks`); blocked() as in
    // push, moved(item, fill) for each item taken, under the lock. Returns false when nothing more
    // will come: aborted, or closed and drained. A serial stage's single thread takes everything
    // there is (batching: one lock and at most one wake-up for the lot); a parallel stage's threads
    // take one item each, so that they share the work.
    template <class Blocked, class Moved>
    bool pop(std::vector<T>& out, std::size_t max, std::vector<std::uint64_t>& marks, Blocked&& blocked, Moved&& moved) {
        const auto work = [&] {
            return size_.load(std::memory_order_acquire) > 0 || attention_.load(std::memory_order_acquire);
        };
        const auto ready = [&] {
            return count_ > 0 || !marks_.empty() || closed_ || aborted_.load(std::memory_order_relaxed);
        };
        std::unique_lock lock(m_, std::defer_lock);
        if (wait_locked(lock, work, ready, not_empty_, parked_consumers_, virtual_consumers_, blocked)) blocked(false);
        if (aborted_.load(std::memory_order_relaxed)) return false;
        marks.insert(marks.end(), marks_.begin(), marks_.end());
        const bool had_marks = !marks_.empty();
        marks_.clear();
        attention_.store(closed_, std::memory_order_relaxed);
        if (count_ == 0) return had_marks;   // closed: false once drained
        std::size_t taken = 0;
        const int here = vx_ ? vx_->core_of(tls_virtual_actor->index) : -1;
        for (; taken < max && count_ > 0; ++taken) {
            if (vx_ && pushed_on_[head_] >= 0 && pushed_on_[head_] != here) {
                ++handoffs_;
                tls_virtual_actor->charged_ns += tls_virtual_actor->options->costs.handoff_ns;
            }
            out.push_back(std::move(ring_[head_]));
            head_ = (head_ + 1) % ring_.size();
            --count_;
            moved(out.back(), count_);
        }
        size_.store(count_, std::memory_order_release);
        if (taken > 0) wake_virtual(virtual_producers_, taken > 1);
        const int parked = parked_producers_;
        lock.unlock();
        if (parked > 0) {
            if (taken > 1) not_full_.notify_all();
            else not_full_.notify_one();
        }
        return true;
    }

    void close() {
        {
            std::lock_guard lock(m_);
            closed_ = true;
            attention_.store(true, std::memory_order_release);
            wake_virtual(virtual_consumers_, true);
        }
        not_empty_.notify_all();
    }
    void abort() {
        {
            std::lock_guard lock(m_);
            aborted_.store(true, std::memory_order_release);
            attention_.store(true, std::memory_order_release);
            wake_virtual(virtual_consumers_, true);
            wake_virtual(virtual_producers_, true);
        }
        not_empty_.notify_all();
        not_full_.notify_all();
    }

    // The most items the queue ever held (never above capacity(): the invariant tests check).
    std::size_t peak() const {
        std::lock_guard lock(m_);
        return peak_;
    }
    // Virtual cores: items taken on another core than the one they were pushed on.
    std::uint64_t handoffs() const {
        std::lock_guard lock(m_);
        return handoffs_;
    }

private:
    // Takes `lock` (on m_) and returns holding it once ready() holds, ready() being checked under it:
    // on virtual cores the thread parks in the executor; otherwise it spins on the lock-free hint()
    // (queue_spin), then sleeps on `cv`, counted in `parked` so that the other side knows to notify.
    // blocked(true) once if it had to wait at all; returns whether it did.
    template <class Hint, class Ready, class Blocked>
    bool wait_locked(std::unique_lock<std::mutex>& lock, Hint& hint, Ready& ready, std::condition_variable& cv, int& parked,
                     std::vector<unsigned>& virtual_waiters, Blocked& blocked) {
        bool waiting = false;
        if (vx_) {
            lock.lock();
            wait_virtual(lock, virtual_waiters, ready, blocked, waiting);
            return waiting;
        }
        if (!hint()) {
            blocked(true);
            waiting = true;
            queue_spin::wait_for(hint);
        }
        lock.lock();
        if (!ready()) {
            if (!waiting) blocked(true);
            waiting = true;
            ++parked;
            cv.wait(lock, ready);
            --parked;
        }
        return waiting;
    }
    // Virtual cores: park until ready() holds (under m_, held by `lock`).
    template <class Ready, class Blocked>
    void wait_virtual(std::unique_lock<std::mutex>& lock, std::vector<unsigned>& waiters, Ready& ready, Blocked& blocked,
                      bool& waiting) {
        while (!ready()) {
            if (!waiting) blocked(true);
            waiting = true;
            waiters.push_back(tls_virtual_actor->index);
            lock.unlock();
            virtual_actor_park();
            lock.lock();
        }
    }
    // Under m_: wakes the first waiter, or all of them. Each woken waiter left the list; one that
    // finds nothing to do when it runs registers again.
    void wake_virtual(std::vector<unsigned>& waiters, bool all) noexcept {
        if (waiters.empty()) return;
        const std::size_t n = all ? waiters.size() : 1;
        for (std::size_t k = 0; k < n; ++k) virtual_actor_unpark(*vx_, waiters[k]);
        waiters.erase(waiters.begin(), waiters.begin() + static_cast<std::ptrdiff_t>(n));
    }

    mutable std::mutex m_;
    std::condition_variable not_full_, not_empty_;
    std::vector<T> ring_;
    std::size_t head_ = 0, count_ = 0, peak_ = 0;
    std::vector<std::uint64_t> marks_;
    bool closed_ = false;
    int parked_consumers_ = 0, parked_producers_ = 0;
    virtual_executor* vx_ = nullptr;   // use_virtual
    std::vector<int> pushed_on_;       // per ring slot: the pusher's core
    std::uint64_t handoffs_ = 0;
    std::vector<unsigned> virtual_consumers_, virtual_producers_;   // parked there, in order
    // Lock-free mirrors for spinning (see the locking rules above).
    alignas(64) std::atomic<std::size_t> size_{0};   // count_
    std::atomic<bool> attention_{false};             // marks waiting, closed or aborted
    std::atomic<bool> aborted_{false};
};

}   // namespace pipescope::detail
