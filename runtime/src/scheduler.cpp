#include "recording/thread_times.hpp"
#include "scheduler_impl.hpp"

#include "frame_cache.hpp"
#include "trace_hooks.hpp"
#include "virtual/virtual_executor.hpp"

#include <pipescope/scheduler.hpp>

#include <pipescope/detail/cpu_relax.hpp>

#include <pipescope/trace_session.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipescope::detail {

thread_local worker* tls_worker = nullptr;
thread_local trace::event_buffer* tls_trace_buffer = nullptr;
thread_local int tls_thread_index = -1;

namespace {
// Idle back-off: spin with a pause, then yield, then park. A worker in a helping loop (waiting for
// a task group or a nested pipeline) parks with a timeout, because what it waits for may complete
// without any new work being pushed. While some pipeline relies on lazy enabling, parked workers
// also wake up now and then to look for iterations that became ready without being pushed.
constexpr int spin_rounds = 64;
constexpr int yield_rounds = 16;
constexpr std::chrono::microseconds lazy_poll{200};
constexpr std::chrono::microseconds helping_poll{100};
}   // namespace

worker::worker(scheduler_impl& s, unsigned index)
    : sched_(s),
      index_(index),
      rng_(0x9E3779B97F4A7C15ull * (index + 1)),
      frames_(std::make_unique<frame_cache>()),
      virtual_{.executor = s.virtual_time(), .index = index, .options = &s.options()} {}

worker::~worker() = default;

std::uint64_t worker::next_random() noexcept {
    // xorshift64*
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 2685821657736338717ull;
}

void worker::push(job* j) {
    deque_.push(j);
    sched_.notify_work();
}

job* worker::steal_somewhere() {
    const unsigned p = sched_.size();
    if (p > 1) {
        // Random victim selection (seed 001 §5, the ABP model): a few rounds over random victims.
        for (unsigned attempt = 0; attempt < 2 * p; ++attempt) {
            unsigned victim = static_cast<unsigned>(next_random() % (p - 1));
            if (victim >= index_) ++victim;
            live_counters::bump(counters.steal_attempts);
            if (job* j = sched_.at(victim).deque_.steal()) {
                live_counters::bump(counters.steals);
                trace_event(*this, trace::event_kind::steal, victim, reinterpret_cast<std::uintptr_t>(j), 1);
                return j;
            }
        }
    }
    if (job* j = sched_.take_injected()) return j;
    return sched_.find_registered_work();
}

job* worker::find_work() {
    if (job* j = next_) {
        next_ = nullptr;
        return j;
    }
    if (job* j = deque_.pop()) return j;
    return steal_somewhere();
}

void worker::run_until(const std::function<bool()>& done, bool helping) {
    int idle_rounds = 0;
    std::uint64_t attempts_at_idle = 0;
    // The buffer an idle_begin went to: an idle_end is recorded only into the same buffer, so a
    // recorder attached while this worker idles never sees an end without its begin.
    trace::event_buffer* idle_traced = nullptr;
    const bool virtual_time = sched_.virtual_time() != nullptr;
    while (!done()) {
        // A safe point: no record of this worker is in progress (attach_recorder waits for it).
        trace_epoch_seen_.store(sched_.trace_epoch(), std::memory_order_release);
        const worker_counters before = virtual_time ? counters.snapshot() : worker_counters{};
        job* j = find_work();
        if (virtual_time) virtual_search_cost(before);
        if (j) {
            if (idle_rounds > 0 && idle_traced && idle_traced == trace_buffer())
                // failed steal attempts are summed up, not recorded one by one
                trace_event(*this, trace::event_kind::idle_end,
                            counters.steal_attempts.load(std::memory_order_relaxed) - attempts_at_idle);
            live_counters::bump(counters.jobs_run);
            if (virtual_time) virtual_.begin();
            j->run();
            if (virtual_time) virtual_.yield();
            idle_rounds = 0;
            continue;
        }
        if (idle_rounds++ == 0) {
            attempts_at_idle = counters.steal_attempts.load(std::memory_order_relaxed);
            idle_traced = trace_buffer();
            trace_event(*this, trace::event_kind::idle_begin);
        }
        if (idle_rounds < spin_rounds) {
            // A virtual worker spins too, and is charged what the pauses took here (measured, like
            // a node) with its next search: a round of 32 pauses is ~310 ns on the machine of
            // docs/virtual.md, "Idle workers and hand-overs", more than the steal attempts between two rounds.
            for (int i = 0; i < 32; ++i) cpu_relax();
            if (virtual_time) spin_ns_ += virtual_.take_measured();
        } else if (idle_rounds < spin_rounds + yield_rounds) {
            if (virtual_time) virtual_.yield(sched_.options().costs.yield_ns);
            else std::this_thread::yield();
        } else if (sched_.enter_sleep(*this)) {
            const bool poll = helping || sched_.has_registered_sources();
            trace::event_buffer* parked_traced = trace_buffer();
            trace_event(*this, trace::event_kind::park);
            const std::uint64_t woken_by = park(poll ? (helping ? helping_poll : lazy_poll) : std::chrono::microseconds{0});
            if (parked_traced && parked_traced == trace_buffer()) trace_event(*this, trace::event_kind::park_end, woken_by);
            sched_.leave_sleep(*this);
            idle_rounds = spin_rounds;   // after a sleep, yield a little before sleeping again
        }
    }
    // A sync that waited ends its idling here: without the end, the idle slice would stay open to
    // the end of the task that synced, and its work after the sync would read as idle.
    if (idle_rounds > 0 && idle_traced && idle_traced == trace_buffer())
        trace_event(*this, trace::event_kind::idle_end,
                    counters.steal_attempts.load(std::memory_order_relaxed) - attempts_at_idle);
}

