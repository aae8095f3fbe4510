// Internal: the Chase–Lev work-stealing deque (Chase & Lev, SPAA 2005), with the memory orderings
// of Lê, Pop, Cohen & Zappa Nardelli (PPoPP 2013). The owner pushes and pops at the bottom; thieves
// take from the top. The ring grows by doubling; retired rings are kept until the deque dies,
// because a thief may still be reading one.
//
// The StoreLoad orderings the algorithm needs are expressed with seq_cst operations on top/bottom
// rather than standalone fences, so ThreadSanitizer understands them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace pipescope::detail {

template <class T>
class chase_lev_deque {
    static_assert(std::is_pointer_v<T>, "the deque holds pointers; nullptr means empty");

    struct ring {
        explicit ring(std::int64_t capacity)
            : mask(capacity - 1), slots(std::make_unique<std::atomic<T>[]>(static_cast<std::size_t>(capacity))) {}
        std::int64_t capacity() const { return mask + 1; }
        T get(std::int64_t i) const { return slots[static_cast<std::size_t>(i & mask)].load(std::memory_order_relaxed); }
        void put(std::int64_t i, T v) { slots[static_cast<std::size_t>(i & mask)].store(v, std::memory_order_relaxed); }
        std::int64_t mask;
        std::unique_ptr<std::atomic<T>[]> slots;
    };

public:
    explicit chase_lev_deque(std::int64_t capacity = 256) {
        rings_.push_back(std::make_unique<ring>(capacity));
        ring_.store(rings_.back().get(), std::memory_order_relaxed);
    }

    // Owner only.
    void push(T v) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t t = top_.load(std::memory_order_acquire);
        ring* r = ring_.load(std::memory_order_relaxed);
        if (b - t >= r->capacity()) r = grow(r, t, b);
        r->put(b, v);
        bottom_.store(b + 1, std::memory_order_release);
    }

    // Owner only. nullptr when empty.
    T pop() {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        ring* r = ring_.load(std::memory_order_relaxed);
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) {   // empty
            bottom_.store(b + 1, std::memory_order_relaxed);
            return nullptr;
        }
        T v = r->get(b);
        if (t == b) {   // last element: race the thieves for it
            if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) v = nullptr;
            bottom_.store(b + 1, std::memory_order_relaxed);
        }
        return v;
    }

    // Any thread. nullptr when empty or when another thief won the race.
    T steal() {
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        if (t >= b) return nullptr;
        ring* r = ring_.load(std::memory_order_acquire);
        T v = r->get(t);
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) return nullptr;
        return v;
    }

    // Any thread; a snapshot.
    bool looks_empty() const { return top_.load(std::memory_order_seq_cst) >= bottom_.load(std::memory_order_seq_cst); }

private:
    ring* grow(ring* old, std::int64_t t, std::int64_t b) {
        auto bigger = std::make_unique<ring>(old->capacity() * 2);
        for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
        ring* r = bigger.get();
        rings_.push_back(std::move(bigger));
        ring_.store(r, std::memory_order_release);
        return r;
    }

    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    alignas(64) std::atomic<ring*> ring_{nullptr};
    std::vector<std::unique_ptr<ring>> rings_;   // owner only; keeps retired rings alive
};

}   // namespace pipescope::detail
