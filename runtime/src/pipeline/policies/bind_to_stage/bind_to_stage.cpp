#include "bind_to_stage.hpp"
#include "../../policy.hpp"
#include "../../start_iteration.hpp"

#include "../../../trace_hooks.hpp"

#include <pipescope/trace/clock.hpp>
#include "../../declared_stages.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

namespace pipescope::detail {

namespace {

std::atomic<bind_to_stage_check*> installed_check{nullptr};

std::uint32_t clamp32(std::uint64_t v) noexcept {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, 0xFFFFFFFFu));
}

std::string param_error(const char* what, std::uint64_t value, std::uint64_t max) {
    std::string s = "pipe_while: policy 'bind-to-stage': ";
    s += what;
    s += " = ";
    s += std::to_string(value);
    s += " is out of range (1..";
    s += std::to_string(max);
    s += ", or 0 for the default)";
    return s;
}

// Construct-and-run, like tbb: the threads are bound to stages, so the stages must be known before
// the first item (seed 001 §10: the Pthreaded x264 is not a bind-to-stage pipeline of this kind).
const pipeline_options& checked(const pipeline_options& o) {
    check_declared_stages(o, {"bind-to-stage", "it binds threads to stages",
                              "stage 0 is the input stage, one thread that evaluates the loop condition and starts the "
                              "items in order",
                              bind_to_stage_engine::max_stages});
    if (o.stage_threads > bind_to_stage_engine::max_stage_threads)
        throw std::invalid_argument(param_error("stage_threads (c, threads per parallel stage)", o.stage_threads,
                                                bind_to_stage_engine::max_stage_threads));
    if (o.queue_size > bind_to_stage_engine::max_queue_size)
        throw std::invalid_argument(param_error("queue_size (Queue_size, capacity of each stage's queue)", o.queue_size,
                                                bind_to_stage_engine::max_queue_size));
    return o;
}

}   // namespace

void set_bind_to_stage_check(bind_to_stage_check* c) noexcept { installed_check.store(c, std::memory_order_release); }

bind_to_stage_engine::bind_to_stage_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body,
                                           const pipeline_options& o)
    : sched_(s),
      condition_(condition),
      body_(body),
      observer_(checked(o).observer),
      n_(o.declared_stages.size()),
      c_(effective_stage_threads(o, s.workers())),
      queue_size_(effective_queue_size(o)),
      traced_(s.impl().tracing()),
      stages_(n_) {
    for (std::uint64_t j = 0; j < n_; ++j) {
        stage& st = stages_[j];
        st.kind = o.declared_stages[j];
        st.threads = st.kind == stage_kind::parallel ? c_ : 1;
        if (j > 0) st.in = std::make_unique<stage_queue<item*>>(queue_size_);
    }
    scheduler_impl& impl = s.impl();
    if (impl.virtual_time()) {
        // The threads' time starts where the outside thread holds the workers' (loop_scope).
        if (impl.current())
            throw std::invalid_argument(
                "pipe_while: bind-to-stage on virtual workers runs only from outside the pool, not nested in a task");
        const virtual_costs& c = impl.options().costs;
        unsigned threads = 0;
        for (const stage& st : stages_) threads += st.threads;
        // A mutex waiter is woken like a parked one (wake_ns); locks: queue j's is j, retirement's n_.
        virtual_ = std::make_unique<virtual_executor>(threads,
                                                      virtual_executor::core_model{.cores = s.workers(),
                                                                                   .quantum_ns = c.quantum_ns,
                                                                                   .context_switch_ns = c.context_switch_ns,
                                                                                   .lock_hold_ns = c.lock_hold_ns,
                                                                                   .lock_wake_ns = c.wake_ns},
                                                      impl.virtual_now());
        for (unsigned t = 0; t < threads; ++t)
            actors_.push_back({.executor = virtual_.get(), .index = t, .options = &impl.options(), .queue_locks = n_});
        unsigned t = 0;   // actors in thread start order: stage by stage
        for (std::uint64_t j = 0; j < n_; ++j)
            for (unsigned k = 0; k < stages_[j].threads; ++k, ++t)
                virtual_->set_home_lock(t, j > 0 ? static_cast<int>(j) : -1);
        for (stage& st : stages_)
            if (st.in) st.in->use_virtual(virtual_.get());
    }
}

