// What a worker and its scheduler do differently on virtual time (scheduler_options::virtual_time,
// virtual_executor.hpp): where the workers give up the token, and what each step costs. The same
// yield points serve the threads of a thread-bound policy on virtual cores (virtual_actor).
//
// Yield points: after every job, after a search for work that cost something, an idle worker's
// yield, and the hooks that end a node before its effects are published (task_finished). A job
// costs the time its thread used since the previous yield point (measure_jobs) plus what it
// declared with virtual_work(); a search costs the steal attempts it made, at the calibrated costs.
// That time is read with two nested clocks, so that nodes cheaper than a read of the thread CPU
// clock are priced too (interval_price.hpp).
#include "../scheduler_impl.hpp"
#include "../trace_hooks.hpp"
#include "interval_price.hpp"
#include "virtual_executor.hpp"

#include <pipescope/node_costs.hpp>

#include <algorithm>
#include <ctime>
#include <optional>
#include <utility>

namespace pipescope::detail {

namespace {
std::uint64_t clock_ns(clockid_t clock) noexcept {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}
}   // namespace

thread_local virtual_actor* tls_virtual_actor = nullptr;

// The wall clock is read inside the CPU clock's reads, at the mark and at the end alike
// (interval_price.hpp): its interval then holds none of the CPU clock's system calls.
void virtual_actor::mark() noexcept {
    mark_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    mark_wall_ns = clock_ns(CLOCK_MONOTONIC);
    skipped_wall_ns = 0;
    ended_wall_ns = 0;
}

void virtual_actor::begin() noexcept {
    if (options->measure_jobs) mark();
    declared_ns = 0;
}

int virtual_actor::lock_after(std::uint64_t next_stage) const noexcept {
    if (queue_locks == 0 || next_stage == no_stage) return -1;
    return static_cast<int>(std::min(next_stage, queue_locks));
}

std::uint64_t virtual_actor::measured() noexcept {
    if (!options->measure_jobs) return 0;
    // The wall clock first: the end's reads mirror mark()'s, so that they nest.
    const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
    const std::uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - mark_ns;
    const std::uint64_t end = ended_wall_ns ? ended_wall_ns : now;
    const interval_price p =
        price_interval({.cpu_ns = cpu, .wall_ns = end - mark_wall_ns, .skipped_wall_ns = skipped_wall_ns + (now - end)},
                       options->costs.clock_read_ns, options->costs.wall_clock_read_ns);
    executor->count_interval(p.by_cpu_clock);
    return p.ns;
}

void virtual_actor::yield(std::uint64_t extra_ns, std::uint64_t next_stage) {
    const std::uint64_t cost = extra_ns + declared_ns + charged_ns + measured();
    declared_ns = 0;
    charged_ns = 0;
    executor->advance(index, cost, lock_after(next_stage));
    restart_measure();   // waiting for the token is not the job's time
}

void virtual_actor::advance_priced(std::uint64_t cost_ns) {
    executor->advance(index, cost_ns);
    restart_measure();
}

void virtual_actor::node_begins() noexcept {
    if (!options->measure_jobs) return;
    const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
    skipped_wall_ns += now - mark_wall_ns;
    mark_wall_ns = now;
}

void virtual_actor::node_ends() noexcept {
    if (options->measure_jobs) ended_wall_ns = clock_ns(CLOCK_MONOTONIC);
}

std::uint64_t virtual_actor::take_measured() noexcept {
    const std::uint64_t ns = measured();
    restart_measure();
    return ns;
}

void virtual_actor::yield_fixed(std::uint64_t cost_ns, std::uint64_t next_stage) {
    declared_ns = 0;   // the source's cost holds what the node declared, not what the scheduler charged
    const std::uint64_t cost = cost_ns + charged_ns;
    charged_ns = 0;
    executor->advance(index, cost, lock_after(next_stage));
    if (options->measure_jobs) mark();
}

void virtual_actor::restart_measure() noexcept {
    if (options->measure_jobs) mark();
}

namespace {
// A node ends on a virtual actor: with a cost source it costs what `price` asks the source, else
// what its job measured and declared since the last yield point.
template <class Price>
void virtual_node_end(Price price, std::uint64_t next_stage = virtual_actor::no_stage) noexcept {
    virtual_actor* a = tls_virtual_actor;
    if (!a) return;
    if (const node_cost_source* src = a->options->node_costs) a->yield_fixed(price(*src), next_stage);
    else a->yield(0, next_stage);
}
}   // namespace

void virtual_restart_measure() noexcept {
    if (virtual_actor* a = tls_virtual_actor) a->restart_measure();
}

void virtual_node_begins() noexcept {
    if (virtual_actor* a = tls_virtual_actor) a->node_begins();
}

void virtual_node_ends() noexcept {
    if (virtual_actor* a = tls_virtual_actor) a->node_ends();
}

void virtual_actor_park() {
    virtual_actor* a = tls_virtual_actor;
    a->yield();   // what it did since its last yield point is its own time, spent on its core
    a->executor->park(a->index, 0);
    a->restart_measure();
}

void virtual_actor_unpark(virtual_executor& executor, unsigned target) noexcept {
    const virtual_actor* a = tls_virtual_actor;
    const bool inside = a && a->executor == &executor;
    executor.unpark(target, inside ? std::optional<unsigned>(a->index) : std::nullopt,
                    inside ? a->options->costs.wake_ns : 0);
}

void virtual_pipeline_node_end(std::uint64_t iteration, std::uint64_t stage, std::uint64_t next_stage) noexcept {
    virtual_node_end([&](const node_cost_source& s) { return s.pipeline_node_ns(iteration, stage); }, next_stage);
}

void virtual_graph_node_end(std::uint64_t stage, std::uint64_t instance, std::uint64_t queue_ops) noexcept {
    // A recorded instance's slice holds its body only: its queue reservations come before it and
    // its commits after. Measured live, they are in the thread CPU time around the node; priced from
    // a source, each one is charged queue_op_ns (a reserve plus its commit, pipescope calibrate).
    virtual_node_end([&](const node_cost_source& s) {
        return s.graph_node_ns(stage, instance) + queue_ops * tls_virtual_actor->options->costs.queue_op_ns;
    });
}

void worker::virtual_search_cost(const worker_counters& before) {
    const virtual_costs& c = sched_.options().costs;
    const std::uint64_t steals = counters.steals.load(std::memory_order_relaxed) - before.steals;
    const std::uint64_t failed = counters.steal_attempts.load(std::memory_order_relaxed) - before.steal_attempts - steals;
    // A stolen job's frame was last written by the victim, on another core: each steal also moves
    // its cache lines here (handoff_ns, issue 34).
    // The spin rounds since the last search are charged with it: an idle worker's clock moves by
    // what its spinning and its steal attempts cost, never by the simulation's hand-overs.
    const std::uint64_t cost =
        steals * (c.steal_ns + c.handoff_ns) + failed * c.failed_steal_ns + std::exchange(spin_ns_, 0);
    if (cost > 0) virtual_.advance_priced(cost);
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

void scheduler_impl::virtual_outside_ran(std::uint64_t end_ns) {
    virtual_end_ns_.store(end_ns, std::memory_order_release);
    virtual_->move_now(end_ns);
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
