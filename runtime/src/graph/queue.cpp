// The packet queue (runtime/include/pipescope/graph/queue.hpp).
//
// One mutex guards the bookkeeping; element data is never touched under it. Correctness first: every
// operation is O(packets in the window) under the lock, and windows are worked on outside it, so the
// lock is held for bookkeeping only. DANBI's scalable design (an MCS-like list to check commit order,
// an array indexed by ticket; seed 002 §III) can replace it later behind the same API.
//
// Happens-before for the data follows the lock: a producer's writes precede its commit (lock), which
// precedes the reserve that hands the packet to a consumer (same lock); a consumer's reads precede
// its commit, which precedes the release that lets a producer reuse the packet.
#include <pipescope/graph/queue.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

namespace pipescope::graph {

void footprint_meter::add(std::int64_t packets_delta, std::int64_t bytes_delta) noexcept {
    auto raise = [](std::atomic<std::int64_t>& peak, std::int64_t v) {
        std::int64_t p = peak.load(std::memory_order_relaxed);
        while (v > p && !peak.compare_exchange_weak(p, v, std::memory_order_relaxed)) {}
    };
    raise(peak_packets, packets.fetch_add(packets_delta, std::memory_order_acq_rel) + packets_delta);
    raise(peak_bytes, bytes.fetch_add(bytes_delta, std::memory_order_acq_rel) + bytes_delta);
}

namespace {
std::string quoted(const std::string& name) { return "packet_queue '" + name + "'"; }
}  // namespace

// ---------------------------------------------------------------------------------------------------
// Windows

void detail::window_base::check_reserved(const char* what) const {
    if (status_ == reserve_status::reserved) return;
    throw std::logic_error(std::string(what) +
                           ": the window holds no reservation (the reserve failed, or it was already committed)");
}

void detail::window_base::check_type(std::size_t size, std::size_t align) const {
    check_reserved("typed access");
    if (size != queue_->element_size())
        queue_->fail("typed access with an element type of " + std::to_string(size) + " bytes, but elements are " +
                     std::to_string(queue_->element_size()) + " bytes");
    if (align > alignof(std::max_align_t))
        queue_->fail("typed access with an over-aligned element type (alignment " + std::to_string(align) + ")");
}

std::size_t push_window::capacity() const noexcept {
    return queue_ ? packets_.size() * queue_->packet_elements() : 0;
}

std::span<std::byte> push_window::element(std::size_t i) const {
    check_reserved("push_window::element");
    if (i >= capacity())
        queue_->fail("push_window::element(" + std::to_string(i) + "): the window holds only " +
                     std::to_string(capacity()) + " elements");
    const std::size_t n = queue_->packet_elements(), size = queue_->element_size();
    return {queue_->packet_data(packets_[i / n].index) + (i % n) * size, size};
}

std::size_t pop_window::packet_size(std::size_t p) const {
    check_reserved("pop_window::packet_size");
    if (p >= packets_.size())
        queue_->fail("pop_window::packet_size(" + std::to_string(p) + "): the window holds only " +
                     std::to_string(packets_.size()) + " packets");
    return packets_[p].count;
}

std::span<const std::byte> pop_window::locate(const std::vector<detail::packet_ref>& refs, std::size_t i) const {
    // Packets may be short (the last packet of a commit), so walk the counts; windows are a few packets.
    for (const detail::packet_ref& r : refs) {
        if (i < r.count) return {queue_->packet_data(r.index) + i * queue_->element_size(), queue_->element_size()};
        i -= r.count;
    }
    queue_->fail("pop_window: element index past the packets (internal error)");
}

std::span<const std::byte> pop_window::element(std::size_t i) const {
    check_reserved("pop_window::element");
    if (i >= size_)
        queue_->fail("pop_window::element(" + std::to_string(i) + "): the window holds only " + std::to_string(size_) +
                     " elements (use peek() to read past it)");
    return locate(packets_, i);
}

std::span<const std::byte> pop_window::peek_element(std::size_t j) const {
    check_reserved("pop_window::peek");
    if (j >= peek_requested_)
        queue_->fail("pop_window::peek(" + std::to_string(j) + "): the window was reserved with peek " +
                     std::to_string(peek_requested_) + "; reserve with a larger peek to read further");
    if (j >= peek_size_)
        queue_->fail("pop_window::peek(" + std::to_string(j) + "): only " + std::to_string(peek_size_) + " of the " +
                     std::to_string(peek_requested_) + " requested peek elements exist (end of stream, or the queue " +
                     "was full of short packets); check peek_size()");
    return locate(peek_packets_, j);
}

// ---------------------------------------------------------------------------------------------------
// The queue

packet_queue::packet_queue(queue_config config) : config_(std::move(config)) {
    auto require = [&](bool ok, const char* what) {
        if (!ok) throw std::invalid_argument(quoted(config_.name) + ": " + what);
    };
    require(config_.element_size > 0, "element_size is 0");
    require(config_.packet_elements > 0, "packet_elements is 0");
    require(config_.capacity_packets > 0, "capacity_packets is 0");
    require(config_.producers > 0, "producers is 0 (the stream would be over before it began)");
    constexpr std::size_t u32 = std::numeric_limits<std::uint32_t>::max();
    require(config_.packet_elements <= u32 && config_.capacity_packets <= u32, "more than 2^32 packets or elements per packet");
    constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
    require(config_.element_size <= max / config_.packet_elements &&
                config_.element_size * config_.packet_elements <= max / config_.capacity_packets,
            "element_size × packet_elements × capacity_packets overflows");

    packet_bytes_ = config_.element_size * config_.packet_elements;
    grow_locked(config_.capacity_packets);   // block 0: the whole capacity of a bounded queue
    open_producers_ = config_.producers;
    sync_hints_locked();
}

// Block k starts at packet capacity × (2^k − 1) and holds capacity × 2^k packets.
std::byte* packet_queue::packet_data(std::uint32_t index) const noexcept {
    const std::size_t c = config_.capacity_packets, i = index;
    std::size_t k = 0, start = 0;
    while (i >= start + (c << k)) start += c << k++;
    return blocks_[k].get() + (i - start) * packet_bytes_;
}

// Adds blocks until at least `needed` packets are free. False when the queue cannot grow that far
// (2^32 packets, or max_blocks): the caller answers `full`, as a bounded queue would.
bool packet_queue::grow_locked(std::size_t needed) {
    while (free_.size() < needed) {
        if (blocks_used_ == max_blocks) return false;
        const std::size_t count = config_.capacity_packets << blocks_used_;
        if (packets_allocated_ + count > std::numeric_limits<std::uint32_t>::max() ||
            count > std::numeric_limits<std::size_t>::max() / packet_bytes_)
            return false;
        blocks_[blocks_used_++] = std::make_unique<std::byte[]>(count * packet_bytes_);
        // Pushed in reverse so the lowest index is used first (free_ is a LIFO stack).
        std::vector<std::uint32_t> fresh;
        fresh.reserve(count);
        for (std::size_t i = count; i-- > 0;) fresh.push_back(static_cast<std::uint32_t>(packets_allocated_ + i));
        free_.insert(free_.begin(), fresh.begin(), fresh.end());
        packets_allocated_ += count;
    }
    return true;
}

void packet_queue::sync_hints_locked() noexcept {
    ready_hint_.store(ready_.size(), std::memory_order_release);
    free_hint_.store(free_.size(), std::memory_order_release);
    in_use_hint_.store(stats_.packets_in_use, std::memory_order_release);
    waiting_hint_.store(waiting_commits_, std::memory_order_release);
}

std::size_t packet_queue::free_packets_hint() const noexcept {
    return config_.unbounded ? std::numeric_limits<std::size_t>::max() : free_hint_.load(std::memory_order_acquire);
}

double packet_queue::fill_ratio() const noexcept {
    return static_cast<double>(in_use_hint_.load(std::memory_order_acquire)) / static_cast<double>(config_.capacity_packets);
}

void packet_queue::fail(const std::string& what) const { throw std::logic_error(quoted(config_.name) + ": " + what); }

push_window packet_queue::try_reserve_push(std::size_t packets) {
    if (packets == 0) fail("try_reserve_push(0): reserve at least one packet");
    if (packets > config_.capacity_packets && !config_.unbounded)
        fail("try_reserve_push(" + std::to_string(packets) + "): more than the capacity of " +
             std::to_string(config_.capacity_packets) + " packets; it could never succeed");
    push_window w;
    w.queue_ = this;
    std::lock_guard lock(mutex_);
    if (ended_locked()) fail("try_reserve_push after every producer closed");
    if (free_.size() < packets && !(config_.unbounded && grow_locked(packets))) {
        w.status_ = reserve_status::full;  // backpressure (seed 004 §III-A)
        return w;
    }
    for (std::size_t i = 0; i < packets; ++i) {
        w.packets_.push_back({free_.back(), static_cast<std::uint32_t>(config_.packet_elements)});
        free_.pop_back();
    }
    w.status_ = reserve_status::reserved;
    w.ticket_ = push_base_ + push_open_.size();  // DANBI ticket: the order of reservations (seed 002 §II)
    push_open_.push_back({false, {}});
    ++push_outstanding_;
    in_use_locked(static_cast<std::int64_t>(packets));
    update_peaks_locked();
    sync_hints_locked();
    return w;
}

bool packet_queue::commit_push(push_window& w) { return commit_push(w, w.capacity()); }

bool packet_queue::commit_push(push_window& w, std::size_t elements) {
    w.check_reserved("commit_push");
    if (w.queue_ != this) fail("commit_push: the window was reserved from queue '" + w.queue_->name() + "'");
    if (elements > w.capacity())
        fail("commit_push(" + std::to_string(elements) + " elements): the window holds only " +
             std::to_string(w.capacity()));
    signals s;
    bool applied = false;
    {
        std::lock_guard lock(mutex_);
        const std::uint64_t slot = w.ticket_ - push_base_;
        if (w.ticket_ < push_base_ || slot >= push_open_.size() || push_open_[slot].committed)
            fail("commit_push: ticket " + std::to_string(w.ticket_) + " is not an open reservation (committed twice?)");
        // Pack the elements into the first packets; a short last packet is a GRAMPS partial packet.
        pending& p = push_open_[slot];
        std::size_t left = elements;
        for (const detail::packet_ref& r : w.packets_) {
            if (left == 0) {
                free_.push_back(r.index);
                in_use_locked(-1);
                s.space = true;
                continue;
            }
            const auto n = static_cast<std::uint32_t>(std::min(left, config_.packet_elements));
            p.packets.push_back({r.index, n});
            left -= n;
        }
        p.committed = true;
        --push_outstanding_;
        if (!config_.ordered) {
            publish_locked(p, s);  // unordered: visible at commit
            p.packets.clear();
            applied = true;
        } else {
            ++waiting_commits_;   // until the prefix before it is committed (just below, or later)
        }
        // Ordered: a commit becomes visible only after every earlier ticket committed. A later
        // committer does not wait; it leaves its packets here and whoever completes the prefix
        // publishes them (seed 002 §II "Ticket Synchronization"; seed 004 §III-A "Ordered Data Queues").
        while (!push_open_.empty() && push_open_.front().committed) {
            if (push_base_ == w.ticket_) applied = true;
            if (config_.ordered) --waiting_commits_;
            publish_locked(push_open_.front(), s);
            push_open_.pop_front();
            ++push_base_;
        }
        sync_hints_locked();
        if (s.data) data_version_.fetch_add(1, std::memory_order_release);
        if (s.space) space_version_.fetch_add(1, std::memory_order_release);
    }
    w = push_window{};
    emit(s);
    return applied;
}

void packet_queue::close() {
    signals s;
    {
        std::lock_guard lock(mutex_);
        if (open_producers_ == 0)
            fail("close: all " + std::to_string(config_.producers) + " producers already closed");
        if (open_producers_ == 1 && push_outstanding_ > 0)
            fail("close: the last producer closed with " + std::to_string(push_outstanding_) +
                 " push reservation(s) not committed");
        if (--open_producers_ == 0) {
            s.data = true;  // consumers waiting for data may now see end of stream
            data_version_.fetch_add(1, std::memory_order_release);
        }
    }
    emit(s);
}

pop_window packet_queue::try_reserve_pop(std::size_t packets, std::size_t peek) {
    const std::size_t n = config_.packet_elements;
    if (packets == 0) fail("try_reserve_pop(0): reserve at least one packet");
    if (!config_.unbounded &&
        (packets > config_.capacity_packets || peek / n + (peek % n != 0) > config_.capacity_packets - packets))
        fail("try_reserve_pop(" + std::to_string(packets) + ", peek " + std::to_string(peek) + "): needs " +
             std::to_string(packets) + " + ceil(" + std::to_string(peek) + " / " + std::to_string(n) +
             ") packets, more than the capacity of " + std::to_string(config_.capacity_packets));
    pop_window w;
    w.queue_ = this;
    w.peek_requested_ = peek;
    std::lock_guard lock(mutex_);
    const bool ended = ended_locked();
    const std::size_t take = std::min(packets, ready_.size());
    if (take < packets && !ended) return w;  // empty
    if (take == 0) {
        w.status_ = reserve_status::end_of_stream;
        return w;
    }
    std::size_t size = 0;
    for (std::size_t i = 0; i < take; ++i) size += ready_[i].count;
    const std::size_t peek_size = std::min(peek, ready_elements_ - size);
    // Not enough to peek at: wait, unless nothing can change — the stream ended, or the queue is full
    // with nothing reserved on either side (short packets put the peek beyond the capacity).
    const bool stuck = !config_.unbounded && free_.empty() && push_outstanding_ == 0 && pop_open_.empty();
    if (peek_size < peek && !ended && !stuck) return w;  // empty

    for (std::size_t i = 0; i < take; ++i) {
        w.packets_.push_back(ready_.front());
        ready_.pop_front();
    }
    // The peek packets stay published: later windows may take them, but their release waits for this
    // window's commit (commit_pop), so they cannot be overwritten while this window reads them.
    for (std::size_t i = 0, seen = 0; seen < peek_size; ++i) {
        w.peek_packets_.push_back(ready_[i]);
        seen += ready_[i].count;
    }
    ready_elements_ -= size;
    w.size_ = size;
    w.peek_size_ = peek_size;
    w.status_ = reserve_status::reserved;
    w.ticket_ = pop_base_ + pop_open_.size();
    pop_open_.push_back({false, w.packets_});
    sync_hints_locked();
    return w;
}

void packet_queue::commit_pop(pop_window& w) {
    w.check_reserved("commit_pop");
    if (w.queue_ != this) fail("commit_pop: the window was reserved from queue '" + w.queue_->name() + "'");
    signals s;
    {
        std::lock_guard lock(mutex_);
        const std::uint64_t slot = w.ticket_ - pop_base_;
        if (w.ticket_ < pop_base_ || slot >= pop_open_.size() || pop_open_[slot].committed)
            fail("commit_pop: ticket " + std::to_string(w.ticket_) + " is not an open reservation (committed twice?)");
        pop_open_[slot].committed = true;
        stats_.elements_popped += w.size_;
        stats_.packets_popped += w.packets_.size();
        // Release in reservation order, like DANBI's totally ordered commits (seed 002 §II "Data
        // Queue"), without blocking: a later window's commit is recorded, the earliest one frees both.
        while (!pop_open_.empty() && pop_open_.front().committed) {
            release_locked(pop_open_.front(), s);
            pop_open_.pop_front();
            ++pop_base_;
        }
        sync_hints_locked();
        if (s.space) space_version_.fetch_add(1, std::memory_order_release);
    }
    w = pop_window{};
    emit(s);
}

void packet_queue::publish_locked(const pending& p, signals& s) {
    for (const detail::packet_ref& r : p.packets) {
        ready_.push_back(r);
        ready_elements_ += r.count;
        stats_.elements_queued += r.count;
        stats_.elements_pushed += r.count;
        ++stats_.packets_pushed;
        s.data = true;
    }
    update_peaks_locked();
}

void packet_queue::release_locked(const pending& p, signals& s) {
    for (const detail::packet_ref& r : p.packets) {
        free_.push_back(r.index);
        stats_.elements_queued -= r.count;
        in_use_locked(-1);
        s.space = true;
    }
}

void packet_queue::in_use_locked(std::int64_t delta) noexcept {
    stats_.packets_in_use = static_cast<std::size_t>(static_cast<std::int64_t>(stats_.packets_in_use) + delta);
    if (config_.footprint) config_.footprint->add(delta, delta * static_cast<std::int64_t>(packet_bytes_));
}

void packet_queue::update_peaks_locked() noexcept {
    stats_.peak_packets_in_use = std::max(stats_.peak_packets_in_use, stats_.packets_in_use);
    stats_.peak_elements_queued = std::max(stats_.peak_elements_queued, stats_.elements_queued);
}

void packet_queue::emit(signals s) const {
    if (!config_.on_signal) return;
    if (s.data) config_.on_signal(*this, queue_signal::data);
    if (s.space) config_.on_signal(*this, queue_signal::space);
}

bool packet_queue::closed() const {
    std::lock_guard lock(mutex_);
    return ended_locked();
}

bool packet_queue::end_of_stream() const {
    std::lock_guard lock(mutex_);
    return ended_locked() && ready_.empty();
}

queue_stats packet_queue::stats() const {
    std::lock_guard lock(mutex_);
    queue_stats s = stats_;
    s.bytes_in_use = s.packets_in_use * packet_bytes_;
    s.peak_bytes_in_use = s.peak_packets_in_use * packet_bytes_;
    return s;
}

}  // namespace pipescope::graph
