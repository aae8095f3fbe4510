#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <stdexcept>

namespace pipescope::trace {

std::string_view event_name(event_kind k) noexcept {
    static constexpr std::string_view names[] = {
        "worker start",
        "worker stop",
        "node",
        "node end",
        "task",
        "task end",
        "steal",
        "idle",
        "idle end",
        "park",
        "park end",
        "unpark",
        "stage_wait check",
        "suspend",
        "resume",
        "throttle",
        "throttle resume",
        "iteration start",
        "retire",
        "counter",
        "dropped events",
        "token acquire",
        "token release",
        "buffer put",
        "buffer take",
        "suspended iterations",
        "earliest resume",
        "thread name",
        "queue put",
        "queue take",
        "blocked",
        "blocked end",
        "reorder buffer",
        "stage exception",
        "cancelled",
        "reserve",
        "commit",
        "stage blocked",
        "preempted",
        "stage done",
        "folded run end",
        "detail decision",
        "annotation",
    };
    static_assert(sizeof(names) / sizeof(names[0]) == static_cast<std::size_t>(event_kind::count_));
    const auto i = static_cast<std::size_t>(k);
    return i < static_cast<std::size_t>(event_kind::count_) ? names[i] : std::string_view("unknown");
}

recorder::recorder(unsigned writers, std::size_t budget_bytes, std::size_t chunk_events)
    : chunk_events_(chunk_events), start_(clock_sample::take()) {
    if (writers == 0) throw std::invalid_argument("recorder: at least one writer is needed");
    if (chunk_events == 0) throw std::invalid_argument("recorder: chunks must hold at least one event");
    const std::size_t chunk_bytes = chunk_events * sizeof(event_record);
    chunk_count_ = std::max<std::size_t>(budget_bytes / chunk_bytes, 2 * std::size_t{writers});
    // Nothing is allocated yet: the budget is reserved, and chunks come as writers need them
    // (take_free_chunk). A 1 TiB budget once zero-filled 1 TiB of chunks up front.
    free_count_.store(chunk_count_, std::memory_order_relaxed);
    buffers_.reserve(writers);
    for (unsigned w = 0; w < writers; ++w) buffers_.push_back(std::unique_ptr<event_buffer>(new event_buffer(*this, w)));
}

recorder::~recorder() = default;

std::string budget_problem(std::size_t mib) {
    const std::uint64_t memory = physical_memory_bytes();
    if (memory == 0 || mib <= memory >> 20) return {};
    return fmt::format(" is more than this machine's {:.1f} GiB of memory", static_cast<double>(memory) / (1 << 30));
}

void recorder::update_free_count() noexcept {
    free_count_.store(free_.size() + (chunk_count_ - storage_.size()), std::memory_order_relaxed);
}

std::size_t recorder::chunks_allocated() const noexcept {
    std::lock_guard lock(mutex_);
    return storage_.size();
}

chunk* recorder::take_free_chunk() {
    chunk* c = nullptr;
    if (!free_.empty()) {
        c = free_.back();
        free_.pop_back();
    } else if (storage_.size() < chunk_count_) {
        // Once per chunk of the budget, under the lock: the records are left unzeroed (only those
        // before `used` are ever read), so the pages are touched when a writer records into them.
        try {
            auto fresh = std::make_unique<chunk>();
            fresh->records = std::make_unique_for_overwrite<event_record[]>(chunk_events_);
            storage_.push_back(std::move(fresh));
            c = storage_.back().get();
        } catch (const std::bad_alloc&) {
            return nullptr;   // the events are dropped and counted, as when the pool is dry
        }
    }
    update_free_count();
    return c;
}

void recorder::set_detail(trace_detail level, std::uint64_t fold_below_ns) noexcept {
    detail_ = level;
    fold_below_ns_ = fold_below_ns;
}

double recorder::ns_per_tick_estimate() const noexcept {
    if (ticks_are_ns_) return 1.0;
    const clock_sample now = clock_sample::take();
    const double dt = static_cast<double>(now.ticks - start_.ticks);
    return dt > 0 && now.ns > start_.ns ? static_cast<double>(now.ns - start_.ns) / dt : 1.0;
}

std::string_view to_string(trace_detail d) noexcept {
    switch (d) {
        case trace_detail::nodes: return "nodes";
        case trace_detail::folded: return "folded";
        case trace_detail::automatic: return "auto";
    }
    return "unknown";
}

std::optional<trace_detail> parse_trace_detail(std::string_view s) noexcept {
    for (trace_detail d : {trace_detail::nodes, trace_detail::folded, trace_detail::automatic})
        if (s == to_string(d)) return d;
    return std::nullopt;
}

event_buffer& recorder::add_writer() {
    {
        std::lock_guard lock(mutex_);
        chunk_count_ += 2;   // allocated when needed, like the rest of the pool
        update_free_count();
    }
    std::lock_guard lock(buffers_mutex_);
    const auto w = static_cast<unsigned>(buffers_.size());
    buffers_.push_back(std::unique_ptr<event_buffer>(new event_buffer(*this, w)));
    return *buffers_.back();
}

bool recorder::exchange_full(event_buffer& b) {
    std::lock_guard lock(mutex_);
    if (chunk* full = b.current_) {
        full_.push_back(full);
        // Exactly at the crossing: one wake-up (a system call only if the consumer sleeps) per
        // backlog, not one per chunk.
        if (full_.size() == backlog_wanted_) backlog_cv_.notify_one();
    }
    // The buffer changes chunks under the lock, so that snapshot() sees its chunk and position agree.
    chunk* next = take_free_chunk();
    if (next) {
        next->writer = b.writer_;
        next->used = 0;
        next->taken = 0;
    }
    b.use_chunk(next, chunk_events_);
    return next != nullptr;
}

bool event_buffer::refill() noexcept {
    // While the pool is dry, every event comes here: look without taking the lock (dropping an
    // event must stay as cheap as recording one, or a backlog would slow the run down).
    if (!current_ && dropped_ && owner_.free_count_.load(std::memory_order_relaxed) == 0) return false;
    // current_ is full here (or null: the first event, or the pool ran dry last time).
    if (current_) current_->used = owner_.chunk_events_;
    if (!owner_.exchange_full(*this)) return false;
    if (const std::uint64_t lost = dropped_) {   // say how much was lost, right where it was lost
        dropped_total_ += lost;
        dropped_ = 0;
        record(event_kind::dropped, lost);   // the fresh chunk has room: no second refill
    }
    return true;
}

void recorder::consume(chunk* c, const sink_fn& sink, std::size_t& events) {
    if (c->used > c->taken) sink(c->writer, c->records.get() + c->taken, c->used - c->taken);
    events += c->used - std::min(c->taken, c->used);
    c->used = 0;
    c->taken = 0;
    std::lock_guard lock(mutex_);
    free_.push_back(c);
    update_free_count();
}

std::size_t recorder::drain(const sink_fn& sink) {
    std::size_t events = 0;
    for (;;) {
        chunk* c;
        {
            std::lock_guard lock(mutex_);
            if (full_.empty()) break;
            c = full_.front();
            full_.pop_front();
        }
        consume(c, sink, events);
    }
    return events;
}

std::size_t recorder::drain_recorded(const sink_fn& sink) {
    struct range {
        unsigned writer;
        const event_record* first;
        std::size_t count;
    };
    std::vector<chunk*> full;
    std::vector<range> partial;
    {
        // One critical section for both, so that no worker's chunk can move from "current" to
        // "full" between them: each worker's full chunks are older than its current one.
        std::lock_guard buffers_lock(buffers_mutex_);
        std::lock_guard lock(mutex_);
        full.assign(full_.begin(), full_.end());
        full_.clear();
        for (const auto& b : buffers_) {
            chunk* c = b->current_;
            if (!c) continue;
            const std::size_t n = b->records_in_current();
            if (n > c->taken) partial.push_back({b->writer_, c->records.get() + c->taken, n - c->taken});
            c->taken = n;
        }
    }
    // Without the lock: a worker only writes past the records taken (after its published
    // position), and only this consumer gives chunks back to the pool.
    std::size_t events = 0;
    for (chunk* c : full) consume(c, sink, events);
    for (const range& r : partial) {
        sink(r.writer, r.first, r.count);
        events += r.count;
    }
    return events;
}

bool recorder::wait_for_backlog(std::size_t backlog, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    backlog = std::max<std::size_t>(backlog, 1);
    backlog_wanted_ = backlog;
    backlog_cv_.wait_for(lock, timeout, [&] { return full_.size() >= backlog || consumer_woken_; });
    backlog_wanted_ = SIZE_MAX;
    consumer_woken_ = false;
    return full_.size() >= backlog;
}

void recorder::wake_consumer() {
    std::lock_guard lock(mutex_);
    consumer_woken_ = true;
    backlog_cv_.notify_all();
}

std::size_t recorder::flush(const sink_fn& sink) {
    std::vector<event_buffer*> buffers;
    {
        std::lock_guard lock(buffers_mutex_);
        for (auto& b : buffers_) buffers.push_back(b.get());
    }
    for (event_buffer* b : buffers) {
        b->dropped_total_ += b->dropped_;   // lost at the very end: nothing followed to carry a marker
        b->dropped_ = 0;
        std::lock_guard lock(mutex_);
        chunk* c = b->current_;
        if (!c) continue;
        c->used = b->records_in_current();
        if (c->used > c->taken) full_.push_back(c);
        else {
            c->used = c->taken = 0;
            free_.push_back(c);
        }
        update_free_count();
        b->use_chunk(nullptr, chunk_events_);
    }
    return drain(sink);
}

std::size_t recorder::snapshot(const sink_fn& sink) {
    std::lock_guard buffers_lock(buffers_mutex_);
    std::lock_guard lock(mutex_);
    std::size_t events = 0;
    // From `taken` on: what a consumer's drain_recorded passed already is not passed twice.
    for (const chunk* c : full_) {
        if (c->used > c->taken) sink(c->writer, c->records.get() + c->taken, c->used - c->taken);
        events += c->used - std::min(c->taken, c->used);
    }
    for (const auto& b : buffers_) {
        if (!b->current_) continue;
        const std::size_t n = b->records_in_current(), from = b->current_->taken;
        if (n > from) sink(b->writer_, b->current_->records.get() + from, n - from);
        events += n - std::min(from, n);
    }
    return events;
}

std::uint64_t recorder::dropped_total() const noexcept {
    std::uint64_t n = 0;
    std::lock_guard lock(buffers_mutex_);
    for (const auto& b : buffers_) n += b->dropped_total_ + b->dropped_;
    return n;
}

}   // namespace pipescope::trace
