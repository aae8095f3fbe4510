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
#include <pipescope/scheduler.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <utility>

namespace pipescope::graph {

std::uint64_t footprint_meter::add(std::int64_t packets_delta, std::int64_t bytes_delta) noexcept {
    // Both fields stay non-negative (a queue gives back only what it took), so adding the packed
    // deltas in two's complement carries and borrows exactly as two separate adds would.
    const std::uint64_t delta =
        (static_cast<std::uint64_t>(packets_delta) << byte_bits) + static_cast<std::uint64_t>(bytes_delta);
    const std::uint64_t now = now_.fetch_add(delta, std::memory_order_acq_rel) + delta;
    if (packets_delta <= 0) return now;   // a peak can only be reached by an increase
    auto raise = [](std::atomic<std::int64_t>& peak, std::int64_t v) {
        std::int64_t p = peak.load(std::memory_order_relaxed);
        while (v > p && !peak.compare_exchange_weak(p, v, std::memory_order_relaxed)) {
        }
    };
    raise(peak_packets_, static_cast<std::int64_t>(now >> byte_bits));
    raise(peak_bytes_, static_cast<std::int64_t>(now & byte_mask));
    return now;
}

namespace {
std::string quoted(const std::string& name) { return "packet_queue '" + name + "'"; }
}   // namespace

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

std::size_t push_window::capacity() const noexcept { return queue_ ? packets_.size() * queue_->packet_elements() : 0; }

std::span<std::byte> push_window::element(std::size_t i) const {
    check_reserved("push_window::element");
    if (i >= capacity())
        queue_->fail("push_window::element(" + std::to_string(i) + "): the window holds only " + std::to_string(capacity()) +
                     " elements");
    const std::size_t n = queue_->packet_elements(), size = queue_->element_size();
    if (i < n) return {packets_[0].data + i * size, size};   // most windows hold one packet: no `div`
    return {packets_[i / n].data + (i % n) * size, size};
}

std::span<std::byte> push_window::packet_bytes(std::size_t p) const {
    check_reserved("push_window::packet_bytes");
    if (p >= packets_.size())
        queue_->fail("push_window::packet_bytes(" + std::to_string(p) + "): the window holds only " +
                     std::to_string(packets_.size()) + " packets");
    return {packets_[p].data, queue_->packet_bytes()};
}

std::span<const std::byte> pop_window::packet_bytes(std::size_t p) const {
    return {packets_[p].data, packet_size(p) * queue_->element_size()};   // packet_size checks p
}

std::size_t pop_window::packet_size(std::size_t p) const {
    check_reserved("pop_window::packet_size");
    if (p >= packets_.size())
        queue_->fail("pop_window::packet_size(" + std::to_string(p) + "): the window holds only " +
                     std::to_string(packets_.size()) + " packets");
    return packets_[p].count;
}

std::span<const std::byte> pop_window::locate(const detail::packet_list& refs, std::size_t i) const {
    // Packets may be short (the last packet of a commit), so walk the counts; windows are a few packets.
    for (const detail::packet_ref& r : refs) {
        if (i < r.count) return {r.data + i * queue_->element_size(), queue_->element_size()};
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

namespace {

// The per-queue buffer manager (seed 004 §III-B): the queue's own packets, preallocated to its
// capacity and reused LIFO (a just-released packet is still warm). An unbounded queue grows it in
// blocks, block k ≥ 1 twice as large as block k-1; blocks never move, so packets handed out stay
// valid. Not thread-safe: only its queue calls it, under the queue's lock.
class queue_pool final : public packet_allocator {
public:
    void provision(std::size_t bytes, std::size_t packets) override {
        bytes_ = bytes;
        first_block_ = packets;
        if (!grow()) throw std::bad_alloc();
    }
    std::byte* allocate(std::size_t, int) noexcept override {
        if (free_.empty() && !grow()) return nullptr;
        std::byte* p = free_.back();
        free_.pop_back();
        return p;
    }
    // Never reallocates: grow() reserved room for every packet there is.
    void release(std::byte* packet, std::size_t, int) noexcept override { free_.push_back(packet); }

private:
    // False when the queue cannot grow further (max_blocks, size overflow, out of memory): the
    // queue answers `full`, as a bounded queue would.
    bool grow() noexcept {
        const std::size_t k = blocks_.size();
        if (k == max_blocks || first_block_ > (std::numeric_limits<std::size_t>::max() >> k)) return false;
        const std::size_t count = first_block_ << k;
        if (count > std::numeric_limits<std::size_t>::max() / bytes_) return false;
        try {
            free_.reserve(allocated_ + count);
            blocks_.push_back(std::make_unique<std::byte[]>(count * bytes_));
        } catch (const std::exception&) {
            return false;
        }
        // Pushed in reverse so the lowest address is used first (free_ is a LIFO stack).
        for (std::size_t i = count; i-- > 0;) free_.push_back(blocks_.back().get() + i * bytes_);
        allocated_ += count;
        return true;
    }

    static constexpr std::size_t max_blocks = 40;
    std::size_t bytes_ = 0, first_block_ = 0, allocated_ = 0;
    std::vector<std::unique_ptr<std::byte[]>> blocks_;
    std::vector<std::byte*> free_;
};

}   // namespace

packet_queue::packet_queue(queue_config config) : config_(std::move(config)) {
    auto require = [&](bool ok, const char* what) {
        if (!ok) throw std::invalid_argument(quoted(config_.name) + ": " + what);
    };
    require(config_.element_size > 0, "element_size is 0");
    require(config_.packet_elements > 0, "packet_elements is 0");
    require(config_.capacity_packets > 0, "capacity_packets is 0");
    require(config_.producers > 0, "producers is 0 (the stream would be over before it began)");
    constexpr std::size_t u32 = std::numeric_limits<std::uint32_t>::max();
    require(config_.packet_elements <= u32 && config_.capacity_packets <= u32,
            "more than 2^32 packets or elements per packet");
    constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
    require(config_.element_size <= max / config_.packet_elements &&
                config_.element_size * config_.packet_elements <= max / config_.capacity_packets,
            "element_size × packet_elements × capacity_packets overflows");

    packet_bytes_ = config_.element_size * config_.packet_elements;
    allocator_ = config_.allocator ? config_.allocator : std::make_shared<queue_pool>();
    allocator_->provision(packet_bytes_, config_.capacity_packets);   // the whole capacity of a bounded queue
    open_producers_ = config_.producers;
    sync_hints_locked();
}

// Every packet the queue still holds goes back: open or waiting push reservations, published
// packets, and pop windows not yet released. (A push window reserved and never committed is among
// the open reservations; a pop window's peek packets are still among the published ones.)
packet_queue::~packet_queue() {
    for (std::size_t i = 0; i < push_open_.size(); ++i)
        for (const detail::packet_ref& r : push_open_[i].packets) release_packet_locked(r.data);
    for (std::size_t i = 0; i < ready_.size(); ++i) release_packet_locked(ready_[i].data);
    for (std::size_t i = 0; i < pop_open_.size(); ++i)
        for (const detail::packet_ref& r : pop_open_[i].packets) release_packet_locked(r.data);
}

void packet_queue::release_packet_locked(std::byte* data) noexcept {
    allocator_->release(data, packet_bytes_, this_worker_index());
}

std::size_t packet_queue::free_locked() const noexcept {
    if (config_.unbounded) return std::numeric_limits<std::size_t>::max();
    return config_.capacity_packets - std::min(config_.capacity_packets, stats_.packets_in_use);
}

namespace {
// The hints and versions are written only under the queue's lock, so the writer's own relaxed load
// is the current value: a store that would not change it is skipped (it would still pull the line
// away from every worker polling it), and a version moves with a load and a store instead of a
// locked add.
template <class T, class V>
void store_if_changed(std::atomic<T>& a, V v) noexcept {
    if (a.load(std::memory_order_relaxed) != static_cast<T>(v)) a.store(static_cast<T>(v), std::memory_order_release);
}
void advance_locked(std::atomic<std::uint64_t>& version) noexcept {
    version.store(version.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}
}   // namespace

void packet_queue::sync_hints_locked() noexcept {
    store_if_changed(ready_hint_, ready_.size());
    store_if_changed(free_hint_, free_locked());
    store_if_changed(in_use_hint_, stats_.packets_in_use);
    store_if_changed(waiting_hint_, waiting_commits_);
    store_if_changed(published_hint_, stats_.packets_pushed);
    store_if_changed(closed_hint_, ended_locked());
    store_if_changed(end_hint_, ended_locked() && ready_.empty());
}

std::size_t packet_queue::free_packets_hint() const noexcept { return free_hint_.load(std::memory_order_acquire); }

double packet_queue::fill_ratio() const noexcept {
    return static_cast<double>(in_use_hint_.load(std::memory_order_acquire)) / static_cast<double>(config_.capacity_packets);
}

void packet_queue::fail(const std::string& what) const { throw std::logic_error(quoted(config_.name) + ": " + what); }

push_window packet_queue::try_reserve_push(std::size_t packets, queue_change* change) {
    if (packets == 0) fail("try_reserve_push(0): reserve at least one packet");
    if (packets > config_.capacity_packets && !config_.unbounded)
        fail("try_reserve_push(" + std::to_string(packets) + "): more than the capacity of " +
             std::to_string(config_.capacity_packets) + " packets; it could never succeed");
    push_window w;
    w.queue_ = this;
    std::lock_guard lock(mutex_);
    if (ended_locked()) fail("try_reserve_push after every producer closed");
    if (free_locked() < packets) {
        w.status_ = reserve_status::full;   // backpressure (seed 004 §III-A)
        ++push_refusals_;
        return w;
    }
    // The buffer manager only decides which memory (seed 004 §III-B); the capacity was checked above.
    const int worker = this_worker_index();
    for (std::size_t i = 0; i < packets; ++i) {
        std::byte* data = allocator_->allocate(packet_bytes_, worker);
        if (!data) {   // out of memory (or an unbounded pool that cannot grow): as if full
            for (const detail::packet_ref& r : w.packets_) allocator_->release(r.data, packet_bytes_, worker);
            w.packets_.clear();
            w.status_ = reserve_status::full;
            ++push_refusals_;
            return w;
        }
        w.packets_.push_back({data, static_cast<std::uint32_t>(config_.packet_elements)});
    }
    w.status_ = reserve_status::reserved;
    w.ticket_ = push_base_ + push_open_.size();   // DANBI ticket: the order of reservations (seed 002 §II)
    w.refusals_ = push_refusals_;
    push_open_.push_back({false, w.packets_});   // held here until the commit (see pending)
    ++push_outstanding_;
    in_use_locked(static_cast<std::int64_t>(packets), change);
    update_peaks_locked();
    sync_hints_locked();
    return w;
}

bool packet_queue::commit_push(push_window& w) { return commit_push(w, w.capacity()); }

void packet_queue::cancel_push(push_window& w) {
    w.check_reserved("cancel_push");
    commit_push_impl(w, 0, true, nullptr);
}

bool packet_queue::commit_push(push_window& w, std::size_t elements, queue_change* change) {
    return commit_push_impl(w, elements, false, change);
}

bool packet_queue::commit_push_impl(push_window& w, std::size_t elements, bool cancelling, queue_change* change) {
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
        p.packets.clear();   // it held the reserved packets; from now on, the published ones
        std::size_t left = elements, unused = 0;
        for (const detail::packet_ref& r : w.packets_) {
            if (left == 0) {
                release_packet_locked(r.data);
                ++unused;
                s.space = true;
                continue;
            }
            const auto n = static_cast<std::uint32_t>(std::min(left, config_.packet_elements));
            p.packets.push_back({r.data, n});
            left -= n;
        }
        if (unused) in_use_locked(-static_cast<std::int64_t>(unused), change);
        p.committed = true;
        --push_outstanding_;
        if (!config_.ordered) {
            publish_locked(p, s);   // unordered: visible at commit
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
        // cancel_push: a producer refused while this window held the packets read space_version
        // before its try and waits for it to move — only then is the space news.
        if (cancelling && push_refusals_ == w.refusals_) s.space = false;
        if (s.data) advance_locked(data_version_);
        if (s.space) advance_locked(space_version_);
    }
    w = push_window{};
    emit(s);
    return applied;
}

void packet_queue::close() {
    signals s;
    {
        std::lock_guard lock(mutex_);
        if (open_producers_ == 0) fail("close: all " + std::to_string(config_.producers) + " producers already closed");
        if (open_producers_ == 1 && push_outstanding_ > 0)
            fail("close: the last producer closed with " + std::to_string(push_outstanding_) +
                 " push reservation(s) not committed");
        if (--open_producers_ == 0) {
            s.data = true;   // consumers waiting for data may now see end of stream
            sync_hints_locked();
            advance_locked(data_version_);
        }
    }
    emit(s);
}

pop_window packet_queue::try_reserve_pop(std::size_t packets, std::size_t peek) {
    const std::size_t n = config_.packet_elements;
    if (packets == 0) fail("try_reserve_pop(0): reserve at least one packet");
    if (!config_.unbounded &&
        (packets > config_.capacity_packets || detail::packets_for(peek, n) > config_.capacity_packets - packets))
        fail("try_reserve_pop(" + std::to_string(packets) + ", peek " + std::to_string(peek) + "): needs " +
             std::to_string(packets) + " + ceil(" + std::to_string(peek) + " / " + std::to_string(n) +
             ") packets, more than the capacity of " + std::to_string(config_.capacity_packets));
    pop_window w;
    w.queue_ = this;
    w.peek_requested_ = peek;
    std::lock_guard lock(mutex_);
    const bool ended = ended_locked();
    const std::size_t take = std::min(packets, ready_.size());
    if (take < packets && !ended) {
        ++pop_refusals_;
        return w;   // empty
    }
    if (take == 0) {
        w.status_ = reserve_status::end_of_stream;
        return w;
    }
    std::size_t size = 0;
    for (std::size_t i = 0; i < take; ++i) size += ready_[i].count;
    const std::size_t peek_size = std::min(peek, ready_elements_ - size);
    // Not enough to peek at: wait, unless nothing can change — the stream ended, or the queue is full
    // with nothing reserved on either side (short packets put the peek beyond the capacity).
    const bool stuck = free_locked() == 0 && push_outstanding_ == 0 && pop_open_.empty();
    if (peek_size < peek && !ended && !stuck) {
        ++pop_refusals_;
        return w;   // empty
    }

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
    w.refusals_ = pop_refusals_;
    pop_open_.push_back({false, w.packets_});
    sync_hints_locked();
    return w;
}

void packet_queue::cancel_pop(pop_window& w) {
    w.check_reserved("cancel_pop");
    if (w.queue_ != this) fail("cancel_pop: the window was reserved from queue '" + w.queue_->name() + "'");
    signals s;
    {
        std::lock_guard lock(mutex_);
        if (pop_open_.empty() || w.ticket_ != pop_base_ + pop_open_.size() - 1)
            fail("cancel_pop: ticket " + std::to_string(w.ticket_) + " is not the latest pop reservation");
        for (std::size_t i = w.packets_.size(); i-- > 0;) {
            ready_.push_front(w.packets_[i]);
            ready_elements_ += w.packets_[i].count;
        }
        pop_open_.pop_back();
        sync_hints_locked();
        // Data reappears; it is news only to a consumer that was told `empty` while this window held it.
        if (pop_refusals_ != w.refusals_) {
            s.data = true;
            advance_locked(data_version_);
        }
    }
    w = pop_window{};
    emit(s);
}

void packet_queue::commit_pop(pop_window& w, queue_change* change) {
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
        std::size_t released = 0;
        while (!pop_open_.empty() && pop_open_.front().committed) {
            released += release_locked(pop_open_.front(), s);
            pop_open_.pop_front();
            ++pop_base_;
        }
        if (released) in_use_locked(-static_cast<std::int64_t>(released), change);
        sync_hints_locked();
        if (s.space) advance_locked(space_version_);
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

std::size_t packet_queue::release_locked(const pending& p, signals& s) {
    for (const detail::packet_ref& r : p.packets) {
        release_packet_locked(r.data);
        stats_.elements_queued -= r.count;
        s.space = true;
    }
    return p.packets.size();
}

void packet_queue::in_use_locked(std::int64_t delta, queue_change* change) noexcept {
    stats_.packets_in_use = static_cast<std::size_t>(static_cast<std::int64_t>(stats_.packets_in_use) + delta);
    if (config_.footprint) config_.footprint->add(delta, delta * static_cast<std::int64_t>(packet_bytes_));
    if (change) {
        change->packets += delta;
        change->in_use = stats_.packets_in_use;
    }
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

bool packet_queue::drained() const {
    std::lock_guard lock(mutex_);
    return ended_locked() && ready_.empty() && pop_open_.empty();
}

std::size_t packet_queue::push_reservations() const {
    std::lock_guard lock(mutex_);
    return push_outstanding_;
}

queue_stats packet_queue::stats() const {
    std::lock_guard lock(mutex_);
    queue_stats s = stats_;
    s.bytes_in_use = s.packets_in_use * packet_bytes_;
    s.peak_bytes_in_use = s.peak_packets_in_use * packet_bytes_;
    return s;
}

// ---------------------------------------------------------------------------------------------------
// Buffer managers (seed 004 §III-B)

const char* buffer_manager_name(buffer_manager m) noexcept {
    switch (m) {
        case buffer_manager::per_queue: return "per-queue";
        case buffer_manager::malloc: return "malloc";
        case buffer_manager::packet_stealing: return "packet-stealing";
    }
    return "?";
}

std::shared_ptr<packet_allocator> make_buffer_manager(buffer_manager m, unsigned workers) {
    switch (m) {
        case buffer_manager::per_queue: return nullptr;
        case buffer_manager::malloc: return std::make_shared<malloc_packet_allocator>();
        case buffer_manager::packet_stealing: return std::make_shared<packet_stealing_allocator>(std::max(1u, workers));
    }
    return nullptr;
}

std::byte* malloc_packet_allocator::allocate(std::size_t bytes, int) noexcept {
    auto* p = static_cast<std::byte*>(std::malloc(bytes));   // aligned for any fundamental type
    if (p) allocations_.fetch_add(1, std::memory_order_relaxed);
    return p;
}

void malloc_packet_allocator::release(std::byte* packet, std::size_t, int) noexcept {
    releases_.fetch_add(1, std::memory_order_relaxed);
    std::free(packet);
}

// One pool per packet size. Every partition can hold every packet of the pool (its vector is
// reserved to the pool's total whenever the total grows), so a release never allocates.
struct packet_stealing_allocator::pool {
    struct alignas(64) partition {             // one cache line apart: workers touch only their own
        pipescope::detail::spin_mutex mutex;   // taken under a queue's lock: must not sleep early
        std::vector<std::byte*> free;          // LIFO: the back was released last
    };
    std::size_t bytes = 0;
    pool* next = nullptr;   // the pool added before this one (immutable once published)
    std::unique_ptr<partition[]> parts;
    std::mutex blocks_mutex;   // adding packets; taken before any partition's mutex
    std::vector<std::unique_ptr<std::byte[]>> blocks;
    std::size_t total = 0;   // packets in the pool; guarded by blocks_mutex

    // Adds `count` fresh packets; returns the first. Caller holds blocks_mutex.
    std::byte* add_block_locked(std::size_t count, unsigned partitions) {
        if (count > std::numeric_limits<std::size_t>::max() / bytes) throw std::bad_alloc();
        blocks.push_back(std::make_unique<std::byte[]>(count * bytes));
        total += count;
        for (unsigned k = 0; k < partitions; ++k) {
            std::lock_guard lock(parts[k].mutex);
            parts[k].free.reserve(total);
        }
        return blocks.back().get();
    }
};

packet_stealing_allocator::packet_stealing_allocator(unsigned partitions, std::size_t steal_batch, std::size_t grow_batch)
    : partitions_(partitions), steal_batch_(steal_batch), grow_batch_(grow_batch) {
    if (partitions == 0) throw std::invalid_argument("packet_stealing_allocator: 0 partitions (one per worker)");
    if (steal_batch == 0 || grow_batch == 0) throw std::invalid_argument("packet_stealing_allocator: a batch of 0 packets");
}

packet_stealing_allocator::~packet_stealing_allocator() = default;

unsigned packet_stealing_allocator::partition_of(int worker) const noexcept {
    // Every packet operation asks, and a division is ~25 cycles: the workers of the run, the usual
    // callers, map to their own partition without one.
    if (worker < 0) return 0u;
    const auto w = static_cast<unsigned>(worker);
    return w < partitions_ ? w : w % partitions_;
}

packet_stealing_allocator::pool* packet_stealing_allocator::find(std::size_t bytes) const noexcept {
    for (pool* p = head_.load(std::memory_order_acquire); p; p = p->next)
        if (p->bytes == bytes) return p;
    return nullptr;
}

packet_stealing_allocator::pool& packet_stealing_allocator::find_or_add(std::size_t bytes) {
    std::lock_guard lock(pools_mutex_);
    if (pool* p = find(bytes)) return *p;
    auto p = std::make_unique<pool>();
    p->bytes = bytes;
    p->parts = std::make_unique<pool::partition[]>(partitions_);
    p->next = head_.load(std::memory_order_relaxed);
    pools_.push_back(std::move(p));
    head_.store(pools_.back().get(), std::memory_order_release);
    return *pools_.back();
}

// "Initially, within each pool, packets are evenly divided across worker threads" (§III-B).
void packet_stealing_allocator::provision(std::size_t bytes, std::size_t packets) {
    pool& p = find_or_add(bytes);
    if (packets == 0) return;
    std::lock_guard lock(p.blocks_mutex);
    std::byte* first = p.add_block_locked(packets, partitions_);
    for (std::size_t i = 0; i < packets; ++i) {
        pool::partition& part = p.parts[i % partitions_];
        std::lock_guard plock(part.mutex);
        part.free.push_back(first + i * bytes);
    }
}

std::byte* packet_stealing_allocator::allocate(std::size_t bytes, int worker) noexcept {
    try {
        pool* p = find(bytes);
        if (!p) p = &find_or_add(bytes);   // a size nobody provisioned: it starts empty and grows
        const unsigned me = partition_of(worker);
        pool::partition& mine = p->parts[me];
        {
            std::lock_guard lock(mine.mutex);
            if (!mine.free.empty()) {
                std::byte* packet = mine.free.back();
                mine.free.pop_back();
                return packet;
            }
        }
        // One round of stealing, neighbours first (me+1, me-1, me+2, ...): half of the victim's
        // packets, at most steal_batch, its coldest (least recently released) ones.
        std::vector<std::byte*> batch;
        for (unsigned i = 1; i < partitions_ && batch.empty(); ++i) {
            const unsigned offset = (i % 2 == 1) ? (i + 1) / 2 : partitions_ - i / 2;
            pool::partition& victim = p->parts[(me + offset) % partitions_];
            std::lock_guard lock(victim.mutex);
            if (victim.free.empty()) continue;
            const std::size_t n = std::min(steal_batch_, (victim.free.size() + 1) / 2);
            batch.assign(victim.free.begin(), victim.free.begin() + static_cast<std::ptrdiff_t>(n));
            victim.free.erase(victim.free.begin(), victim.free.begin() + static_cast<std::ptrdiff_t>(n));
        }
        if (!batch.empty()) {
            steals_.fetch_add(1, std::memory_order_relaxed);
            packets_stolen_.fetch_add(batch.size(), std::memory_order_relaxed);
        } else {
            // The round failed: only unbounded (backward) queues can use more packets than were
            // provisioned, so grow the pool by a batch (the paper's safeguard for cycles).
            failed_rounds_.fetch_add(1, std::memory_order_relaxed);
            std::lock_guard lock(p->blocks_mutex);
            std::byte* first = p->add_block_locked(grow_batch_, partitions_);
            for (std::size_t i = 0; i < grow_batch_; ++i) batch.push_back(first + i * bytes);
            packets_grown_.fetch_add(grow_batch_, std::memory_order_relaxed);
        }
        std::byte* packet = batch.back();
        batch.pop_back();
        if (!batch.empty()) {
            std::lock_guard lock(mine.mutex);
            mine.free.insert(mine.free.end(), batch.begin(), batch.end());   // reserved: no reallocation
        }
        return packet;
    } catch (const std::exception&) {
        return nullptr;
    }
}

// "When done using a packet, a worker thread enqueues the packet back to its partition" (§III-B).
void packet_stealing_allocator::release(std::byte* packet, std::size_t bytes, int worker) noexcept {
    pool* p = find(bytes);
    if (!p) return;   // not one of ours: cannot happen through a queue
    pool::partition& mine = p->parts[partition_of(worker)];
    std::lock_guard lock(mine.mutex);
    mine.free.push_back(packet);
}

packet_stealing_allocator::counters packet_stealing_allocator::stats() const noexcept {
    counters c;
    c.steals = steals_.load(std::memory_order_relaxed);
    c.packets_stolen = packets_stolen_.load(std::memory_order_relaxed);
    c.failed_rounds = failed_rounds_.load(std::memory_order_relaxed);
    c.packets_grown = packets_grown_.load(std::memory_order_relaxed);
    return c;
}

std::size_t packet_stealing_allocator::free_packets(std::size_t bytes, unsigned partition) const {
    if (partition >= partitions_)
        throw std::out_of_range("packet_stealing_allocator::free_packets: partition " + std::to_string(partition) + " of " +
                                std::to_string(partitions_));
    pool* p = find(bytes);
    if (!p) return 0;
    std::lock_guard lock(p->parts[partition].mutex);
    return p->parts[partition].free.size();
}

}   // namespace pipescope::graph
