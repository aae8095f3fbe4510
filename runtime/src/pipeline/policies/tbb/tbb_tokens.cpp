#include "tbb_tokens.hpp"
#include "../../policy.hpp"
#include "../../start_iteration.hpp"

#include "../../../trace_hooks.hpp"
#include "../../declared_stages.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipescope::detail {

namespace {
constexpr std::uint8_t mark_passed = 1;
constexpr std::uint8_t mark_parked = 2;

std::uint32_t clamp32(std::uint64_t v) noexcept {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, 0xFFFFFFFFu));
}

// Construct-and-run needs the filter chain before the first item (seed 001 §10: TBB's pipeline
// "structure is not suitable" for x264, whose stages are decided on the fly, Reed et al.).
unsigned checked_tokens(const pipeline_options& o, unsigned workers) {
    check_declared_stages(o, {"tbb", "it must know the filter chain",
                              "stage 0 is the input filter, where the loop condition runs, one item at a time and in "
                              "order",
                              tbb_engine::max_stages});
    const unsigned n = effective_throttle(o, workers);
    if (n > tbb_engine::max_tokens)
        throw std::invalid_argument("pipe_while: policy 'tbb': throttle N = " + std::to_string(n) + " tokens, at most " +
                                    std::to_string(tbb_engine::max_tokens));
    return n;
}
}   // namespace

tbb_engine::tbb_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body, const pipeline_options& o)
    : sched_(s),
      condition_(condition),
      body_(body),
      observer_(o.observer),
      tokens_(checked_tokens(o, s.workers())),
      n_(o.declared_stages.size()),
      traced_(hooks_every_node(s)),
      tasks_(std::make_unique<item_task[]>(tokens_)),
      filters_(std::make_unique<filter[]>(n_ + 1)) {
    for (unsigned k = 0; k < tokens_; ++k) tasks_[k].engine = this;
    for (std::uint64_t j = 0; j <= n_; ++j) {
        filter& f = filters_[j];
        f.kind = j < n_ ? o.declared_stages[j] : stage_kind::serial_in_order;   // n_: the output filter
        if (f.kind == stage_kind::serial_in_order) f.mark = std::make_unique<std::uint8_t[]>(tokens_);
        if (f.kind == stage_kind::serial_out_of_order) f.fifo = std::make_unique<std::uint64_t[]>(tokens_);
    }
    input_.engine = this;
}

pipeline_stats tbb_engine::run() {
    outstanding_.add(1);   // the input filter
    submit(sched_, &input_);
    outstanding_.wait(sched_);

    pipeline_stats st;
    st.iterations = retired.load(std::memory_order_acquire);
    st.peak_live = peak_live_;
    st.suspensions = parks_.load(std::memory_order_relaxed);
    st.throttle_waits = token_waits_;
    st.throttle = tokens_;
    errors_.rethrow_and_reset();
    return st;
}

void tbb_engine::record_exception(std::exception_ptr e) noexcept {
    errors_.capture(std::move(e));
    stopping.store(true, std::memory_order_release);
}

// ---------------------------------------------------------------------------------------------
// Tokens and the input filter