bind_to_stage_engine::~bind_to_stage_engine() {
    // Left after a stop: iterations parked in queues, reorder buffers, or waiting to retire. Their
    // frames are suspended at a boundary (or at the final suspend): destroying one unwinds its locals.
    for (item* r : window_) {
        if (r->frame) r->frame.destroy();
        delete r;
    }
}

// ---------------------------------------------------------------------------------------------
// The threads

pipeline_stats bind_to_stage_engine::run() {
    std::vector<std::thread> threads;
    std::vector<std::pair<std::uint64_t, trace::event_buffer*>> buffers;   // (role, buffer) per thread
    for (stage& st : stages_) st.alive = st.threads;
    const unsigned first_index = sched_.workers();
    try {
        for (std::uint64_t j = 0; j < n_; ++j) {
            for (unsigned t = 0; t < stages_[j].threads; ++t) {
                const std::uint64_t role = (j << 20) | t;
                trace::event_buffer* buf = traced_ ? sched_.impl().acquire_thread_buffer(role) : nullptr;
                buffers.emplace_back(role, buf);
                const int index = static_cast<int>(first_index + threads.size());
                const auto kind = static_cast<std::uint32_t>(stages_[j].kind);
                virtual_actor* actor = virtual_ ? &actors_[threads.size()] : nullptr;
                threads.emplace_back([this, j, t, buf, index, kind, actor] {
                    tls_trace_buffer = buf;
                    tls_thread_index = index;
                    if (actor) {   // its events in its virtual time; it runs when the executor says
                        trace::tls_virtual_ticks = virtual_->clock_address(actor->index);
                        tls_virtual_actor = actor;
                        virtual_->enter(actor->index);
                        actor->begin();
                    }
                    trace_event(trace::event_kind::thread_name, j, t, kind);
                    try {
                        if (j == 0) input_thread();
                        else stage_thread(j);
                    } catch (...) {   // the engine's own bookkeeping failed (allocation): stop the loop
                        record_exception(std::current_exception());
                    }
                    thread_exits(j);
                    if (actor) {
                        actor->yield();   // its last steps (the retirement it made) are its time too
                        virtual_->leave(actor->index);
                        tls_virtual_actor = nullptr;
                        trace::tls_virtual_ticks = nullptr;
                    }
                    tls_trace_buffer = nullptr;
                    tls_thread_index = -1;
                });
            }
        }
    } catch (...) {   // could not start every thread: stop those that run
        record_exception(std::current_exception());
        // The stages whose threads never started never exit: close every queue from here instead.
        for (stage& st : stages_)
            if (st.in) st.in->close();
        // Nor do they enter the executor: the others must not wait for them.
        for (std::size_t k = threads.size(); k < actors_.size(); ++k) virtual_->leave(static_cast<unsigned>(k));
    }
    for (auto& t : threads) t.join();
    // The loop ended when its last thread did: the workers' virtual time goes on from there.
    if (virtual_) sched_.impl().virtual_outside_ran(virtual_->now());
    for (auto& [role, buf] : buffers) sched_.impl().release_thread_buffer(role, buf);

    report_to_check();

    pipeline_stats stats;
    stats.iterations = retired.load(std::memory_order_acquire);
    stats.peak_live = peak_live_;
    stats.suspensions = blocks_.load(std::memory_order_relaxed);
    stats.throttle_waits = full_blocks_.load(std::memory_order_relaxed);
    stats.throttle = queue_size_;
    if (error_) std::rethrow_exception(error_);
    return stats;
}

