// The bounded queue in front of a bind-to-stage stage (seed 000 §2.1: "object data is passed between
// stages using software queues", of Queue_size entries; §3.1: stage S_i is an input queue Q_i and
// c_i threads). A mutex and two condition variables, as in PARSEC's pthreads queues: a producer
// blocks (a real OS block) while the queue is full, a consumer while it is empty.
//
// Besides its items the queue carries *skip marks* for a serial_in_order stage: "iteration i jumped
// over this stage". They take no capacity (an iteration that skips a stage is not in its queue),
// and a consumer waiting for work wakes up for them, because the stage's turn may move past i.
//
// close(): no more pushes will come; consumers drain what is left, then pop() says so.
// abort(): the loop is stopping; every waiter wakes and gives up at once.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace pipescope::detail {

template <class T>
class stage_queue {
public:
    explicit stage_queue(std::size_t capacity) : ring_(capacity) {}

    std::size_t capacity() const noexcept { return ring_.size(); }

    // Waits while the queue is full. blocked(true) is called (under the lock) before the first wait,
    // blocked(false) after the last; moved(fill) once the item is in, under the lock, with the fill
    // after the push. Returns false (nothing pushed) if the queue was aborted.
    template <class Blocked, class Moved>
    bool push(T v, Blocked&& blocked, Moved&& moved) {
        std::unique_lock lock(m_);
        if (count_ == ring_.size() && !aborted_) {
            blocked(true);
            not_full_.wait(lock, [&] { return count_ < ring_.size() || aborted_; });
            blocked(false);
        }
        if (aborted_) return false;
        ring_[(head_ + count_) % ring_.size()] = std::move(v);
        ++count_;
        if (count_ > peak_) peak_ = count_;
        moved(count_);
        lock.unlock();
        not_empty_.notify_one();
        return true;
    }

    // Iteration `i` skipped the stage (serial_in_order stages only: one consumer).
    void mark(std::uint64_t i) {
        {
            std::lock_guard lock(m_);
            marks_.push_back(i);
        }
        not_empty_.notify_one();
    }

    // Waits while there is neither an item nor a mark and the queue is open. Takes at most one item
    // (into `out`, `got` set) and every mark (appended to `marks`); blocked() and moved() as in push.
    // Returns false when nothing more will come: aborted, or closed and drained.
    template <class Blocked, class Moved>
    bool pop(T& out, bool& got, std::vector<std::uint64_t>& marks, Blocked&& blocked, Moved&& moved) {
        got = false;
        std::unique_lock lock(m_);
        const auto ready = [&] { return count_ > 0 || !marks_.empty() || closed_ || aborted_; };
        if (!ready()) {
            blocked(true);
            not_empty_.wait(lock, ready);
            blocked(false);
        }
        if (aborted_) return false;
        marks.insert(marks.end(), marks_.begin(), marks_.end());
        const bool had_marks = !marks_.empty();
        marks_.clear();
        if (count_ == 0) return had_marks;   // closed: false once drained
        out = std::move(ring_[head_]);
        head_ = (head_ + 1) % ring_.size();
        --count_;
        got = true;
        moved(count_);
        lock.unlock();
        not_full_.notify_one();
        return true;
    }

    void close() {
        {
            std::lock_guard lock(m_);
            closed_ = true;
        }
        not_empty_.notify_all();
    }
    void abort() {
        {
            std::lock_guard lock(m_);
            aborted_ = true;
        }
        not_empty_.notify_all();
        not_full_.notify_all();
    }

    // The most items the queue ever held (never above capacity(): the invariant tests check).
    std::size_t peak() const {
        std::lock_guard lock(m_);
        return peak_;
    }

private:
    mutable std::mutex m_;
    std::condition_variable not_full_, not_empty_;
    std::vector<T> ring_;
    std::size_t head_ = 0, count_ = 0, peak_ = 0;
    std::vector<std::uint64_t> marks_;
    bool closed_ = false, aborted_ = false;
};

}  // namespace pipescope::detail