// The input filter may start an item only with a free token. Returns true if it now waits for one
// (a retiring item will run it), false if it may go on. Dekker-style handshake with retire().
bool tbb_engine::wait_for_token() noexcept {
    const std::uint64_t created = created_;
    if (created - retired.load(std::memory_order_acquire) < tokens_) return false;
    ++token_waits_;
    token_wait_since_ =
        trace_event_at(0, trace::event_kind::throttle_suspend, created - retired.load(std::memory_order_relaxed), tokens_);
    input_waits_.store(true, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const bool still_full = created - retired.load(std::memory_order_seq_cst) >= tokens_;
    if (still_full || !input_waits_.exchange(false, std::memory_order_acq_rel)) return true;
    trace_event(trace::event_kind::throttle_resume, created - retired.load(std::memory_order_relaxed), token_wait_since_,
                tokens_);
    return false;
}

// Fig. 5(b), first entry: run the input filter (the loop condition and stage 0) for a new item.
void tbb_engine::input_step() noexcept {
    if (control_stops()) {
        outstanding_.arrive();
        return;
    }
    if (wait_for_token()) return;   // never true in practice: the input is spawned only with a token
    if (!loop_goes_on(condition_)) {
        outstanding_.arrive();
        return;
    }
    start_item(created_++);
}

void tbb_engine::start_item(std::uint64_t i) noexcept {
    item_task& r = task_of(i);
    const std::uint64_t live = i + 1 - retired.load(std::memory_order_relaxed);
    peak_live_ = std::max(peak_live_, live);
    created_published_.store(i + 1, std::memory_order_relaxed);
    outstanding_.add(1);
    r.filter = 0;
    r.finishing = false;
    if (!make_frame(*this, r, gated_setup(this, &r.sync, i, observer_, traced_), body_)) {
        sched_.impl().current()->push(&input_);   // lets the input see `stopping` and end the loop
        outstanding_.arrive();
        return;
    }
    trace_event(trace::event_kind::token_acquire, i, tokens_, clamp32(live));
    run_stage_zero(*this, r, observer_, traced_, clamp32(live), line_of(i));
}

// Item i leaves stage 0: Fig. 5(b) line 2, "if (first_entry && --input_tokens > 0) spawn_sibling".
void tbb_engine::release_control(iteration&) noexcept {
    if (wait_for_token()) return;
    sched_.impl().current()->push(&input_);
}

std::uint32_t tbb_engine::in_flight_after_retiring(std::uint64_t i) const noexcept {
    const std::uint64_t created = created_published_.load(std::memory_order_relaxed);
    return clamp32(created > i ? created - i - 1 : 0);
}

// ---------------------------------------------------------------------------------------------
// Filters and their input buffers

bool tbb_engine::can_enter(filter& f, std::uint64_t i) const noexcept {
    switch (f.kind) {
        case stage_kind::serial_in_order: return f.turn == i;
        case stage_kind::serial_out_of_order: return !f.busy;
        default: return true;
    }
}

// In order, under f.m: the turn moves past items that skipped the filter; returns the item whose
// turn it is now if it is parked in the buffer (it enters), `none` otherwise. Only items in flight
// hold marks, and they are all within N of the turn, so the ring slot turn % N is the turn's own.
std::uint64_t tbb_engine::advance(filter& f) noexcept {
    for (;;) {
        std::uint8_t& m = f.mark[f.turn % tokens_];
        if (m == mark_passed) {
            m = 0;
            ++f.turn;
            continue;
        }
        if (m == mark_parked) {
            m = 0;
            return f.turn;
        }
        return none;
    }
}

// Under f.m: item `taken` leaves the buffer of filter f_index and enters the filter.
std::uint64_t tbb_engine::take_parked(filter& f, std::uint64_t f_index, std::uint64_t taken) noexcept {
    --f.parked;
    item_task& t = task_of(taken);
    const bool output = f_index == n_;
    if (!output) trace_event(trace::event_kind::buffer_take, taken, f_index, f.parked);
    t.it.mark_resumed();
    t.line_since = trace_event_at(0, trace::event_kind::iteration_resume, taken, t.line_since,
                                  output ? trace::final_stage_operand : clamp32(f_index), line_of(taken));
    return taken;
}

// Item i leaves filter f_index: a serial filter passes its turn on, and if the item due next waits in
// the buffer, the caller spawns it (TBB's note_done: the thread that finished item i-1 in the filter
// takes item i next).
tbb_engine::item_task* tbb_engine::leave(std::uint64_t f_index, std::uint64_t i) noexcept {
    if (f_index == 0) return nullptr;   // the input filter: serial by construction (input_)
    filter& f = filters_[f_index];
    std::uint64_t taken = none;
    if (f.kind == stage_kind::serial_in_order) {
        std::lock_guard lock(f.m);
        f.turn = i + 1;
        taken = advance(f);
        if (taken != none) take_parked(f, f_index, taken);
    } else if (f.kind == stage_kind::serial_out_of_order) {
        std::lock_guard lock(f.m);
        if (f.count > 0) {
            taken = f.fifo[f.head];
            f.head = (f.head + 1) % tokens_;
            --f.count;
            take_parked(f, f_index, taken);   // f.busy stays: the taken item is inside now
        } else {
            f.busy = false;
        }
    }
    return taken == none ? nullptr : &task_of(taken);
}

// Item i jumps over filter f_index (iterations may skip stages). A serial_in_order filter still
// sees it pass, as an empty node, without making it wait: the turn moves past it when it comes.
tbb_engine::item_task* tbb_engine::skip(std::uint64_t f_index, std::uint64_t i) noexcept {
    filter& f = filters_[f_index];
    if (f.kind != stage_kind::serial_in_order) return nullptr;
    std::lock_guard lock(f.m);
    if (f.turn != i) {
        f.mark[i % tokens_] = mark_passed;
        return nullptr;
    }
    ++f.turn;
    const std::uint64_t taken = advance(f);
    if (taken == none) return nullptr;
    take_parked(f, f_index, taken);
    return &task_of(taken);
}

void tbb_engine::spawn(item_task* t) noexcept {
    if (t) sched_.impl().current()->push(t);
}

// The item moved to it.current_stage(): leave the filter it was in, pass the ones it skips, and
// enter the new one if it can. The kind comes from the declaration; the body's stage / stage_wait
// choice does not matter.
bool tbb_engine::admit(iteration& it) {
    const std::uint64_t i = it.index();
    const std::uint64_t stage = it.current_stage();
    item_task& r = task_of(i);
    std::uint64_t to = n_;
    if (stage < final_stage) {
        if (stage >= n_) throw_undeclared_stage("tbb", i, stage, n_);
        to = stage;
    }
    spawn(leave(r.filter, i));
    for (std::uint64_t s = r.filter + 1; s < to; ++s) spawn(skip(s, i));
    r.filter = to;
    filter& f = filters_[to];
    if (f.kind == stage_kind::parallel) return true;
    std::lock_guard lock(f.m);
    if (!can_enter(f, i)) return false;   // suspend() parks it
    if (f.kind == stage_kind::serial_out_of_order) f.busy = true;
    return true;
}

// The item could not enter filter r.filter: park it in the filter's input buffer, unless the
// filter became free in the meantime.
bool tbb_engine::suspend(iteration& handle, std::coroutine_handle<>) noexcept {
    engine_iteration& it = engine_side(handle);
    const std::uint64_t i = it.index();
    item_task& r = task_of(i);
    const std::uint64_t f_index = r.filter;
    filter& f = filters_[f_index];
    it.set_boundary_ticks(0);   // the next node begins when the item is taken out, not now
    const std::uint64_t running_since = r.line_since;
    const std::uint64_t now = trace_now();
    // Once the item is in the buffer, another worker may take it, run it to the end and finish the
    // whole loop while this function still runs: hold the loop open meanwhile.
    outstanding_.add(1);
    bool parked = false;
    {
        std::lock_guard lock(f.m);
        if (can_enter(f, i)) {
            if (f.kind == stage_kind::serial_out_of_order) f.busy = true;
        } else {
            if (f.kind == stage_kind::serial_in_order) {
                f.mark[i % tokens_] = mark_parked;
            } else {
                f.fifo[(f.head + f.count) % tokens_] = i;
                ++f.count;
            }
            ++f.parked;
            parks_.fetch_add(1, std::memory_order_relaxed);
            const bool output = f_index == n_;
            if (now) {
                trace_event_at(now, trace::event_kind::iteration_suspend, i, running_since,
                               output ? trace::final_stage_operand : clamp32(f_index), line_of(i));
                if (!output) trace_event_at(now, trace::event_kind::buffer_put, i, f_index, f.parked);
            }
            r.line_since = now;   // the waiting state; the taker reads it under f.m
            parked = true;
        }
    }
    outstanding_.arrive();   // last touch of the engine when parked
    return parked;
}

// ---------------------------------------------------------------------------------------------
// The output filter and the end of an item

std::coroutine_handle<> tbb_engine::finish_iteration(iteration& handle) noexcept {
    engine_iteration& it = engine_side(handle);
    item_task& r = task_of(it.index());
    r.finishing = true;
    // The implicit final stage: the output filter, serial in order (admit() never throws for it).
    if (!it.enter_final() && suspend(it, r.frame)) return std::noop_coroutine();
    return retire(r);
}

void tbb_engine::item_task::run() noexcept {
    if (!finishing) {
        frame.resume();
        return;
    }
    engine->retire(*this).resume();
}

// Fig. 5(b) lines 14-18: the item has passed the last filter. Its token is given back; if the input
// filter waited for one, this thread starts the next item; the item parked at the output filter
// behind this one is taken next as well.
std::coroutine_handle<> tbb_engine::retire(item_task& r) noexcept {
    const std::uint64_t i = r.it.index();
    if (observer_) observer_->on_iteration_retire(i, this_worker_index());
    const std::uint32_t in_flight = in_flight_after_retiring(i);
    trace_event(trace::event_kind::iteration_retire, i, r.line_since, in_flight, line_of(i));
    trace_event(trace::event_kind::token_release, i, tokens_, in_flight);
    r.frame.destroy();
    retired.store(i + 1, std::memory_order_seq_cst);   // the token is free
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // From here on task i may be recycled for item i+N: do not touch r.
    item_task* next_out = leave(n_, i);
    const bool input =
        input_waits_.load(std::memory_order_seq_cst) && input_waits_.exchange(false, std::memory_order_acq_rel);
    worker* w = sched_.impl().current();
    if (input) {
        trace_event(trace::event_kind::throttle_resume, in_flight, token_wait_since_, tokens_);
        if (next_out) w->push(next_out);
        w->set_next(&input_);
    } else if (next_out) {
        w->set_next(next_out);
    }
    outstanding_.arrive();   // last touch of the engine: the loop may end and free it now
    return std::noop_coroutine();
}

extern const policy_entry tbb_policy{
    .name = "tbb",
    .summary =
        "TBB's construct-and-run pipeline: declared filters, at most N tokens in flight, ordered serial-filter buffers",
    .run = run_engine<tbb_engine>,
    .needs_declared_stages = true,
    .order = 40,
};

}   // namespace pipescope::detail