// A test's check installed (bind_to_stage_check.hpp): what the run's queues and threads did.
void bind_to_stage_engine::report_to_check() const {
    bind_to_stage_check* c = installed_check.load(std::memory_order_acquire);
    if (!c) return;
    bind_to_stage_check::run report;
    report.capacity = queue_size_;
    for (const stage& st : stages_) {
        report.queue_peak.push_back(st.in ? st.in->peak() : 0);
        report.reorder_peak.push_back(st.reorder_peak);
        report.threads.push_back(st.threads);
        if (st.in) report.handoffs += st.in->handoffs();
    }
    if (virtual_) {
        report.lock_holder_preemptions = virtual_->lock_holder_preemptions();
        report.lock_waits = virtual_->lock_waits();
    }
    std::lock_guard lock(c->mutex);
    c->runs.push_back(std::move(report));
}

void bind_to_stage_engine::record_exception(std::exception_ptr e) noexcept {
    {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::move(e);
    }
    stopping.store(true, std::memory_order_release);
    abort_queues();
}

void bind_to_stage_engine::abort_queues() noexcept {
    for (stage& st : stages_)
        if (st.in) st.in->abort();
}

// The last thread of stage j closes queue j+1: every thread that could push into it (stages
// 0..j, by induction) has exited. Its threads drain it and exit in turn.
void bind_to_stage_engine::thread_exits(std::uint64_t j) {
    bool last;
    {
        std::lock_guard lock(exit_mutex_);
        last = --stages_[j].alive == 0;
    }
    if (last && j + 1 < n_) stages_[j + 1].in->close();
}

void bind_to_stage_engine::trace_blocked(bool begin, std::uint64_t queue, trace::blocked_on why) noexcept {
    if (begin) {
        blocks_.fetch_add(1, std::memory_order_relaxed);
        if (why == trace::blocked_on::full) full_blocks_.fetch_add(1, std::memory_order_relaxed);
    }
    trace_event(begin ? trace::event_kind::blocked_begin : trace::event_kind::blocked_end, queue, 0,
                static_cast<std::uint32_t>(why));
}

// Stage 0, the input stage: one thread evaluates the condition and runs stage 0 of item after item.
void bind_to_stage_engine::input_thread() {
    while (loop_goes_on(condition_)) {
        auto* r = new item;   // an allocation failure ends the loop like any exception
        const std::uint64_t i = created_;
        // On virtual cores every node end is a yield point (notify_node_end), traced or not.
        if (!make_frame(*this, *r, gated_setup(this, &r->sync, i, observer_, traced_ || virtual_), body_)) {
            delete r;
            break;
        }
        std::uint64_t live;
        {
            std::lock_guard lock(retire_mutex_);
            try {
                window_.push_back(r);
            } catch (...) {
                r->frame.destroy();
                delete r;
                throw;
            }
            ++created_;
            live = window_.size();
            peak_live_ = std::max(peak_live_, live);
            if (traced_) {
                if (!free_lines_.empty()) {
                    std::pop_heap(free_lines_.begin(), free_lines_.end(), std::greater<>());
                    r->line = free_lines_.back();
                    free_lines_.pop_back();
                } else {
                    r->line = next_line_ < 0xFFFF ? next_line_++ : 0xFFFF;
                }
            }
        }
        r->line_since = trace_event_at(0, trace::event_kind::iteration_start, i, 0, clamp32(live), r->line);
        if (observer_) observer_->on_iteration_start(i, this_worker_index());
        if (observer_ || traced_) notify_node_begin(r->it, false);
        r->frame.resume();   // stage 0's node, up to the first boundary
        forward(r);
    }
}

// A stage j >= 1: serial_out_of_order (one thread) and parallel (c threads) take items in arrival
// order; serial_in_order keeps a reorder buffer.
void bind_to_stage_engine::stage_thread(std::uint64_t j) {
    if (stages_[j].kind == stage_kind::serial_in_order) return in_order_loop(j);
    stage_queue<item*>& q = *stages_[j].in;
    // One thread (serial_out_of_order) takes every item there is at once; a parallel stage's threads
    // take one each (stage_queue::pop).
    const std::size_t batch = stages_[j].kind == stage_kind::parallel ? 1 : q.capacity();
    std::vector<item*> got;
    std::vector<std::uint64_t> marks;   // never any: only serial_in_order stages get skip marks
    for (;;) {
        got.clear();
        const bool more = q.pop(
            got, batch, marks, [&](bool b) { trace_blocked(b, j, trace::blocked_on::empty); },
            [&](item* r, std::size_t fill) { trace_event(trace::event_kind::queue_take, r->it.index(), j, clamp32(fill)); });
        if (!more) return;
        for (item* r : got) {
            if (stopping.load(std::memory_order_acquire)) return;   // left in window_: run() cleans up
            run_node(r, j);
        }
    }
}

