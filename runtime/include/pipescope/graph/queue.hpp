// pipescope — the bounded packet queue between the stages of a stage graph.
//
//     graph::packet_queue q({.name = "samples", .element_size = sizeof(float), .packet_elements = 32,
//                            .capacity_packets = 8, .ordered = true, .producers = 1});
//     auto w = q.try_reserve_push(2);          // up to 2 packets = 64 elements, or "full"
//     if (w) { fill(w); q.commit_push(w, n); } // n <= 64; a short last packet is fine
//     q.close();                               // this producer is done
//
//     auto r = q.try_reserve_pop(1, 15);       // 1 packet, plus 15 elements to peek at
//     if (r) { use(r.at<float>(i), r.peek<float>(j)); q.commit_pop(r); }
//     else if (r.status() == graph::reserve_status::end_of_stream) { /* drained */ }
//
// Data moves in packets of N fixed-size elements (GRAMPS, seed 004 §II-C); capacity is counted in
// packets, so a full queue is backpressure rather than allocation (seed 004 §III-A). Where the packet
// memory comes from is a separate buffer manager (seed 004 §III-B, `packet_allocator` below): by
// default the queue owns a pool sized to its capacity up front (the "per-queue buffer manager");
// a run may instead give all its queues one shared manager (malloc/free per packet, or GRAMPS'
// packet-stealing pools). The capacity check is the queue's in every case.
// Producers and consumers reserve windows of packets, work in them without any lock, and commit
// (reserve/commit: seed 004 §II-C, seed 002 §II "Data Queue").
//
// Why elements are sized in bytes rather than a template on the element type: a stage graph holds
// queues of many element types, and the scheduler, the tracer and the viewer handle all of them the
// same way (fill, bytes, packets). One non-template class keeps the queue out of headers' template
// bloat and gives the scheduler a single type to park stages on; `at<T>()` / `peek<T>()` are the
// typed view, checked against the element size.
//
// Why the API never blocks: who waits, and how, is the scheduler's decision. Serial stages are
// coroutines that must suspend, not block a worker; parallel stages are instanced by the runtime
// and under GRAMPS backpressure a producer whose output queue is full simply becomes non-runnable
// (seed 004 §III-A); DANBI's queue-event scheduling picks the next kernel from the event that
// stopped a thread — empty, full, or waiting for a commit order (seed 002 §III-A2). So every try_
// operation answers at once, and the queue tells its scheduler when waiting could end: the
// versions data_version() / space_version() only grow, and `on_signal` (if set) is called after
// each change, outside the queue's lock. Read the version before the try, wait until it moves.
#pragma once

#include <pipescope/detail/packet_list.hpp>
#include <pipescope/detail/spin_mutex.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace pipescope::graph {

class packet_queue;

// A buffer manager: the memory packets live in (seed 004 §III "a specialized memory allocator for
// packets", §III-B). A queue asks it for a packet when a producer reserves one and gives the packet
// back when it is free again (a commit that did not use it, or the consumers' release); it never
// asks for more packets than its capacity allows, so the manager decides only *which* memory, and
// how it is reused. Called under the queue's lock, from any thread; implementations are thread-safe
// (except the queue's own per-queue pool, which only its queue calls).
class packet_allocator {
public:
    virtual ~packet_allocator() = default;
    // A queue whose packets are `bytes` bytes and whose capacity is `packets` starts using this
    // manager (its constructor calls this): a manager that preallocates sizes its pools from it.
    virtual void provision(std::size_t bytes, std::size_t packets) = 0;
    // Memory for one packet of `bytes` bytes, aligned for any element type, for the calling `worker`
    // (this_worker_index(): -1 off the workers). nullptr when no more memory can be had (the queue
    // then answers `full`).
    virtual std::byte* allocate(std::size_t bytes, int worker) noexcept = 0;
    // Gives back a packet `allocate(bytes, ...)` returned; `worker` is the releasing worker.
    virtual void release(std::byte* packet, std::size_t bytes, int worker) noexcept = 0;
};