scheduler_impl::scheduler_impl(const scheduler_options& options) : options_(options) {
    unsigned n = options.workers;
    if (options.virtual_time && n == 0) throw std::invalid_argument("scheduler: virtual workers need a worker count");
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    if (options.virtual_time) virtual_ = std::make_unique<virtual_executor>(n);
    workers_.reserve(n);
    for (unsigned i = 0; i < n; ++i) workers_.push_back(std::make_unique<worker>(*this, i));
    threads_.reserve(n);
    for (unsigned i = 0; i < n; ++i) {
        threads_.emplace_back([this, i] {
            worker& w = *workers_[i];
            w.os_thread_id_.store(this_os_thread_id(), std::memory_order_release);
            tls_worker = &w;
            if (virtual_) {
                trace::tls_virtual_ticks = virtual_->clock_address(i);   // its events in virtual time
                tls_virtual_actor = &w.virtual_state();
                virtual_->enter(i);
            }
            w.run_until([this] { return stopping(); }, false);
            if (virtual_) virtual_->leave(i);
            tls_virtual_actor = nullptr;
            tls_worker = nullptr;
        });
    }
}

scheduler_impl::~scheduler_impl() {
    if (virtual_) {               // no program runs now: stopping is not part of one
        virtual_outside_wait();   // held since the last program waited for from here ended
        virtual_->wait_quiescent();
    }
    stop_.store(true, std::memory_order_release);
    for (auto& w : workers_) w->unpark();
    for (auto& t : threads_) t.join();
}

void scheduler_impl::attach_recorder(trace::recorder* r) {
    if (r && r->writers() < size())
        throw std::invalid_argument("attach_recorder: the recorder has " + std::to_string(r->writers()) + " buffers for " +
                                    std::to_string(size()) + " workers");
    recorder_.store(r, std::memory_order_release);
    {
        std::lock_guard lock(thread_buffers_mutex_);
        free_thread_buffers_.clear();
    }
    if (virtual_) {   // while virtual time stands still, no worker is inside a record
        const virtual_pause still(*this, false);
        for (unsigned i = 0; i < size(); ++i) workers_[i]->set_trace_buffer(r ? &r->buffer(i) : nullptr);
        return;
    }
    for (unsigned i = 0; i < size(); ++i) workers_[i]->set_trace_buffer(r ? &r->buffer(i) : nullptr);
    // Idle workers record too (idle, park). Before the caller may read or free the old buffers,
    // every worker must have passed a safe point after the switch: wake them all and wait.
    const std::uint64_t epoch = trace_epoch_.fetch_add(1, std::memory_order_acq_rel) + 1;
    for (unsigned i = 0; i < size(); ++i) {
        while (workers_[i]->trace_epoch_seen_.load(std::memory_order_acquire) < epoch) {
            workers_[i]->unpark();
            std::this_thread::yield();
        }
    }
}

