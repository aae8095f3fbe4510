#include "piper.hpp"
#include "../../policy.hpp"
#include "../../start_iteration.hpp"

#include "../../../trace_hooks.hpp"

#include <algorithm>

namespace pipescope::detail {

namespace {
std::uint32_t stage_operand(std::uint64_t stage) noexcept {
    return stage >= final_stage ? trace::final_stage_operand : static_cast<std::uint32_t>(stage);
}
std::uint32_t clamp32(std::uint64_t v) noexcept {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, 0xFFFFFFFFu));
}
}   // namespace

piper_engine::piper_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body, const pipeline_options& o)
    : idle_source_(o.lazy_enabling),
      sched_(s),
      condition_(condition),
      body_(body),
      observer_(o.observer),
      throttle_(effective_throttle(o, s.workers())),
      lazy_(o.lazy_enabling),
      folding_(o.dependency_folding),
      traced_(hooks_every_node(s)),
      slots_(std::make_unique<slot_record[]>(throttle_)) {
    for (unsigned k = 0; k < throttle_; ++k) slots_[k].engine = this;
    control_.engine = this;
    setup_detail(s.impl().recorder());
}

pipeline_stats piper_engine::run() {
    const bool registered = idle_source_ && sched_.impl().register_source(this);
    outstanding_.add(1);   // the control
    submit(sched_, &control_);
    outstanding_.wait(sched_);
    if (registered) sched_.impl().unregister_source(this);

    pipeline_stats st;
    st.iterations = retired.load(std::memory_order_acquire);
    st.peak_live = peak_live_;
    st.suspensions = suspensions_.load(std::memory_order_relaxed);
    st.throttle_waits = throttle_waits_;
    st.tail_swaps = tail_swaps_.load(std::memory_order_relaxed);
    st.throttle = throttle_;
    errors_.rethrow_and_reset();
    return st;
}

// The fast path of a boundary does not read `stopping` (iteration::slow_): every slot's iteration
// gets its stop flag raised after `stopping` is set (seq_cst, the other half of iteration::reset's
// check). A slot between occupants is harmless: reset() overwrites the flag and re-checks.
void piper_engine::record_exception(std::exception_ptr e) noexcept {
    errors_.capture(std::move(e));
    stopping.store(true, std::memory_order_seq_cst);
    for (unsigned k = 0; k < throttle_; ++k) slots_[k].it.raise_stop();
}