// The three buffer managers of seed 004 §III-B (compared in §V-D).
enum class buffer_manager : std::uint8_t {
    per_queue,         // each queue owns a pool of its capacity (the default)
    malloc,            // "dynamic memory": malloc and free for every packet
    packet_stealing,   // pools per packet size shared by all queues, partitioned across workers
};
const char* buffer_manager_name(buffer_manager m) noexcept;   // "per-queue", "malloc", "packet-stealing"
// The manager the queues of one run share, for `workers` workers; nullptr for per_queue (each
// queue then makes its own pool, as when queue_config::allocator is empty).
std::shared_ptr<packet_allocator> make_buffer_manager(buffer_manager m, unsigned workers);

// "Dynamic memory buffer manager" (seed 004 §III-B): std::malloc / std::free per packet.
class malloc_packet_allocator final : public packet_allocator {
public:
    void provision(std::size_t, std::size_t) override {}
    std::byte* allocate(std::size_t bytes, int worker) noexcept override;
    void release(std::byte* packet, std::size_t bytes, int worker) noexcept override;
    std::uint64_t allocations() const noexcept { return allocations_.load(std::memory_order_relaxed); }
    std::uint64_t releases() const noexcept { return releases_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> allocations_{0}, releases_{0};
};

// The packet-stealing buffer manager (seed 004 §III-B). One pool per packet size holds every packet
// of that size, whichever queue uses it; it starts with the sum of the capacities provisioned for
// that size, divided evenly across the workers' partitions. A worker allocates from its own
// partition (LIFO: the packet it released last is still in its cache) and releases into it, so in a
// linear pipeline a worker keeps reusing the same few packets. A worker whose partition is empty
// steals a batch from another partition, neighbours first (one round over all of them); when that
// round finds nothing — only possible with unbounded (backward) queues, since backpressure keeps
// every bounded queue within the packets provisioned for it — it mallocs a batch of new packets
// into its partition (the paper's deadlock-avoidance safeguard for cycles).
class packet_stealing_allocator final : public packet_allocator {
public:
    // steal_batch: most packets one steal takes (half the victim's, at least one); grow_batch:
    // packets malloc'ed at once when a round of stealing failed.
    explicit packet_stealing_allocator(unsigned partitions, std::size_t steal_batch = 16, std::size_t grow_batch = 8);
    ~packet_stealing_allocator() override;
    packet_stealing_allocator(const packet_stealing_allocator&) = delete;
    packet_stealing_allocator& operator=(const packet_stealing_allocator&) = delete;

    void provision(std::size_t bytes, std::size_t packets) override;
    std::byte* allocate(std::size_t bytes, int worker) noexcept override;
    void release(std::byte* packet, std::size_t bytes, int worker) noexcept override;

    struct counters {
        std::uint64_t steals = 0;   // batches taken from another partition
        std::uint64_t packets_stolen = 0;
        std::uint64_t failed_rounds = 0;   // a round of stealing that found nothing
        std::uint64_t packets_grown = 0;   // malloc'ed after such a round
    };
    counters stats() const noexcept;
    unsigned partitions() const noexcept { return partitions_; }
    // Free packets of size `bytes` in `partition` now (tests and tracing).
    std::size_t free_packets(std::size_t bytes, unsigned partition) const;
    // The partition a worker uses (workers beyond the partitions, and -1, wrap around).
    unsigned partition_of(int worker) const noexcept;

private:
    struct pool;
    pool* find(std::size_t bytes) const noexcept;
    pool& find_or_add(std::size_t bytes);