trace::event_buffer* scheduler_impl::acquire_thread_buffer(std::uint64_t role) {
    trace::recorder* r = recorder_.load(std::memory_order_acquire);
    if (!r) return nullptr;
    std::lock_guard lock(thread_buffers_mutex_);
    if (auto it = free_thread_buffers_.find(role); it != free_thread_buffers_.end()) {
        trace::event_buffer* b = it->second;
        free_thread_buffers_.erase(it);
        return b;
    }
    return &r->add_writer();
}

void scheduler_impl::release_thread_buffer(std::uint64_t role, trace::event_buffer* b) {
    if (!b) return;
    std::lock_guard lock(thread_buffers_mutex_);
    free_thread_buffers_.emplace(role, b);
}

worker* scheduler_impl::current() const noexcept {
    worker* w = tls_worker;
    return (w && &w->sched() == this) ? w : nullptr;
}

void scheduler_impl::inject(job* j) {
    if (virtual_) virtual_outside_submit();
    {
        std::lock_guard lock(inject_mutex_);
        injected_.push_back(j);
        injected_size_.store(injected_.size(), std::memory_order_seq_cst);
    }
    notify_work();
}

job* scheduler_impl::take_injected() {
    if (injected_size_.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard lock(inject_mutex_);
    if (injected_.empty()) return nullptr;
    job* j = injected_.front();
    injected_.pop_front();
    injected_size_.store(injected_.size(), std::memory_order_release);
    return j;
}

// The registry is read by idle workers while pipelines come and go. A reader announces itself in
// the entry before loading the pointer; a pipeline leaving clears the pointer and then waits for
// the entry's readers to drain, so no reader ever touches a finished pipeline.
bool scheduler_impl::register_source(idle_work_source* s) noexcept {
    for (auto& e : sources_) {
        idle_work_source* expected = nullptr;
        if (e.source.compare_exchange_strong(expected, s, std::memory_order_acq_rel)) {
            registered_.fetch_add(1, std::memory_order_acq_rel);
            return true;
        }
    }
    return false;   // full: the pipeline still works, its suspended iterations resume at retirement
}

void scheduler_impl::unregister_source(idle_work_source* s) noexcept {
    for (auto& e : sources_) {
        if (e.source.load(std::memory_order_acquire) != s) continue;
        e.source.store(nullptr, std::memory_order_seq_cst);
        while (e.readers.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
        registered_.fetch_sub(1, std::memory_order_acq_rel);
        return;
    }
}

job* scheduler_impl::find_registered_work() noexcept {
    if (registered_.load(std::memory_order_acquire) == 0) return nullptr;
    for (auto& e : sources_) {
        if (e.source.load(std::memory_order_relaxed) == nullptr) continue;
        e.readers.fetch_add(1, std::memory_order_seq_cst);
        job* found = nullptr;
        if (idle_work_source* s = e.source.load(std::memory_order_seq_cst)) found = s->find_enabled_work();
        e.readers.fetch_sub(1, std::memory_order_release);
        if (found) return found;
    }
    return nullptr;
}

namespace {
thread_local std::uint64_t tls_current_task = 0;   // the recorded task this thread runs (task_spawning)
}

task_spawn task_spawning() noexcept { return {tls_current_task, trace_now()}; }

task_ids task_started(const task_spawn& spawn) noexcept {
#if PIPESCOPE_TRACING
    if (trace::event_buffer* buf = current_trace_buffer()) [[unlikely]] {
        thread_local std::uint64_t outside_tasks = 0;   // a recording thread that is not a worker
        const std::uint64_t id = tls_worker ? tls_worker->next_task_id() : ++outside_tasks;
        const std::uint64_t now = trace::now_ticks();
        // How long it waited to start, in ticks, in c and d (48 bits; 0: the spawn was not recorded).
        constexpr std::uint64_t max_delay = (std::uint64_t{1} << 48) - 1;
        const std::uint64_t delay = spawn.ticks && spawn.ticks <= now ? std::min(now - spawn.ticks, max_delay) : 0;
        buf->record_at(now, trace::event_kind::task_begin, id, spawn.parent, static_cast<std::uint32_t>(delay),
                       static_cast<std::uint16_t>(delay >> 32));
        const task_ids ids{id, tls_current_task};
        tls_current_task = id;
        return ids;
    }
#else
    (void)spawn;
#endif
    return {};
}
void virtual_yield_point(std::uint64_t extra_ns) noexcept {
    if (virtual_actor* a = tls_virtual_actor) a->yield(extra_ns);
}

void task_finished(task_ids ids) noexcept {
    virtual_yield_point();   // before the task's group learns of it
    trace_event(trace::event_kind::task_end, ids.id);
    if (ids.id) tls_current_task = ids.outer;
}

void submit(scheduler& s, job* j) {
    scheduler_impl& impl = s.impl();
    if (worker* w = impl.current()) {
        w->push(j);
    } else {
        // The thread runs on virtual cores of its own (bind-to-stage): the workers' time is held
        // still by the loop's caller, so a task submitted to them would never run.
        if (tls_virtual_actor)
            throw std::invalid_argument(
                "bind-to-stage on virtual workers: a stage forked tasks onto the workers; tasks inside a "
                "thread-bound stage are not modelled on virtual cores");
        impl.external_spawn();   // a recording session may open a run for it (loop_listener.hpp)
        impl.inject(j);
    }
}

void completion_latch::arrive() noexcept {
    if (count_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    worker* waiter;
    {
        std::lock_guard lock(mutex_);
        waiter = helping_worker_;
        // A program waited for from outside ends here: a virtual scheduler notes the time.
        if (worker* me = tls_worker; !waiter && me && me->sched().virtual_time())
            me->sched().virtual_outside_finished(*me, outside_waiter_);
        signaled_.store(true, std::memory_order_release);
        cv_.notify_all();
    }
    // Workers live as long as their scheduler, so unparking after the latch may be gone is safe.
    if (waiter) waiter->unpark();
}

void completion_latch::wait(scheduler& s) noexcept {
    if (count_.fetch_sub(1, std::memory_order_acq_rel) != 1) {   // give up the waiter's token
        if (worker* w = s.impl().current()) {
            {
                std::lock_guard lock(mutex_);
                helping_worker_ = w;
            }
            w->run_until([this] { return signaled_.load(std::memory_order_acquire); }, true);
        } else if (s.impl().virtual_time()) {
            {
                std::lock_guard lock(mutex_);
                outside_waiter_ = std::this_thread::get_id();   // it holds virtual time again at the end
            }
            s.impl().virtual_outside_wait();   // let virtual time run: everything it submitted is in
        }
        std::unique_lock lock(mutex_);   // also waits for the signaling arrive() to leave
        cv_.wait(lock, [this] { return signaled_.load(std::memory_order_relaxed); });
        helping_worker_ = nullptr;
        signaled_.store(false, std::memory_order_relaxed);
    }
    count_.store(1, std::memory_order_relaxed);   // ready for reuse (task groups sync repeatedly)
}

}   // namespace pipescope::detail

namespace pipescope {

scheduler::scheduler(scheduler_options options) : impl_(std::make_unique<detail::scheduler_impl>(options)) {
    impl_->set_owner(*this);
}
// PIPESCOPE_TRACE's session detaches its recorder, so it ends while the workers still run.
scheduler::~scheduler() { impl_->close_environment_session(); }

unsigned scheduler::workers() const noexcept { return impl_->size(); }

worker_counters scheduler::counters(unsigned worker) const noexcept {
    return worker < impl_->size() ? impl_->at(worker).counters.snapshot() : worker_counters{};
}

void scheduler::reset_counters() noexcept {
    for (unsigned i = 0; i < impl_->size(); ++i) impl_->at(i).counters.reset();
}

void scheduler::attach_recorder(trace::recorder* r) { impl_->attach_recorder(r); }

scheduler::virtual_span scheduler::last_virtual_span() const noexcept {
    return {impl_->virtual_begin_ns(), impl_->virtual_end_ns()};
}

void virtual_work(std::uint64_t ns) noexcept {
    if (detail::virtual_actor* a = detail::tls_virtual_actor) a->declared_ns += ns;
}

int this_worker_index() noexcept {
    return detail::tls_worker ? static_cast<int>(detail::tls_worker->index()) : detail::tls_thread_index;
}

}   // namespace pipescope
