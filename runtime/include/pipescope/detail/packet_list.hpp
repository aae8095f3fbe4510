// Internal: the packets of one queue reservation, and the FIFO rings the queue keeps them in.
//
// Both exist so that a queue operation allocates nothing on its common path. A window almost
// always holds one or two packets (an instance's input, its declared max_packets), so packet_list
// keeps two inline and only goes to the heap beyond; the queue's FIFOs (published packets, open
// reservations) are rings that grow by doubling and never shrink, where std::deque would allocate
// and free a block every few operations as the FIFO moves through memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace pipescope::graph::detail {

struct packet_ref {
    std::byte* data;       // the packet's memory, from the queue's packet_allocator
    std::uint32_t count;   // elements it holds
};

// Packets that `elements` fill, the last one possibly short. Exact up to SIZE_MAX, so the queue can
// check a caller's argument with it. Zero elements — the usual peek of a reserve, the usual push
// count of an instance that wrote nothing — cost no division (a 64-bit `div` is tens of cycles).
inline std::size_t packets_for(std::size_t elements, std::size_t per_packet) noexcept {
    if (elements == 0) return 0;
    return elements / per_packet + (elements % per_packet != 0);
}

class packet_list {
public:
    static constexpr std::size_t inline_capacity = 2;

    packet_list() noexcept = default;
    packet_list(const packet_list& o) { append(o); }
    packet_list(packet_list&& o) noexcept { steal(o); }
    packet_list& operator=(const packet_list& o) {
        if (this != &o) {
            clear();
            append(o);
        }
        return *this;
    }
    packet_list& operator=(packet_list&& o) noexcept {
        if (this != &o) {
            heap_.reset();
            capacity_ = inline_capacity;
            size_ = 0;
            steal(o);
        }
        return *this;
    }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    packet_ref* begin() noexcept { return data(); }
    packet_ref* end() noexcept { return data() + size_; }
    const packet_ref* begin() const noexcept { return data(); }
    const packet_ref* end() const noexcept { return data() + size_; }
    packet_ref& operator[](std::size_t i) noexcept { return data()[i]; }
    const packet_ref& operator[](std::size_t i) const noexcept { return data()[i]; }
    void clear() noexcept { size_ = 0; }   // keeps the capacity for the next reservation
    void push_back(packet_ref r) {
        if (size_ == capacity_) grow(capacity_ * 2);
        data()[size_++] = r;
    }

private:
    packet_ref* data() noexcept { return heap_ ? heap_.get() : inline_; }
    const packet_ref* data() const noexcept { return heap_ ? heap_.get() : inline_; }
    void grow(std::size_t capacity) {
        auto bigger = std::make_unique<packet_ref[]>(capacity);
        for (std::size_t i = 0; i < size_; ++i) bigger[i] = data()[i];
        heap_ = std::move(bigger);
        capacity_ = capacity;
    }
    void append(const packet_list& o) {
        if (size_ + o.size_ > capacity_) grow(size_ + o.size_);
        for (const packet_ref& r : o) data()[size_++] = r;
    }
    void steal(packet_list& o) noexcept {
        if (o.heap_) {
            heap_ = std::move(o.heap_);
            capacity_ = o.capacity_;
        } else {
            for (std::size_t i = 0; i < o.size_; ++i) inline_[i] = o.inline_[i];
        }
        size_ = o.size_;
        o.size_ = 0;
        o.capacity_ = inline_capacity;
    }

    // Left uninitialized on purpose: only the first size_ slots are ever read. Zeroing them made
    // every window's construction a `rep stos` over the whole window (three to four per graph
    // instance, tens of cycles each to start up on x86: issue 17's profile).
    packet_ref inline_[inline_capacity];
    std::unique_ptr<packet_ref[]> heap_;
    std::size_t size_ = 0, capacity_ = inline_capacity;
};

// A FIFO on a power-of-two ring: push and pop at both ends, index from the front.
template <class T>
class ring {
public:
    std::size_t size() const noexcept { return tail_ - head_; }
    bool empty() const noexcept { return head_ == tail_; }
    T& operator[](std::size_t i) noexcept { return slots_[(head_ + i) & mask_]; }
    const T& operator[](std::size_t i) const noexcept { return slots_[(head_ + i) & mask_]; }
    T& front() noexcept { return (*this)[0]; }
    T& back() noexcept { return (*this)[size() - 1]; }
    void push_back(T v) {
        if (size() == capacity_) grow();
        slots_[tail_++ & mask_] = std::move(v);
    }
    void push_front(T v) {
        if (size() == capacity_) grow();
        slots_[--head_ & mask_] = std::move(v);
    }
    void pop_front() noexcept { ++head_; }   // the slot keeps its value (and capacity) for reuse
    void pop_back() noexcept { --tail_; }

private:
    void grow() {
        const std::size_t capacity = capacity_ ? capacity_ * 2 : 8;
        auto bigger = std::make_unique<T[]>(capacity);
        for (std::size_t i = 0; i < size(); ++i) bigger[i] = std::move((*this)[i]);
        tail_ = size();
        head_ = 0;
        slots_ = std::move(bigger);
        capacity_ = capacity;
        mask_ = capacity - 1;
    }

    std::unique_ptr<T[]> slots_;
    std::size_t capacity_ = 0, mask_ = 0;
    std::size_t head_ = 0, tail_ = 0;   // positions, wrapping through mask_ (head_ may go "below" 0)
};

}   // namespace pipescope::graph::detail