    unsigned partitions_;
    std::size_t steal_batch_, grow_batch_;
    std::mutex pools_mutex_;                     // adding pools; lookups walk the list lock-free
    std::vector<std::unique_ptr<pool>> pools_;   // owns them; guarded by pools_mutex_
    std::atomic<pool*> head_{nullptr};           // newest pool; each links to the one before
    std::atomic<std::uint64_t> steals_{0}, packets_stolen_{0}, failed_rounds_{0}, packets_grown_{0};
};

enum class reserve_status {
    reserved,        // the window is yours until you commit it
    full,            // push: not enough free packets; retry after space_version() moves
    empty,           // pop: not enough committed data (or peek data) yet; retry after data_version() moves
    end_of_stream,   // pop: every producer closed and every element has been handed out
};

enum class queue_signal {
    data,    // data became visible to consumers, or end of stream was reached
    space,   // packets went back to the free pool
};

// Packets in use summed over several queues (a whole graph's footprint, seed 004 Table III). Each
// queue that shares it adds and subtracts under its own lock; the peaks are exact maxima of the sums.
// Every packet a queue takes or gives back passes through here, from every worker, so both sums
// live in one word and move with one atomic add: packets in the top 28 bits, bytes in the low 36
// (up to 268 million packets and 64 GiB in use at once).
class footprint_meter {
public:
    // Returns the sums right after this change (packed: packets_of / bytes_of), exact for this change
    // even while other queues change theirs.
    std::uint64_t add(std::int64_t packets_delta, std::int64_t bytes_delta) noexcept;
    static std::int64_t packets_of(std::uint64_t sums) noexcept { return static_cast<std::int64_t>(sums >> byte_bits); }
    static std::int64_t bytes_of(std::uint64_t sums) noexcept { return static_cast<std::int64_t>(sums & byte_mask); }
    std::int64_t packets() const noexcept {
        return static_cast<std::int64_t>(now_.load(std::memory_order_acquire) >> byte_bits);
    }
    std::int64_t bytes() const noexcept {
        return static_cast<std::int64_t>(now_.load(std::memory_order_acquire) & byte_mask);
    }
    std::int64_t peak_packets() const noexcept { return peak_packets_.load(std::memory_order_acquire); }
    std::int64_t peak_bytes() const noexcept { return peak_bytes_.load(std::memory_order_acquire); }

private:
    static constexpr unsigned byte_bits = 36;
    static constexpr std::uint64_t byte_mask = (std::uint64_t{1} << byte_bits) - 1;
    std::atomic<std::uint64_t> now_{0};
    std::atomic<std::int64_t> peak_packets_{0}, peak_bytes_{0};
};

// What one operation did to a queue's packets in use, read under the queue's lock: a tracer records
// the fill only when an operation changed it, with the value that operation left (so every change,
// peaks included, is recorded by the thread that made it; the footprint is their sum). Operations
// that take one fill it in when given a pointer; nullptr costs nothing.
struct queue_change {
    std::int64_t packets = 0;   // change of this queue's packets in use (0: unchanged)
    std::size_t in_use = 0;     // this queue's packets in use after it (set when packets != 0)
};

struct queue_config {
    std::string name = "queue";         // used in error messages and, later, trace tracks
    std::size_t element_size = 0;       // bytes per element
    std::size_t packet_elements = 0;    // N: elements per packet
    std::size_t capacity_packets = 0;   // packets the queue holds in total (reserved + committed)
    bool ordered = false;               // publish in reservation order (tickets) instead of commit order
    // No backpressure: when every packet is in use, the queue grows by another block instead of
    // answering `full` (capacity_packets is then the size of the first block). The schedulers
    // without backpressure (task-stealing, breadth-first: seed 004 §IV-A/B) and GRAMPS' backward
    // queues of a cycle (seed 004 §III-A) use it; footprint is then whatever the schedule makes it.
    bool unbounded = false;
    std::size_t producers = 1;   // close() calls that end the stream
    // Called after data or space appeared, outside the lock, possibly from several threads at once.
    // Must not destroy the queue.
    std::function<void(const packet_queue&, queue_signal)> on_signal = {};
    footprint_meter* footprint = nullptr;   // if set, follows this queue's packets in use
    // Where packets come from (seed 004 §III-B); empty: the queue owns a pool of its capacity
    // (growing in blocks when unbounded), the per-queue buffer manager.
    std::shared_ptr<packet_allocator> allocator = {};
};

// Occupancy for tracing. "In use" packets are those not in the free pool: reserved by producers,
// published, or held by consumers until released.
struct queue_stats {
    std::size_t packets_in_use = 0, peak_packets_in_use = 0;
    std::size_t elements_queued = 0, peak_elements_queued = 0;   // published, not yet released
    std::size_t bytes_in_use = 0, peak_bytes_in_use = 0;         // packets_in_use × packet bytes
    std::uint64_t elements_pushed = 0, packets_pushed = 0;       // published to consumers
    std::uint64_t elements_popped = 0, packets_popped = 0;       // committed by consumers
};

namespace detail {
// What push and pop windows share: the queue, the ticket and the packets, and a typed view.
class window_base {
public:
    explicit operator bool() const noexcept { return status_ == reserve_status::reserved; }
    reserve_status status() const noexcept { return status_; }
    std::uint64_t ticket() const noexcept { return ticket_; }   // order of this reservation on its side
    std::size_t packets() const noexcept { return packets_.size(); }
    const packet_queue* source() const noexcept { return queue_; }   // the queue it was reserved from

protected:
    template <class T, class Byte>   // Byte: std::byte, or const std::byte with a const T
    T& typed(Byte* p) const {
        static_assert(std::is_trivially_copyable_v<T>, "queue elements are raw bytes: T must be trivially copyable");
        check_type(sizeof(T), alignof(T));
        return *std::launder(reinterpret_cast<T*>(p));
    }
    void check_type(std::size_t size, std::size_t align) const;
    void check_reserved(const char* what) const;