// The control frame: throttle, evaluate the loop condition (part of serial stage 0), start the
// next iteration. Its continuation is pushed again when that iteration leaves stage 0.
void piper_engine::control_step() noexcept {
    if (control_stops()) {
        outstanding_.arrive();
        return;
    }
    const std::uint64_t created = created_;
    if (created - retired.load(std::memory_order_acquire) >= throttle_) {
        // Throttling edge (§4): wait for the oldest iteration to retire. Dekker-style handshake
        // with retire(): either it sees throttled_, or we see its retirement. Once throttled_ is
        // set, a retirer may run the control elsewhere and even finish the loop, so the loop is
        // held open (outstanding_) until the handshake is over.
        ++throttle_waits_;
        throttle_since_ = trace_event_at(0, trace::event_kind::throttle_suspend,
                                         created - retired.load(std::memory_order_relaxed), throttle_);
        outstanding_.add(1);
        throttled_.store(true, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        const bool still_full = created - retired.load(std::memory_order_seq_cst) >= throttle_;
        const bool keep_running = !still_full && throttled_.exchange(false, std::memory_order_acq_rel);
        outstanding_.arrive();
        if (!keep_running) return;   // suspended, or a retirer already runs us
        trace_event(trace::event_kind::throttle_resume, created - retired.load(std::memory_order_relaxed), throttle_since_,
                    throttle_);
    }
    if (!loop_goes_on(condition_)) {
        outstanding_.arrive();
        return;
    }
    start_iteration(created_++);
}

void piper_engine::start_iteration(std::uint64_t i) noexcept {
    slot_record& r = record_of(i);
    const std::uint64_t live = i + 1 - retired.load(std::memory_order_relaxed);
    peak_live_ = std::max(peak_live_, live);
    created_published_.store(i + 1, std::memory_order_relaxed);
    outstanding_.add(1);
    r.finishing = false;
    const engine_iteration::setup setup{.engine = this,
                                        .slot = &r.sync,
                                        .prev_slot = i == 0 ? nullptr : &record_of(i - 1).sync,
                                        .index = i,
                                        .observer = observer_,
                                        .folding = folding_,
                                        .eager = !lazy_,
                                        .traced = traced_,
                                        .fold = traced_ && fold_new_iterations(),
                                        .virtual_time = sched_.impl().virtual_time() != nullptr};
    if (!make_frame(*this, r, setup, body_)) {
        sched_.impl().current()->push(&control_);   // lets the control see `stopping` and end the loop
        outstanding_.arrive();
        return;
    }
    run_stage_zero(*this, r, observer_, traced_, clamp32(live), line_of(i));
}

void piper_engine::release_control(iteration&) noexcept { sched_.impl().current()->push(&control_); }

// How far iteration i-1 has progressed, as seen by node (i, waited_stage).
std::uint64_t piper_engine::progress_of_predecessor(std::uint64_t i, std::uint64_t waited_stage) noexcept {
    if (i == 0) return retired_stage;
    const std::uint64_t c = record_of(i - 1).sync.counter.load(std::memory_order_seq_cst);
    if (c > waited_stage) return c;
    if (retired.load(std::memory_order_seq_cst) >= i) return retired_stage;
    return c;
}

// Claims iteration `index` in slot r if it is suspended on a cross edge that `predecessor_progress`
// satisfies.
//
// The index must be checked here, after the status load and against the status value the CAS
// uses: checking it before (as retire() and find_enabled_work() used to) leaves an ABA window.
// Between that check and the status load, iteration `index` can retire and its slot be reused by
// index+K (or +2K...), which suspends on its own cross edge; the CAS then claims the wrong
// iteration with `predecessor_progress` meant for `index` (e.g. retired_stage), and index+K runs a
// node before (index+K-1, stage) is done, or even retires out of order. Seen under TSan with P=3
// on 2 cores as races and wrong results in pipe-fib. With this order the status read
// synchronizes with the suspension that wrote it, which comes after that iteration's
// start_iteration() stored its index, so a reused slot shows a different index; a stale
// suspended status of an older occupant makes the CAS fail, as that occupant was resumed since.
piper_engine::slot_record* piper_engine::try_claim(slot_record& r, std::uint64_t index,
                                                   std::uint64_t predecessor_progress) noexcept {
    std::uint64_t st = r.sync.status.load(std::memory_order_acquire);
    if (!(st & 1)) return nullptr;
    if (r.sync.index.load(std::memory_order_acquire) != index) return nullptr;
    if (predecessor_progress <= r.sync.waiting_stage.load(std::memory_order_relaxed)) return nullptr;
    if (!r.sync.status.compare_exchange_strong(st, st + 1, std::memory_order_acq_rel)) return nullptr;
    suspended_.fetch_sub(1, std::memory_order_relaxed);
    after_claim(r, false);
    r.it.set_prev_seen(predecessor_progress);
    r.it.mark_resumed();
    r.line_since = trace_event_at(0, trace::event_kind::iteration_resume, index, r.line_since,
                                  stage_operand(r.it.current_stage()), line_of(index));
    return &r;
}

// Eager enabling: iteration i just published a new stage; enable i+1 if it waits for it.
// PIPER §5: the worker follows its own iteration and pushes the enabled node of i+1.
void piper_engine::check_right(iteration& it) noexcept {
    const std::uint64_t next = it.index() + 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (slot_record* claimed = try_claim(record_of(next), next, it.current_stage())) sched_.impl().current()->push(claimed);
}

bool piper_engine::suspend(iteration& handle, std::coroutine_handle<>) noexcept {
    engine_iteration& it = engine_side(handle);
    slot_record& r = record_of(it.index());
    const std::uint64_t stage = it.current_stage();
    const std::uint64_t index = it.index();
    suspensions_.fetch_add(1, std::memory_order_relaxed);
    it.set_boundary_ticks(0);   // the next node begins when the iteration resumes, not now
    // The waiting state begins now; its start goes to the resumer with the status word. The
    // suspend itself is recorded only once we know the iteration stays suspended.
    const std::uint64_t running_since = r.line_since;
    const std::uint64_t suspended_at = trace_now();
    r.line_since = suspended_at;
    // A folded run ends where the iteration suspends, and the resumer's first node begins the next
    // (end_run arms its begin). The boundary into `stage` did not skip (that would have ended the
    // run already), so the run's last node is stage - 1.
    const bool run_was_open = it.run_open();
    const std::uint64_t run_first = it.run_first_stage();
    if (run_was_open) it.end_run();
    // Once the status is published, another worker may claim the iteration, run it to the end
    // and finish the whole loop while this function still runs: hold the loop open meanwhile.
    outstanding_.add(1);
    r.sync.waiting_stage.store(stage, std::memory_order_relaxed);
    std::uint64_t st = r.sync.status.load(std::memory_order_relaxed) + 1;   // odd: suspended
    suspended_.fetch_add(1, std::memory_order_relaxed);
    before_publish_suspension(r);
    r.sync.status.store(st, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // Re-check after publishing: the predecessor may have moved on in between (in lazy mode it
    // will not look at us again before it retires, so a missed edge here would cost parallelism).
    const std::uint64_t c = progress_of_predecessor(index, stage);
    bool suspended = true;
    if (c > stage && r.sync.status.compare_exchange_strong(st, st + 1, std::memory_order_acq_rel)) {
        suspended_.fetch_sub(1, std::memory_order_relaxed);
        after_claim(r, true);
        it.set_prev_seen(c);
        r.line_since = running_since;   // never really waited: the running state goes on
        if (run_was_open) {             // nor did the run of nodes end
            it.begin_run_at(run_first);
            it.disarm_begin();
        }
        suspended = false;
    }
    // Only locals from here on: a resumer may own the slot already.
    if (suspended && suspended_at) {
        if (run_was_open)
            trace_event_at(suspended_at, trace::event_kind::node_fold_end, index, stage - 1, clamp32(stage - run_first));
        trace_event_at(suspended_at, trace::event_kind::iteration_suspend, index, running_since, stage_operand(stage),
                       line_of(index));
    }
    if (suspended) after_suspended();
    outstanding_.arrive();   // last touch of the engine when suspended
    return suspended;
}

std::coroutine_handle<> piper_engine::finish_iteration(iteration& handle) noexcept {
    engine_iteration& it = engine_side(handle);
    slot_record& r = record_of(it.index());
    // The implicit final stage waits for iteration i-1 to retire: iterations retire in order.
    if (!it.enter_final()) {
        r.finishing = true;
        if (suspend(it, r.frame)) return std::noop_coroutine();
    }
    return retire(r);
}

void piper_engine::slot_record::run() noexcept {
    if (!finishing) {
        frame.resume();
        return;
    }
    std::coroutine_handle<> next = engine->retire(*this);
    next.resume();
}

// Run a claimed iteration next: by symmetric transfer if it resumes a stage, through the worker's
// assigned-job slot if it only has to retire.
std::coroutine_handle<> piper_engine::continue_with(slot_record* r) noexcept {
    if (!r->finishing) return r->frame;
    sched_.impl().current()->set_next(r);
    return std::noop_coroutine();
}

// The terminal of iteration i (§5): publish the retirement, check right, check parent, then pick
// the next vertex by PIPER's rules for iteration terminals, including the tail swap.
std::coroutine_handle<> piper_engine::retire(slot_record& r) noexcept {
    const std::uint64_t i = r.it.index();
    if (observer_) observer_->on_iteration_retire(i, this_worker_index());
    trace_event(trace::event_kind::iteration_retire, i, r.line_since, live_after_retiring(i), line_of(i));
    r.frame.destroy();
    retired.store(i + 1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // From here on slot i may be reused by iteration i+K: do not touch r.

    slot_record* right = enable_at_retire(i);
    const bool parent = throttled_.load(std::memory_order_seq_cst) && throttled_.exchange(false, std::memory_order_acq_rel);
    if (parent)   // check parent resumes the throttled control
        trace_event(trace::event_kind::throttle_resume, live_after_retiring(i), throttle_since_, throttle_);

    worker* w = sched_.impl().current();
    std::coroutine_handle<> next = std::noop_coroutine();
    if (parent && right) {
        w->push(&control_);
        next = continue_with(right);
    } else if (parent) {
        if (job* tail = w->pop()) {   // tail swap
            tail_swaps_.fetch_add(1, std::memory_order_relaxed);
            w->push(&control_);
            w->set_next(tail);
        } else {
            w->set_next(&control_);
        }
    } else if (right) {
        next = continue_with(right);
    }
    outstanding_.arrive();   // last touch of the engine: the loop may end and free it now
    return next;
}

// Check right at an iteration terminal (§5): iteration i+1, if it is suspended (i retired, so any
// cross edge of i+1 is satisfied).
piper_engine::slot_record* piper_engine::enable_at_retire(std::uint64_t i) noexcept {
    return try_claim(record_of(i + 1), i + 1, retired_stage);   // checks the index itself
}

std::uint32_t piper_engine::live_after_retiring(std::uint64_t i) const noexcept {
    const std::uint64_t created = created_published_.load(std::memory_order_relaxed);
    return clamp32(created > i ? created - i - 1 : 0);
}

// Lazy enabling (§9): nobody checked right when a predecessor moved on, so an idle worker looks
// for suspended iterations whose cross edge is satisfied by now.
job* piper_engine::find_enabled_work() noexcept {
    if (suspended_.load(std::memory_order_acquire) == 0) return nullptr;
    for (unsigned k = 0; k < throttle_; ++k) {
        slot_record& r = slots_[k];
        if (!(r.sync.status.load(std::memory_order_acquire) & 1)) continue;
        const std::uint64_t i = r.sync.index.load(std::memory_order_acquire);
        const std::uint64_t waited = r.sync.waiting_stage.load(std::memory_order_relaxed);
        if (slot_record* claimed = try_claim(r, i, progress_of_predecessor(i, waited))) return claimed;
    }
    return nullptr;
}

extern const policy_entry piper_policy{
    .name = "piper",
    .summary = "Cilk-P's PIPER: work stealing, throttle K, tail swap, lazy enabling, dependency folding",
    .run = run_engine<piper_engine>,
    .order = 10,
};

}   // namespace pipescope::detail
