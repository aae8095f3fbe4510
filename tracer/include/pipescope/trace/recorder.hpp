// Recording: per-worker buffers with no lock, no allocation and no system call per event.
//
// A recorder owns a bounded pool of fixed-size chunks (the memory budget). Each worker writes into
// its own `event_buffer`, a chunk at a time; when a chunk fills, the buffer hands it over to the
// recorder's full list and takes a free one (a mutex, once per `chunk_events` events). A consumer —
// the trace writer's thread — drains full chunks while the run goes on and gives them back, so
// memory stays bounded whatever the run's length. If no free chunk is left, the buffer drops
// events and counts them; the next event it can record is preceded by a `dropped` record saying
// how many were lost, so a loss is never silent.
#pragma once

#include <pipescope/trace/clock.hpp>
#include <pipescope/trace/events.hpp>

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::trace {

// How much a run records of its nodes (docs/tracing.md, "Detail levels"). The runtime reads it from
// the recorder attached to its scheduler.
//   nodes      one slice per node (pipelines: node (i, j); graphs: one stage instance or resumption)
//   folded     consecutive nodes one worker runs with nothing of scheduling interest between them
//              become one slice (node_begin ... node_fold_end): the tracing analogue of seed 001 §9's
//              dependency folding. Steals, suspensions, resumptions, throttling, wake-ups and queue
//              blocks are never folded away: each ends the run it interrupts.
//   automatic  nodes until the runtime has measured the nodes, then folded where their mean duration
//              is below fold_below_ns (recorded as a detail_decision event).
enum class trace_detail : std::uint8_t { nodes, folded, automatic };
inline constexpr std::uint64_t default_fold_below_ns = 2000;
std::string_view to_string(trace_detail d) noexcept;   // "nodes", "folded", "auto"
std::optional<trace_detail> parse_trace_detail(std::string_view s) noexcept;

struct chunk {
    unsigned writer = 0;    // which event_buffer filled it
    std::size_t used = 0;   // records in use
    // Records the consumer already passed to its sink while the chunk was still being filled
    // (recorder::drain_recorded); a later drain passes only the rest, so each record goes once.
    std::size_t taken = 0;
    std::unique_ptr<event_record[]> records;   // not zeroed: only records before `used` are read
};

// Why a recorder budget of `mib` MiB cannot be had, or "": " is more than this machine's 23.5 GiB of
// memory" (physical_memory_bytes, trace_model.hpp; the caller puts what it names first: "--trace-buffer 65536 MiB"). Above the physical
// memory a budget is refused; below, it is only reserved (docs/tracing.md, "Recording").
std::string budget_problem(std::size_t mib);

class recorder;

class event_buffer {
public:
    // Hot path: one bounds check, one timestamp, a few plain stores.
    void record(event_kind kind, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0,
                std::uint16_t d = 0) noexcept {
        record_at(now_ticks(), kind, a, b, c, d);
    }
    // With a timestamp the caller already has (two events of one instant share one clock read).
    void record_at(std::uint64_t ticks, event_kind kind, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0,
                   std::uint16_t d = 0) noexcept {
        event_record* p = pos_.load(std::memory_order_relaxed);
        if (p == end_) [[unlikely]] {
            if (!refill()) {
                ++dropped_;
                return;
            }
            p = pos_.load(std::memory_order_relaxed);
        }
        p->ticks = ticks;
        p->a = a;
        p->b = b;
        p->c = c;
        p->kind = kind;
        p->d = d;
        // Release, so that recorder::snapshot() may read the records before pos_ while this thread
        // goes on recording (on x86 a plain store: it only keeps the compiler from reordering).
        pos_.store(p + 1, std::memory_order_release);
    }

    unsigned writer() const noexcept { return writer_; }
    std::uint64_t dropped_total() const noexcept { return dropped_total_; }

private:
    friend class recorder;
    event_buffer(recorder& owner, unsigned writer) : owner_(owner), writer_(writer) {}
    bool refill() noexcept;   // hands the full chunk over, takes a free one; false when none is free
    // Under the recorder's mutex: writes into `c` from its start from now on (nullptr: no chunk).
    void use_chunk(chunk* c, std::size_t chunk_events) noexcept {
        current_ = c;
        event_record* first = c ? c->records.get() : nullptr;
        end_ = c ? first + chunk_events : nullptr;
        pos_.store(first, std::memory_order_relaxed);
    }
    // Complete records in current_ (acquire: pairs with record_at's release).
    std::size_t records_in_current() const noexcept {
        return static_cast<std::size_t>(pos_.load(std::memory_order_acquire) - current_->records.get());
    }

    recorder& owner_;
    unsigned writer_;
    // current_ and end_ change only under the recorder's mutex (in refill and flush); pos_ moves
    // within current_ without it, published with release (see recorder::snapshot).
    chunk* current_ = nullptr;
    std::atomic<event_record*> pos_{nullptr};
    event_record* end_ = nullptr;
    std::uint64_t dropped_ = 0;   // lost since the last `dropped` record
    std::uint64_t dropped_total_ = 0;
};

class recorder {
public:
    // budget_bytes is the whole pool; at least two chunks per writer are kept. The budget is
    // reserved, not touched: a chunk is allocated (without zeroing) the first time a writer needs
    // one and no drained chunk is free, so memory grows with what is recorded, up to the budget.
    recorder(unsigned writers, std::size_t budget_bytes = 64u << 20, std::size_t chunk_events = 4096);
    ~recorder();
    recorder(const recorder&) = delete;
    recorder& operator=(const recorder&) = delete;

    event_buffer& buffer(unsigned writer) noexcept {
        std::lock_guard lock(buffers_mutex_);
        return *buffers_[writer];
    }
    unsigned writers() const noexcept {
        std::lock_guard lock(buffers_mutex_);
        return static_cast<unsigned>(buffers_.size());
    }
    // One more writer (a recording thread that is not a scheduler worker, e.g. a bind-to-stage
    // stage thread), with two more chunks in the pool; returns its buffer (writer index = the old
    // writers()). Safe while other writers record and the consumer drains; buffers are never removed.
    event_buffer& add_writer();

    // Consumer side. Calls `sink` for every full chunk (in the order they filled), then returns
    // the chunks to the pool. Safe while writers record.
    using sink_fn = std::function<void(unsigned writer, const event_record* records, std::size_t count)>;
    std::size_t drain(const sink_fn& sink);
    // After every writer has stopped: hands over the partly filled chunks too, then drains.
    std::size_t flush(const sink_fn& sink);
    // While writers may still be recording (a watchdog writing the trace of a hung run): calls
    // `sink` for every full chunk, then for each buffer's partly filled chunk up to its last
    // complete record, and gives nothing back, so no chunk a writer still holds is handed to
    // another. Holds the pool's lock throughout: a writer that fills its chunk meanwhile waits.
    // Chunks a consumer is draining at that moment are not included. Returns the events passed.
    std::size_t snapshot(const sink_fn& sink);
    // While writers may still be recording: passes every full chunk (then returns it to the pool)
    // and each buffer's partly filled chunk from what was passed before up to its last complete
    // record, so the sink has everything recorded so far, each worker's records in order and each
    // exactly once (a later drain, drain_recorded or flush passes only the rest). The lock is held
    // only to collect the ranges; the sink runs without it. One consumer at a time (like drain).
    // The drain thread calls it at least once a second, which bounds what a killed process loses.
    std::size_t drain_recorded(const sink_fn& sink);
    // For a consumer thread that drains lazily: blocks until at least `backlog` chunks are full
    // (a writer that fills the chunk reaching that count wakes it, once), wake_consumer() is called,
    // or `timeout` passes. Returns whether `backlog` chunks are full. Draining only when a part of
    // the pool is full keeps the consumer off the workers' cores while the pool has room
    // (docs/tracing.md, "When the writer works").
    bool wait_for_backlog(std::size_t backlog, std::chrono::milliseconds timeout);
    void wake_consumer();

    // Events lost so far, including any lost after a buffer's last record (which no `dropped`
    // record can follow): the writer reports this total. Call once the writers have stopped.
    std::uint64_t dropped_total() const noexcept;
    std::size_t chunk_events() const noexcept { return chunk_events_; }
    std::size_t chunks_in_pool() const noexcept { return chunk_count_; }
    // Chunks allocated so far (at most chunks_in_pool()): what the recorder's memory really is.
    std::size_t chunks_allocated() const noexcept;
    clock_sample start_clock() const noexcept { return start_; }
    // Takes the start sample again (when recording really begins later than construction).
    void restart_clock() noexcept { start_ = clock_sample::take(); }

    // The detail level the runtime records at (set before attaching the recorder; default automatic).
    void set_detail(trace_detail level, std::uint64_t fold_below_ns = default_fold_below_ns) noexcept;
    trace_detail detail() const noexcept { return detail_; }
    std::uint64_t fold_below_ns() const noexcept { return fold_below_ns_; }
    // ns per tick from the start sample to now (for the runtime's automatic decisions; the writer
    // calibrates properly). Meaningful once a millisecond or so has passed. 1 when ticks are ns.
    double ns_per_tick_estimate() const noexcept;
    // The recording threads stamp their events in ns (tls_virtual_ticks: virtual workers), not in
    // time-stamp-counter ticks, so there is no rate to estimate (set before recording starts).
    void set_ticks_are_ns(bool yes) noexcept { ticks_are_ns_ = yes; }

private:
    friend class event_buffer;
    // Under the mutex: queues b's full chunk (if any) and gives b a free one (false: none is free).
    bool exchange_full(event_buffer& b);
    // Under the mutex: a free chunk, allocating one while the budget allows; nullptr when dry.
    chunk* take_free_chunk();
    // Passes c's records not passed yet, then returns it to the pool.
    void consume(chunk* c, const sink_fn& sink, std::size_t& events);

    std::size_t chunk_events_;
    std::size_t chunk_count_;
    std::vector<std::unique_ptr<chunk>> storage_;
    std::vector<std::unique_ptr<event_buffer>> buffers_;   // guarded by buffers_mutex_ (add_writer)
    mutable std::mutex buffers_mutex_;
    mutable std::mutex mutex_;
    void update_free_count() noexcept;         // under the mutex
    std::vector<chunk*> free_;                 // allocated chunks nobody holds
    std::atomic<std::size_t> free_count_{0};   // free_ + chunks not allocated yet, readable without the lock
    std::deque<chunk*> full_;
    std::condition_variable backlog_cv_;      // the lazy consumer waits here (under mutex_)
    std::size_t backlog_wanted_ = SIZE_MAX;   // full chunks that wake it (SIZE_MAX: no one waits)
    bool consumer_woken_ = false;
    clock_sample start_;
    trace_detail detail_ = trace_detail::automatic;
    bool ticks_are_ns_ = false;
    std::uint64_t fold_below_ns_ = default_fold_below_ns;
};

}   // namespace pipescope::trace