    friend class graph::packet_queue;
    const packet_queue* queue_ = nullptr;
    reserve_status status_ = reserve_status::empty;
    std::uint64_t ticket_ = 0;
    std::uint64_t refusals_ = 0;   // the queue's refusals on this side when the window was reserved
    packet_list packets_;
};
}   // namespace detail

// A producer's reservation: packets() whole packets, all writable.
class push_window : public detail::window_base {
public:
    // Written out, not defaulted: value-initialising (`push_window{}`, `T()`) a class whose
    // constructor is implicit zeroes the whole object before the member initialisers run, and a
    // window is ~90 bytes, so every empty window a step or an awaiter made was a `rep stos` (tens of
    // cycles to start up on x86; issue 17's profile). Likewise pop_window.
    push_window() noexcept {}
    std::size_t capacity() const noexcept;   // elements
    std::span<std::byte> element(std::size_t i) const;
    std::span<std::byte> packet_bytes(std::size_t p) const;   // packet p's memory, all N elements
    template <class T>
    T& at(std::size_t i) const {
        return typed<T>(element(i).data());
    }
};

// A consumer's reservation: size() elements to read and consume, then peek_size() elements after
// them to read only (StreamIt/DANBI peeking; seed 002 §II, reserve_peek_pop).
class pop_window : public detail::window_base {
public:
    pop_window() noexcept {}   // not defaulted: see push_window()
    std::size_t size() const noexcept { return size_; }
    std::size_t peek_size() const noexcept { return peek_size_; }
    std::size_t packet_size(std::size_t p) const;
    std::span<const std::byte> packet_bytes(std::size_t p) const;   // packet p's elements, packet_size(p) of them
    std::span<const std::byte> element(std::size_t i) const;
    std::span<const std::byte> peek_element(std::size_t j) const;   // the j-th element after the window
    template <class T>
    const T& at(std::size_t i) const {
        return typed<const T>(element(i).data());
    }
    template <class T>
    const T& peek(std::size_t j) const {
        return typed<const T>(peek_element(j).data());
    }

private:
    friend class packet_queue;
    std::span<const std::byte> locate(const detail::packet_list& refs, std::size_t i) const;
    std::size_t size_ = 0, peek_size_ = 0, peek_requested_ = 0;
    detail::packet_list peek_packets_;   // published packets after the window
};

class packet_queue {
public:
    explicit packet_queue(queue_config config);
    ~packet_queue();   // gives every packet still in use back to the allocator
    packet_queue(const packet_queue&) = delete;
    packet_queue& operator=(const packet_queue&) = delete;