// A serial_in_order stage, as PARSEC dedup's output thread: items come out of the bounded queue in
// arrival order; one whose turn has not come waits in the reorder buffer; skip marks move the turn
// past iterations that jumped over the stage.
void bind_to_stage_engine::in_order_loop(std::uint64_t j) {
    stage& st = stages_[j];
    stage_queue<item*>& q = *st.in;
    std::uint64_t turn = 0;
    std::map<std::uint64_t, item*> reorder;
    std::vector<std::uint64_t> marks;
    std::vector<item*> got;
    std::deque<bool> skipped;   // skipped[i - turn]: iteration i jumped over the stage
    for (;;) {
        // Run every item whose turn it is.
        for (;;) {
            if (stopping.load(std::memory_order_acquire)) return;
            if (!skipped.empty() && skipped.front()) {
                skipped.pop_front();
                ++turn;
                continue;
            }
            auto it = reorder.find(turn);
            if (it == reorder.end()) break;
            item* r = it->second;
            reorder.erase(it);
            trace_event(trace::event_kind::reorder_buffer, j, reorder.size());
            if (!skipped.empty()) skipped.pop_front();
            ++turn;
            run_node(r, j);
        }
        got.clear();
        const bool more = q.pop(
            got, q.capacity(), marks, [&](bool b) { trace_blocked(b, j, trace::blocked_on::empty); },
            [&](item* r, std::size_t fill) { trace_event(trace::event_kind::queue_take, r->it.index(), j, clamp32(fill)); });
        if (!more || stopping.load(std::memory_order_acquire)) return;
        for (std::uint64_t i : marks) {
            if (skipped.size() <= i - turn) skipped.resize(i - turn + 1, false);
            skipped[i - turn] = true;
        }
        marks.clear();
        // A batch taken at once: each item runs now if its turn has come (the loop above then runs
        // whatever it unblocked from the reorder buffer), or waits there for its turn.
        for (item* r : got) {
            if (stopping.load(std::memory_order_acquire)) return;
            const std::uint64_t i = r->it.index();
            if (i == turn) {   // its turn: no waiting in the reorder buffer
                if (!skipped.empty()) skipped.pop_front();
                ++turn;
                run_node(r, j);
                continue;
            }
            reorder.emplace(i, r);
            st.reorder_peak = std::max(st.reorder_peak, reorder.size());
            trace_event(trace::event_kind::reorder_buffer, j, reorder.size());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Items

// The iteration an engine callback gets is the first member of its item.
bind_to_stage_engine::item* bind_to_stage_engine::item_of(iteration& it) noexcept {
    static_assert(std::is_standard_layout_v<item>, "item_of relies on `it` being the first member");
    return reinterpret_cast<item*>(&it);
}

void bind_to_stage_engine::run_node(item* r, std::uint64_t j) {
    r->it.mark_resumed();   // the node begin ends the resumption flow
    r->line_since =
        trace_event_at(0, trace::event_kind::iteration_resume, r->it.index(), r->line_since, clamp32(j), r->line);
    r->frame.resume();
    forward(r);
}

// The coroutine is suspended at a boundary (or finished): mark the serial_in_order stages it jumps
// over, then push it into the queue of its next stage (blocking while full), or retire it.
void bind_to_stage_engine::forward(item* r) {
    const std::uint64_t to = r->finished ? n_ : r->target;
    const std::uint64_t i = r->it.index();
    if (!stopping.load(std::memory_order_acquire))
        for (std::uint64_t s = r->at + 1; s < to; ++s)
            if (stages_[s].kind == stage_kind::serial_in_order) stages_[s].in->mark(i);
    r->at = to;
    if (to == n_) return complete(r);
    if (stopping.load(std::memory_order_acquire)) return;   // left in window_: run() cleans up
    // Once pushed, r belongs to stage `to`'s threads: do not touch it after push() returns.
    stages_[to].in->push(
        r, [&](bool b) { trace_blocked(b, to, trace::blocked_on::full); },
        [&](std::size_t fill) { trace_event(trace::event_kind::queue_put, i, to, clamp32(fill)); });
}

// Every boundary is gated: the item moves to it.current_stage() and always suspends (suspend()
// says so), so that the thread that ran the node can hand it on. The implicit final stage does not
// suspend: finish_iteration follows.
bool bind_to_stage_engine::admit(iteration& it) {
    const std::uint64_t stage = it.current_stage();
    if (stage >= final_stage) return true;
    if (stage >= n_) throw_undeclared_stage("bind-to-stage", it.index(), stage, n_);
    item_of(it)->target = stage;
    return false;
}

bool bind_to_stage_engine::suspend(iteration& handle, std::coroutine_handle<>) noexcept {
    engine_iteration& it = engine_side(handle);
    item* r = item_of(it);
    it.set_boundary_ticks(0);   // the next node begins when a thread of the next stage takes it
    const std::uint64_t now = trace_now();
    if (now)
        trace_event_at(now, trace::event_kind::iteration_suspend, it.index(), r->line_since, clamp32(r->target), r->line);
    r->line_since = now;
    return true;   // the thread that resumed it pushes it on (forward) once resume() returns
}

std::coroutine_handle<> bind_to_stage_engine::finish_iteration(iteration& handle) noexcept {
    engine_iteration& it = engine_side(handle);
    item* r = item_of(it);
    it.enter_final();   // the last node ends (observer, trace); admit() lets the final stage pass
    r->finished = true;
    return std::noop_coroutine();   // back to the stage thread's forward()
}

// The implicit final stage: retire in order every finished item from the oldest on. An item that
// finished early waits (on its line: "waiting to retire") for whoever retires its predecessor.
void bind_to_stage_engine::complete(item* r) {
    // Reused per thread: a retirement allocates nothing (one vector per item used to).
    static thread_local std::vector<item*> done;
    done.clear();
    {
        std::lock_guard lock(retire_mutex_);
        // Also while stopping: iterations that finished still retire in order, as under every
        // policy; one that never finishes (left in a queue) ends the chain, and the destructor
        // cleans up the rest of window_.
        r->retirable = true;
        const std::uint64_t base = retired.load(std::memory_order_relaxed);
        if (r->it.index() != base) {
            const std::uint64_t now = trace_now();
            if (now)
                trace_event_at(now, trace::event_kind::iteration_suspend, r->it.index(), r->line_since,
                               trace::final_stage_operand, r->line);
            r->line_since = now;
            return;
        }
        while (!window_.empty() && window_.front()->retirable) {
            item* x = window_.front();
            window_.pop_front();
            const std::uint64_t i = x->it.index();
            if (x != r)
                x->line_since = trace_event_at(0, trace::event_kind::iteration_resume, i, x->line_since,
                                               trace::final_stage_operand, x->line);
            if (observer_) observer_->on_iteration_retire(i, this_worker_index());
            trace_event(trace::event_kind::iteration_retire, i, x->line_since, clamp32(window_.size()), x->line);
            if (traced_) {
                free_lines_.push_back(x->line);
                std::push_heap(free_lines_.begin(), free_lines_.end(), std::greater<>());
            }
            retired.store(i + 1, std::memory_order_release);
            done.push_back(x);
        }
    }
    for (item* x : done) {
        x->frame.destroy();
        delete x;
    }
}

extern const policy_entry bind_to_stage_policy{
    .name = "bind-to-stage",
    .summary =
        "Pthreads bind-to-stage: one OS thread per serial stage, c per parallel stage, bounded queues of Queue_size between stages (oversubscription allowed)",
    .run = run_engine<bind_to_stage_engine>,
    .needs_declared_stages = true,
    .order = 50,
};

}   // namespace pipescope::detail
