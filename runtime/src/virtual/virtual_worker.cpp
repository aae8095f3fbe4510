// What a worker and its scheduler do differently on virtual time (scheduler_options::virtual_time,
// virtual_executor.hpp): where the workers give up the token, and what each step costs.
//
// Yield points: after every job, after a search for work that cost something, an idle worker's
// yield, and the hooks that end a node before its effects are published (task_finished). A job
// costs the thread CPU time it used since the previous yield point (measure_jobs) plus what it
// declared with virtual_work(); a search costs the steal attempts it made, at the calibrated costs.
#include "../scheduler_impl.hpp"
#include "../trace_hooks.hpp"
#include "virtual_executor.hpp"

#include <pipescope/node_costs.hpp>

#include <ctime>

namespace pipescope::detail {

namespace {
std::uint64_t thread_cpu_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}
}   // namespace

void worker::virtual_job_begin() noexcept {
    virtual_mark_ns_ = sched_.options().measure_jobs ? thread_cpu_ns() : 0;
    virtual_declared_ns_ = 0;
}

void worker::virtual_yield(std::uint64_t extra_ns) {
    std::uint64_t cost = extra_ns + virtual_declared_ns_;
    const bool measure = sched_.options().measure_jobs;
    if (measure) {
        // The interval holds about one clock read (the end of the read that set the mark, the start
        // of this one): the calibrated cost of a read comes off (cli: pipescope calibrate).
        const std::uint64_t used = thread_cpu_ns() - virtual_mark_ns_;
        const std::uint64_t read = sched_.options().costs.clock_read_ns;
        cost += used > read ? used - read : 0;
    }
    virtual_declared_ns_ = 0;
    sched_.virtual_time()->advance(index_, cost);
    if (measure) virtual_mark_ns_ = thread_cpu_ns();   // waiting for the token is not the job's time
}

void worker::virtual_yield_fixed(std::uint64_t cost_ns) {
    virtual_declared_ns_ = 0;   // the source's cost holds what the node declared
    sched_.virtual_time()->advance(index_, cost_ns);
    if (sched_.options().measure_jobs) virtual_mark_ns_ = thread_cpu_ns();
}

namespace {
// A node ends on a virtual worker: with a cost source it costs what `price` asks the source, else
// what its job measured and declared since the last yield point.
template <class Price>
void virtual_node_end(Price price) noexcept {
    worker* w = tls_worker;
    if (!w || !w->sched().virtual_time()) return;
    if (const node_cost_source* src = w->sched().options().node_costs) w->virtual_yield_fixed(price(*src));
    else w->virtual_yield();
}
}   // namespace

void worker::virtual_restart_measure() noexcept {
    if (sched_.options().measure_jobs) virtual_mark_ns_ = thread_cpu_ns();
}

void virtual_restart_measure() noexcept {
    if (worker* w = tls_worker; w && w->sched().virtual_time()) w->virtual_restart_measure();
}

void virtual_pipeline_node_end(std::uint64_t iteration, std::uint64_t stage) noexcept {
    virtual_node_end([&](const node_cost_source& s) { return s.pipeline_node_ns(iteration, stage); });
}

void virtual_graph_node_end(std::uint64_t stage, std::uint64_t instance) noexcept {
    virtual_node_end([&](const node_cost_source& s) { return s.graph_node_ns(stage, instance); });
}

void worker::virtual_search_cost(const worker_counters& before) {
    const virtual_costs& c = sched_.options().costs;
    const std::uint64_t steals = counters.steals.load(std::memory_order_relaxed) - before.steals;
    const std::uint64_t failed = counters.steal_attempts.load(std::memory_order_relaxed) - before.steal_attempts - steals;
    const std::uint64_t cost = steals * c.steal_ns + failed * c.failed_steal_ns;
    if (cost > 0) sched_.virtual_time()->advance(index_, cost);
}

void scheduler_impl::virtual_outside_submit(bool starts_program) {
    std::lock_guard lock(virtual_hold_mutex_);
    if (virtual_holder_ == std::this_thread::get_id()) {   // already holding (since its last program ended)
        if (starts_program) virtual_begin_ns_ = virtual_->now();
        return;
    }
    const std::uint64_t now = virtual_->hold();
    if (starts_program) virtual_begin_ns_ = now;
    virtual_holder_ = std::this_thread::get_id();
}

void scheduler_impl::virtual_outside_wait() {
    std::lock_guard lock(virtual_hold_mutex_);
    if (virtual_holder_ != std::this_thread::get_id()) return;
    virtual_holder_ = {};
    virtual_->release();
}

std::uint64_t scheduler_impl::virtual_now() const { return virtual_->now(); }

scheduler_impl::virtual_pause::virtual_pause(scheduler_impl& s, bool let_go_at_end) {
    if (!s.virtual_) return;
    bool had;
    {
        std::lock_guard lock(s.virtual_hold_mutex_);
        had = s.virtual_holder_ == std::this_thread::get_id();
    }
    s.virtual_outside_submit(false);
    if (let_go_at_end || !had) release_ = &s;
}

scheduler_impl::virtual_pause::~virtual_pause() {
    if (release_) release_->virtual_outside_wait();
}

void scheduler_impl::virtual_outside_finished(worker& w, std::thread::id waiter) noexcept {
    virtual_end_ns_.store(virtual_->clock(w.index()), std::memory_order_release);
    std::lock_guard lock(virtual_hold_mutex_);
    if (virtual_holder_ != std::thread::id{}) return;   // somebody outside holds it already
    virtual_->freeze();
    virtual_holder_ = waiter;
}

}   // namespace pipescope::detail