    // Producer side. Reserves `packets` free packets (1 ≤ packets ≤ capacity), or answers `full`.
    push_window try_reserve_push(std::size_t packets, queue_change* change = nullptr);
    // Publishes the first `elements` elements of the window (default: all), packed into its first
    // packets; unused packets go back to the pool. On an ordered queue the data waits until every
    // earlier reservation committed; the return value says whether this commit published data now
    // (false: it waits for an earlier ticket, whose commit will publish it). The window is emptied.
    bool commit_push(push_window& w);
    bool commit_push(push_window& w, std::size_t elements, queue_change* change = nullptr);
    // Gives an unused reservation back, as commit_push(w, 0) does, but without telling anyone that
    // space appeared unless a producer was refused (`full`) while the window held it: a scheduler
    // that reserves tentatively and backs off must not wake everyone each time it backs off.
    void cancel_push(push_window& w);
    // One producer is done. After the last of `producers` closes (with no push reservation open),
    // consumers see end_of_stream once the queue is drained: termination propagates from the
    // sources (DANBI's termination tokens, seed 002 §III-A5). Until then a pop reserve for more
    // packets than remain waits; after it, it gets what remains (seed 004 §II-C).
    void close();

    // Consumer side. Reserves `packets` published packets and makes `peek` further elements
    // readable. Answers `empty` until that much is published. Two cases cut the request short
    // instead, because waiting could never satisfy it: after end of stream (fewer packets, or a
    // shorter peek), and when the queue is stuck full — no free packet, no reservation open on
    // either side — because short packets left the peek elements beyond the capacity.
    // packets + ceil(peek / N) must not exceed the capacity. A peeking consumer and a producer that
    // reserves more packets than are free can still wait on each other when packets are short: size
    // the queue for both (both papers leave queue sizing to the program: seed 002 §III-A5, 004 §III-A).
    pop_window try_reserve_pop(std::size_t packets, std::size_t peek = 0);
    // Consumes the window. Its packets return to the pool in reservation order, once every
    // earlier pop window is committed too: a window may be peeking into later ones' packets.
    void commit_pop(pop_window& w, queue_change* change = nullptr);
    // Puts the most recent pop reservation's packets back at the front, in order, as if it had never
    // been made (it must be the latest reservation: only its consumer stage pops, under that stage's
    // lock). Signals data only if a consumer was refused (`empty`) meanwhile.
    void cancel_pop(pop_window& w);

    // For schedulers: both only grow; read before a failed try, wait until it changes.
    std::uint64_t data_version() const noexcept { return data_version_.load(std::memory_order_acquire); }
    std::uint64_t space_version() const noexcept { return space_version_.load(std::memory_order_acquire); }

    // Lock-free hints for schedulers deciding what is runnable; exact at the moment of the last
    // change, possibly stale by the time they are used (the try_ operations decide).
    std::size_t ready_packets_hint() const noexcept { return ready_hint_.load(std::memory_order_acquire); }
    // Packets published so far (only grows; stats().packets_pushed without the lock). A scheduler
    // that makes one task per published packet (GRAMPS, seed 004 §III-A) counts against it.
    std::uint64_t published_packets_hint() const noexcept { return published_hint_.load(std::memory_order_acquire); }
    std::size_t free_packets_hint() const noexcept;   // SIZE_MAX when unbounded
    std::size_t packets_in_use_hint() const noexcept { return in_use_hint_.load(std::memory_order_acquire); }
    // Ordered queues: commits that wait for an earlier ticket (DANBI's "waiting for a commit order").
    std::size_t waiting_commits_hint() const noexcept { return waiting_hint_.load(std::memory_order_acquire); }
    // Packets in use / capacity (may exceed 1 when unbounded): DANBI's fill ratio F (seed 002 §III-A3).
    double fill_ratio() const noexcept;

    // Lock-free like the hints, and as exact: both mirror the state at the end of the latest
    // operation (a stage checks end_of_stream() after every instance).
    bool closed() const noexcept { return closed_hint_.load(std::memory_order_acquire); }   // every producer closed
    // Closed and every element handed out to consumers.
    bool end_of_stream() const noexcept { return end_hint_.load(std::memory_order_acquire); }
    // Closed, every element handed out, and every pop reservation committed: nothing a consumer holds
    // can come back (cancel_pop). Takes the lock; exact at the moment it answers.
    bool drained() const;
    // Push reservations not yet committed or cancelled, all producers together. Takes the lock.
    std::size_t push_reservations() const;
    queue_stats stats() const;

    const std::string& name() const noexcept { return config_.name; }
    std::size_t element_size() const noexcept { return config_.element_size; }
    std::size_t packet_elements() const noexcept { return config_.packet_elements; }
    std::size_t capacity_packets() const noexcept { return config_.capacity_packets; }
    bool ordered() const noexcept { return config_.ordered; }
    bool unbounded() const noexcept { return config_.unbounded; }
    std::size_t packet_bytes() const noexcept { return packet_bytes_; }

private:
    friend class detail::window_base;
    friend class push_window;
    friend class pop_window;

    // One open reservation; kept in ticket order per side so commits can be applied in order. A
    // push reservation holds its reserved packets until its commit, then the packets it published;
    // so the queue knows every packet it holds, and gives them all back when destroyed.
    struct pending {
        bool committed = false;
        detail::packet_list packets;
    };
    struct signals {
        bool data = false, space = false;
    };

    [[noreturn]] void fail(const std::string& what) const;
    bool ended_locked() const noexcept { return open_producers_ == 0; }
    void publish_locked(const pending& p, signals& s);
    std::size_t release_locked(const pending& p, signals& s);   // packets released (in_use_locked is the caller's)
    void update_peaks_locked() noexcept;
    // packets_in_use += delta, and the meter (one change per operation); fills `change` if given.
    void in_use_locked(std::int64_t delta, queue_change* change = nullptr) noexcept;
    void emit(signals s) const;
    bool commit_push_impl(push_window& w, std::size_t elements, bool cancelling, queue_change* change);
    std::size_t free_locked() const noexcept;   // packets the capacity still allows (SIZE_MAX: unbounded)
    void release_packet_locked(std::byte* data) noexcept;
    void sync_hints_locked() noexcept;

    // Cache lines (issue 17: at P = 2 a step's cost is mostly lines moving between cores). Three
    // groups, each on lines of its own, so that no group's writers evict another group's readers:
    // the configuration (read by every operation, written never), the bookkeeping behind the lock
    // (written by every operation, by whichever worker holds the lock), and the versions and hints
    // (written under the lock, read lock-free by every scheduler that polls readiness).
    queue_config config_;
    std::size_t packet_bytes_;
    std::shared_ptr<packet_allocator> allocator_;   // config_.allocator, or the queue's own pool

    alignas(64) mutable pipescope::detail::spin_mutex mutex_;   // short bookkeeping only: spins, never sleeps
    detail::ring<detail::packet_ref> ready_;                    // published, not yet reserved by a consumer
    std::size_t ready_elements_ = 0;
    detail::ring<pending> push_open_, pop_open_;   // front has ticket push_base_ / pop_base_
    std::uint64_t push_base_ = 0, pop_base_ = 0;
    std::size_t push_outstanding_ = 0;   // push reservations not yet committed
    std::size_t open_producers_;
    queue_stats stats_;
    std::size_t waiting_commits_ = 0;                      // committed push windows not yet published
    std::uint64_t push_refusals_ = 0, pop_refusals_ = 0;   // `full` / `empty` answers so far

    // Written only under the lock (so a plain store, not a locked add, and none when the value did
    // not change: an unchanged store would still take the line away from every poller).
    alignas(64) std::atomic<std::uint64_t> data_version_{0}, space_version_{0};
    std::atomic<std::size_t> ready_hint_{0}, free_hint_{0}, in_use_hint_{0}, waiting_hint_{0};
    std::atomic<std::uint64_t> published_hint_{0};
    std::atomic<bool> closed_hint_{false}, end_hint_{false};
    // (sizeof is a multiple of 64: nothing allocated after the queue shares the hints' line.)
};

}   // namespace pipescope::graph
