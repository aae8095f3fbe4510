// The graph engine shared by every graph scheduler (engine.hpp).
#include "engine.hpp"

#include "../trace_hooks.hpp"

#include <pipescope/detail/job.hpp>
#include <pipescope/trace/recorder.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace pipescope::graph {

using detail::graph_engine;
using detail::node_mark;
using detail::stage_state;
using detail::step_result;
using detail::step_status;

namespace {

// Rounds of spinning before a worker with nothing to run sleeps: a few microseconds.
constexpr int wait_spin_rounds = 512;

// A parallel step commits its outputs and then its input, and every commit signals. The epoch only
// has to move after the changes a waiter might have missed (wait() needs a move, not one per
// change), so during those commits the calling thread's signals are collected and the epoch moves
// once at the end: one write instead of two or more per instance to a line every worker writes.
thread_local const void* bump_deferred_by = nullptr;   // the engine whose step defers
thread_local bool bump_owed = false;
using trace::event_kind;

const char* wait_words(thread_event e) noexcept {
    switch (e) {
        case thread_event::empty: return "data in";
        case thread_event::full: return "room in";
        case thread_event::waiting: return "an earlier ticket's commit in";
        default: return "";
    }
}

trace::graph_wait as_trace_wait(thread_event e) noexcept {
    switch (e) {
        case thread_event::full: return trace::graph_wait::full;
        case thread_event::waiting: return trace::graph_wait::order;
        default: return trace::graph_wait::empty;
    }
}

}   // namespace

const char* detail::step_status_name(step_status s) noexcept {
    static constexpr const char* names[] = {"ran", "preempted", "empty", "waiting", "full", "busy", "finished", "failed"};
    return names[static_cast<int>(s)];
}

// ---------------------------------------------------------------------------------------------------
// Set-up

graph_engine::graph_engine(scheduler& s, const program& g, engine_config config) : sched_(s), graph_(g), config_(config) {
    g.validate();
    virtual_ = s.impl().virtual_time();
#if PIPESCOPE_TRACING
    traced_ = s.impl().tracing();
    if (traced_) {
        recorder_ = s.impl().recorder();
        run_slots_ = s.workers();
        runs_ = std::make_unique<fold_run[]>(run_slots_);
    }
#endif
    trace::trace_detail level = trace::trace_detail::nodes;
    if (recorder_) {
        level = recorder_->detail();
        fold_below_ns_ = recorder_->fold_below_ns();
    }
    routine_queue_ops_ = level == trace::trace_detail::nodes;
    const node_mode first_mode = !traced_                                  ? untraced
                                 : level == trace::trace_detail::folded    ? folding
                                 : level == trace::trace_detail::automatic ? measuring
                                                                           : node_level;
    for (queue_id q = 0; q < g.queues().size(); ++q) {
        const queue_spec& spec = g.queues()[q];
        queue_config c;
        c.name = spec.name;
        c.element_size = spec.element_size;
        c.packet_elements = spec.shape.packet_elements;
        c.capacity_packets = spec.shape.capacity_packets;
        c.ordered = spec.shape.ordered;
        c.producers = g.producers(q).size();
        c.unbounded = config.bounds == detail::queue_bounds::unbounded ||
                      (config.bounds == detail::queue_bounds::backward_unbounded && g.backward(q));
        c.footprint = &footprint_;
        c.allocator = config.packets;
        c.on_signal = [this, q](const packet_queue&, queue_signal sig) {
            if (on_queue_signal) on_queue_signal(q, sig);
            signalled();
        };
        queues_.push_back(std::make_unique<packet_queue>(std::move(c)));
    }
    const auto depth = g.depths();
    for (stage_id i = 0; i < g.stages().size(); ++i) {
        auto st = std::make_unique<stage_state>();
        st->id = i;
        st->spec = &g.stages()[i];
        st->depth = depth[i];
        st->output_closed = std::make_unique<std::atomic<bool>[]>(st->spec->outputs.size());
        st->output_closing = std::make_unique<std::atomic<bool>[]>(st->spec->outputs.size());
        if (st->spec->outputs.size() > stage_state::inline_outputs)
            st->reservations_beyond =
                std::make_unique<std::atomic<int>[]>(st->spec->outputs.size() - stage_state::inline_outputs);
        st->counts_reservations.assign(st->spec->outputs.size(), false);
        for (std::size_t k = 0; k < st->spec->outputs.size(); ++k)
            st->counts_reservations[k] = g.producers(st->spec->outputs[k].queue).size() > 1;
        // GRAMPS exempts from backpressure "queues that feed a lower-priority stage from a
        // higher-priority stage" (seed 004 §III-A). A queue fed both from upstream and from a cycle
        // (the ray tracer's rays, from camera and from shade) grows for the cycle's producer only:
        // its upstream producer still sees the capacity, or it would flood the queue whenever the
        // stages downstream are backpressured (a cycle is bounded "due to stage priorities" only if
        // what enters it from upstream is).
        st->forward_bound.assign(st->spec->outputs.size(), 0);
        for (std::size_t k = 0; k < st->spec->outputs.size(); ++k) {
            const queue_id q = st->spec->outputs[k].queue;
            if (config.bounds == detail::queue_bounds::backward_unbounded && queues_[q]->unbounded() &&
                depth[i] < depth[g.consumer(q)])
                st->forward_bound[k] = queues_[q]->capacity_packets();
        }
        st->ctx.engine_ = this;
        st->ctx.state_ = st.get();
        st->ctx.stage_ = i;
        st->ctx.open_.resize(st->spec->outputs.size());
        st->ctx.open_count_.assign(st->spec->outputs.size(), 0);
        st->trace_mode.store(first_mode, std::memory_order_relaxed);
        stages_.push_back(std::move(st));
    }
}

graph_engine::~graph_engine() = default;

unsigned graph_engine::workers() const noexcept { return const_cast<scheduler&>(sched_).workers(); }

// ---------------------------------------------------------------------------------------------------
// Tracing

// Under trace_detail::automatic a stage's first nodes are recorded one by one and measured; the
// node end that completes the measurement decides for the stage, once: enough nodes to see past a
// cold start, few enough that a stage of short nodes is folded almost from its beginning.
namespace {
constexpr std::uint64_t nodes_to_measure = 256;
}

void graph_engine::trace_event(trace::event_kind k, std::uint64_t a, std::uint64_t b, std::uint32_t c,
                               std::uint16_t d) const noexcept {
    if (!traced_) return;
    if (fold_run* run = my_run(); run && run->open) close_run(*run);
    pipescope::detail::trace_event(k, a, b, c, d);
}

void graph_engine::record_queue_op(event_kind k, queue_id q, std::uint64_t amount, bool pop, bool ok,
                                   stage_id s) const noexcept {
    // A granted reserve and a commit (published now or held behind an earlier ticket) are routine:
    // recorded only at detail `nodes` (about two per node; the fills record their effect). A refused
    // reserve is of interest at every level (it closes a folded run).
    if ((ok || k == event_kind::graph_commit) &&
        (!routine_queue_ops_ || stages_[s]->trace_mode.load(std::memory_order_relaxed) == folding))
        return;
    trace_event(k, q, amount, (pop ? trace::graph_op_pop : 0) | (ok ? trace::graph_op_ok : 0),
                static_cast<std::uint16_t>(std::min<stage_id>(s, 0xFFFF)));
}

// Every change of a fill is recorded by the worker that made it, with the value it left (read under
// the queue's lock, so no later change by another worker is recorded in its place); an operation
// that changed nothing records nothing. The footprint is not recorded: it is the sum of the fills,
// which the trace model derives (docs/tracing.md, "Counters"), and recording it would triple the
// counter values of the fine-grained graphs tracing is hardest on.
void graph_engine::record_fill(queue_id q, const queue_change& c) const noexcept {
    pipescope::detail::trace_event(event_kind::counter, q, c.in_use);
}

void graph_engine::trace_blocked(stage_id s, queue_id q, thread_event why) const noexcept {
    if (traced_) trace_event(event_kind::graph_blocked, s, q, static_cast<std::uint32_t>(as_trace_wait(why)));
}

graph_engine::fold_run* graph_engine::my_run() const noexcept {
    const int w = this_worker_index();
    return w >= 0 && static_cast<unsigned>(w) < run_slots_ ? &runs_[static_cast<unsigned>(w)] : nullptr;
}

// Records the end of the nodes the run holds (at the last one's end). If a node of the run is
// running now, it stays open as a run of its own that its end closes (sealed): the event of
// interest that closes the run happens inside it.
void graph_engine::close_run(fold_run& run) const noexcept {
    if (!run.open) return;
    if (run.nodes > 0) {
        if (run.nodes == 1) pipescope::detail::trace_event_at(run.last_end, event_kind::node_end, run.last, run.stage);
        else pipescope::detail::trace_event_at(run.last_end, event_kind::node_fold_end, run.last, run.stage, run.nodes);
    }
    if (!run.in_node) {
        run.open = false;
        return;
    }
    if (run.nodes > 0) {   // the running node's begin was not recorded (it continued the run)
        pipescope::detail::trace_event_at(std::max(run.current_start, run.last_end), event_kind::node_begin, run.current,
                                          run.stage);
        run.nodes = 0;
    }
    run.sealed = true;
}

void graph_engine::close_fold_run() const noexcept {
    if (!traced_) return;
    if (fold_run* run = my_run(); run && run->open) close_run(*run);
}

node_mark graph_engine::record_node_begin(stage_state& st, std::uint64_t node) const noexcept {
    const auto mode = static_cast<node_mode>(st.trace_mode.load(std::memory_order_relaxed));
    fold_run* run = my_run();
    if (mode == folding && run) {
        if (run->open && run->stage == st.id && !run->sealed && !run->in_node) {   // the run goes on
            run->in_node = true;
            run->current = node;
            // A serial resumption may record an event of interest inside itself (a refused reserve):
            // then its begin is recorded after all, at this clock read. Parallel instances record none.
            run->current_start = st.spec->kind == stage_kind::serial ? trace::now_ticks() : 0;
            return {0, folding};
        }
        if (run->open) close_run(*run);
        const std::uint64_t t = pipescope::detail::trace_event_at(0, event_kind::node_begin, node, st.id);
        if (t == 0) return {};
        *run = fold_run{};
        run->open = run->in_node = true;
        run->stage = st.id;
        run->current = node;
        run->current_start = t;
        return {t, folding};
    }
    if (run && run->open) close_run(*run);
    return {pipescope::detail::trace_event_at(0, event_kind::node_begin, node, st.id),
            static_cast<std::uint8_t>(mode == folding ? node_level : mode)};
}

void graph_engine::record_node_end(stage_state& st, std::uint64_t node, node_mark m) const noexcept {
    if (m.mode == folding) {
        fold_run& run = *my_run();   // a folding mark is only handed out with a run
        if (run.sealed) {
            pipescope::detail::trace_event(event_kind::node_end, node, st.id);
            run.open = run.in_node = run.sealed = false;
            return;
        }
        run.in_node = false;
        run.last = node;
        run.last_end = trace::now_ticks();
        ++run.nodes;
        return;
    }
    const std::uint64_t t = pipescope::detail::trace_event_at(0, event_kind::node_end, node, st.id);
    if (m.mode == measuring && m.start && t > m.start) measure(st, t - m.start);
}

void graph_engine::measure(stage_state& st, std::uint64_t ticks) const noexcept {
    const std::uint64_t total = st.measured_ticks.fetch_add(ticks, std::memory_order_relaxed) + ticks;
    const std::uint64_t n = st.measured_nodes.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n != nodes_to_measure || !recorder_) return;   // exactly one node end decides
    const double mean_ns = static_cast<double>(total) * recorder_->ns_per_tick_estimate() / static_cast<double>(n);
    const bool fold = mean_ns < static_cast<double>(fold_below_ns_);
    trace_event(event_kind::detail_decision, st.id, static_cast<std::uint64_t>(mean_ns), fold ? 1 : 0,
                static_cast<std::uint16_t>(std::min<std::uint64_t>(n, 0xFFFF)));
    st.trace_mode.store(fold ? folding : node_level, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------------------------
// Readiness

bool graph_engine::has_input(stage_id s) const noexcept {
    const stage_state& st = *stages_[s];
    if (st.finished.load(std::memory_order_acquire)) return false;
    if (st.spec->kind == stage_kind::parallel) return queues_[st.spec->inputs[0]]->ready_packets_hint() > 0;
    const auto on = static_cast<thread_event>(st.blocked_on.load(std::memory_order_acquire));
    const packet_queue& q = *queues_[st.blocked_queue.load(std::memory_order_acquire)];
    switch (on) {
        case thread_event::none:
        case thread_event::preempted: return true;
        case thread_event::empty:
        case thread_event::waiting: return q.data_version() != st.blocked_version.load(std::memory_order_acquire);
        case thread_event::full: return false;
    }
    return true;
}

bool graph_engine::runnable(stage_id s) const noexcept {
    const stage_state& st = *stages_[s];
    if (st.finished.load(std::memory_order_acquire)) return false;
    if (st.spec->kind == stage_kind::parallel) {
        if (queues_[st.spec->inputs[0]]->ready_packets_hint() == 0) return false;
        for (std::size_t k = 0; k < st.spec->outputs.size(); ++k) {
            const output_spec& o = st.spec->outputs[k];
            if (!st.output_closing[k].load(std::memory_order_acquire) &&
                (queues_[o.queue]->free_packets_hint() < o.max_packets || over_forward_bound(st, k, o.max_packets)))
                return false;
        }
        return true;
    }
    if (st.claimed.load(std::memory_order_acquire)) return false;
    const auto on = static_cast<thread_event>(st.blocked_on.load(std::memory_order_acquire));
    if (on != thread_event::full) return has_input(s);
    const packet_queue& q = *queues_[st.blocked_queue.load(std::memory_order_acquire)];
    return q.space_version() != st.blocked_version.load(std::memory_order_acquire);
}

// ---------------------------------------------------------------------------------------------------
// Steps

step_result graph_engine::step(stage_id s) {
    stage_state& st = *stages_[s];
    step_result r{step_status::failed};
    if (stopping()) r = {step_status::failed};
    else if (st.finished.load(std::memory_order_acquire)) r = {step_status::finished};
    else r = st.spec->kind == stage_kind::parallel ? step_parallel(st) : step_serial(st);
    // On virtual workers a step that ran nothing still costs a try and lets the others run first: a
    // policy retrying a stage that another worker holds would otherwise spin with the token while
    // the holder waits for it (docs/virtual.md, "Stage graphs").
    if (virtual_ && !r.progressed) pipescope::detail::virtual_yield_point(sched_.impl().options().costs.failed_steal_ns);
    return r;
}

namespace {
// A step's per-output scratch: on the stack for the usual few outputs, so that a step allocates
// nothing; a stage with more outputs than that pays one allocation per step. Only the n elements in
// use are constructed: value-initialising all of the inline ones (four push windows are ~350 bytes)
// was a `rep stos` on every step, ~2 % of a one-element instance in the issue 17 profile.
template <class T, std::size_t Inline = 4>
class step_scratch {
public:
    explicit step_scratch(std::size_t n) : n_(n) {
        if (n <= Inline) {
            data_ = reinterpret_cast<T*>(inline_);
            for (std::size_t i = 0; i < n; ++i) new (data_ + i) T();
        } else {
            heap_ = std::make_unique<T[]>(n);
            data_ = heap_.get();
        }
    }
    ~step_scratch() {
        if (!heap_) std::destroy_n(data_, n_);
    }
    step_scratch(const step_scratch&) = delete;
    step_scratch& operator=(const step_scratch&) = delete;
    T* data() noexcept { return data_; }
    T& operator[](std::size_t i) noexcept { return data_[i]; }

private:
    alignas(T) std::byte inline_[Inline * sizeof(T)];
    std::unique_ptr<T[]> heap_;
    std::size_t n_;
    T* data_;
};
}   // namespace

bool graph_engine::step_ready(const std::vector<stage_id>& order, bool first_only) {
    for (const bool hinted : {true, false}) {
        bool progressed = false;
        for (stage_id s : order) {
            if (finished(s) || (hinted && !runnable(s)) || !step(s).progressed) continue;
            progressed = true;
            if (first_only) return true;
        }
        if (progressed) return true;
    }
    return false;
}

// Gives back output reservations of a step that cannot run (cancel_push keeps ticket order, and
// announces the space only to producers that were refused meanwhile).
void graph_engine::release_outputs(const stage_state& st, push_window* outs, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k)
        if (outs[k]) queues_[st.spec->outputs[k].queue]->cancel_push(outs[k]);
}

// What a parallel step holds from its reservations to its commits. The scratch is on the stack of
// the step (step_scratch); the helpers below are inlined into step_parallel, so the step is one
// function to the compiler as it was before it was split for reading.
struct graph_engine::instance_step {
    instance_step(const stage_state& st, packet_queue& input, bool traced)
        : spec(*st.spec),
          in_id(spec.inputs[0]),
          in_q(input),
          n_out(spec.outputs.size()),
          outs(n_out),
          reserved(traced ? n_out : 0),
          split(st.placed.size() > 1) {}
    const stage_spec& spec;
    const queue_id in_id;
    packet_queue& in_q;
    const std::size_t n_out;
    step_scratch<push_window> outs;
    // Traced: what each output reservation did to its queue's fill (its counters are recorded once
    // the step holds all of them; a tentative reservation given back changes nothing in the end).
    step_scratch<queue_change> reserved;
    pop_window in;
    std::uint64_t instance = 0;
    const bool split;
    std::uint64_t queue_ops = 1;   // each a reserve and its commit: the input and every output reserved
};

// Reserves the instance's input and room in its outputs, under the stage's lock (never call
// try_finish_parallel inside: finishing takes the same lock). A result when the step cannot run.
[[gnu::always_inline]] inline std::optional<step_result> graph_engine::reserve_instance(stage_state& st, instance_step& p) {
    std::lock_guard lock(st.reserve_mutex);
    if (st.finishing.load(std::memory_order_acquire)) return step_result{step_status::finished};
    if (p.split && st.placed[st.next_instance % st.placed.size()] != static_cast<unsigned>(this_worker_index()))
        return step_result{step_status::busy};   // another replica's turn (place())
    // The input first: a stage without input touches nothing (no signal, no wake-up). Then room
    // in the outputs; if one is full, both are given back quietly (cancel_*: a signal only if
    // someone was refused meanwhile), so probing a blocked stage does not wake every worker.
    p.in = p.in_q.try_reserve_pop(1, p.spec.peek);
    if (!p.in) {
        if (p.in.status() == reserve_status::end_of_stream) {
            st.input_ended.store(true, std::memory_order_release);
            return step_result{step_status::finished, p.in_id};
        }
        return step_result{p.in_q.waiting_commits_hint() > 0 ? step_status::waiting : step_status::empty, p.in_id};
    }
    for (std::size_t k = 0; k < p.n_out; ++k) {
        const output_spec& o = p.spec.outputs[k];
        if (st.output_closing[k].load(std::memory_order_seq_cst)) continue;   // closed: no room taken
        if (!over_forward_bound(st, k, o.max_packets))
            p.outs[k] = queues_[o.queue]->try_reserve_push(o.max_packets, traced_ ? &p.reserved[k] : nullptr);
        if (!p.outs[k]) {   // backpressure: this stage is not runnable until the queue drains
            release_outputs(st, p.outs.data(), k);
            p.in_q.cancel_pop(p.in);
            trace_blocked(st.id, o.queue, thread_event::full);
            return step_result{step_status::full, o.queue};
        }
    }
    p.instance = st.next_instance++;
    for (std::size_t k = 0; k < p.n_out; ++k)
        if (p.outs[k]) {
            if (st.counts_reservations[k]) st.output_reservations(k).fetch_add(1, std::memory_order_seq_cst);
            ++p.queue_ops;
        }
    return std::nullopt;
}

// Traced: the step's granted reserves, and what they did to the queues' fill.
[[gnu::always_inline]] inline void graph_engine::trace_reserved(const stage_state& st, instance_step& p) const {
    trace_queue_op(event_kind::graph_reserve, p.in_id, 1, true, true, st.id);
    for (std::size_t k = 0; k < p.n_out; ++k)
        if (p.outs[k])
            trace_queue_op(event_kind::graph_reserve, p.spec.outputs[k].queue, p.spec.outputs[k].max_packets, false, true,
                           st.id);
    for (std::size_t k = 0; k < p.n_out; ++k)
        if (p.outs[k]) queue_changed(p.spec.outputs[k].queue, p.reserved[k]);
}

// Runs the stage's body on the reserved packet; the instance fills `counts` (elements pushed per
// output) and `close` (outputs it closed). False when the body threw (the run fails).
[[gnu::always_inline]] inline bool graph_engine::run_instance(stage_state& st, instance_step& p, std::size_t* counts,
                                                              bool* close) {
    step_scratch<instance_context::cursor> cursors(p.n_out);
    // Every field is set with no call in between, so the compiler drops the zeroing that the
    // fields' initialisers imply (a `rep stos` over the context otherwise).
    const std::span<const std::byte> packet = p.in.packet_bytes(0);
    const int worker = this_worker_index();
    instance_context ctx;
    ctx.input_ = &p.in;
    ctx.in_data_ = packet.data();
    ctx.in_count_ = p.in.size();
    ctx.in_element_ = p.in_q.element_size();
    ctx.outputs_ = p.outs.data();
    ctx.outputs_count_ = p.n_out;
    ctx.cursors_ = cursors.data();
    ctx.counts_ = counts;
    ctx.close_ = close;
    ctx.state_ = &st;
    ctx.stage_ = st.id;
    ctx.instance_ = p.instance;
    ctx.worker_ = worker;

    const node_mark mark = node_begin(st, p.instance);
    try {
        p.spec.parallel(ctx);
        // On virtual time the instance ends here, before its commits publish it.
        pipescope::detail::virtual_graph_node_end(st.id, p.instance, p.queue_ops);
    } catch (...) {
        pipescope::detail::virtual_graph_node_end(st.id, p.instance, p.queue_ops);
        if (traced_) {
            node_end(st, p.instance, mark);
            trace_event(event_kind::stage_exception, p.instance, st.id);
        }
        fail(std::current_exception());
        return false;
    }
    node_end(st, p.instance, mark);
    return true;
}

// Publishes what the instance pushed and consumes its input packet; closes the outputs it closed
// once no other instance holds room in them.
[[gnu::always_inline]] inline void graph_engine::commit_instance(stage_state& st, instance_step& p,
                                                                 const std::size_t* counts, const bool* close,
                                                                 step_result& r) {
    const deferred_bumps one_bump(*this);   // (closes before the caller's leave(): finishing bumps on its own)
    for (std::size_t k = 0; k < p.n_out; ++k) {
        if (!p.outs[k]) continue;   // an output this stage closed before the instance reserved
        const queue_id out_id = p.spec.outputs[k].queue;
        packet_queue& q = *queues_[out_id];
        queue_change change;
        const bool published = q.commit_push(p.outs[k], counts[k], traced_ ? &change : nullptr);
        r.packets_out += static_cast<std::uint32_t>(packets_for(counts[k], q.packet_elements()));
        if (traced_) {
            trace_queue_op(event_kind::graph_commit, out_id, counts[k], false, published, st.id);
            queue_changed(out_id, change);
        }
        // The last reservation on an output another instance closed: close the queue now.
        if (st.counts_reservations[k]) {
            if (st.output_reservations(k).fetch_sub(1, std::memory_order_seq_cst) == 1 &&
                st.output_closing[k].load(std::memory_order_seq_cst))
                close_output(st, k);
        } else if (st.output_closing[k].load(std::memory_order_seq_cst) && unreserved(st, k)) {
            close_output(st, k);
        }
    }
    const std::size_t consumed = p.in.size();
    queue_change change;
    p.in_q.commit_pop(p.in, traced_ ? &change : nullptr);
    if (traced_) {
        trace_queue_op(event_kind::graph_commit, p.in_id, consumed, true, true, st.id);
        queue_changed(p.in_id, change);
    }
    for (std::size_t k = 0; k < p.n_out; ++k)
        if (close[k]) close_output_when_unreserved(st, k);
    if (p.in_q.end_of_stream()) st.input_ended.store(true, std::memory_order_release);
}

step_result graph_engine::step_parallel(stage_state& st) {
    instance_step p(st, *queues_[st.spec->inputs[0]], traced_);
    // An instance is in flight from its input reservation to that reservation's commit, its last:
    // the input queue's open pop reservations count the instances, so finishing asks the queue
    // (try_finish_parallel) and an instance writes no counter of its own (issue 17).
    auto leave = [&] {
        if (st.input_ended.load(std::memory_order_acquire)) try_finish_parallel(st);
    };
    if (std::optional<step_result> r = reserve_instance(st, p)) {
        leave();
        if (r->status == step_status::finished && !st.finished.load(std::memory_order_acquire))
            r->status = step_status::empty;   // instances still run; the last one finishes the stage
        return *r;
    }
    // The turn moved on: the replica whose turn it is now may be waiting for the epoch, and nothing
    // else need move it (a commit signals only those its queue refused).
    if (p.split) bump();
    if (traced_) trace_reserved(st, p);

    step_scratch<std::size_t> counts(p.n_out);
    step_scratch<bool> close(p.n_out);
    if (!run_instance(st, p, counts.data(), close.data())) {
        leave();
        return {step_status::failed};
    }
    step_result r{step_status::ran};
    r.progressed = true;
    commit_instance(st, p, counts.data(), close.data(), r);
    leave();   // (the instance is counted by next_instance: no shared counter written per step)
    return r;
}

namespace {
// Where a suspended serial stage waits, as a step's status.
step_status blocked_status(thread_event why) noexcept {
    return why == thread_event::full      ? step_status::full
           : why == thread_event::waiting ? step_status::waiting
                                          : step_status::empty;
}
}   // namespace

// A serial step that ends with the stage's claim dropped, nothing else to tell.
[[gnu::always_inline]] inline step_result graph_engine::unclaim(stage_state& st, step_result r) noexcept {
    st.claimed.store(false, std::memory_order_release);
    return r;
}

// Drops the claim of a stage that may be stepped again. Whatever moved while the claim was held
// could not make the stage runnable for others: tell them now.
[[gnu::always_inline]] inline void graph_engine::release_claim(stage_state& st) noexcept {
    st.claimed.store(false, std::memory_order_release);
    if (runnable(st.id)) bump();
}

// Where a serial stage waits, for runnable() to watch.
[[gnu::always_inline]] inline void graph_engine::note_blocked(stage_state& st, const thread_context& ctx) noexcept {
    st.blocked_on.store(static_cast<std::uint8_t>(ctx.event_), std::memory_order_release);
    st.blocked_queue.store(ctx.event_queue_, std::memory_order_release);
    st.blocked_version.store(ctx.event_version_, std::memory_order_release);
}

// A stage suspended in a reserve gets it retried first; it is resumed only once it succeeds. A
// result when the retry failed again (the stage stays blocked, its claim released).
[[gnu::always_inline]] inline std::optional<step_result> graph_engine::retry_reserve(stage_state& st) {
    if (!st.retry) return std::nullopt;
    thread_context& ctx = st.ctx;
    if (!st.retry(st.retry_awaiter, ctx)) {
        // Read ctx before release_claim(): once the claim is dropped another worker may step the
        // stage and overwrite it.
        const step_result blocked{blocked_status(ctx.event_), ctx.event_queue_};
        note_blocked(st, ctx);
        release_claim(st);
        return blocked;
    }
    st.retry = nullptr;
    st.retry_awaiter = nullptr;
    return std::nullopt;
}

// Resumes the claimed stage's coroutine once. A result when the step ends with it: the stage
// finished, or its body threw (the claim dropped either way).
[[gnu::always_inline]] inline std::optional<step_result> graph_engine::resume_serial(stage_state& st, step_result& r) {
    thread_context& ctx = st.ctx;
    ctx.event_ = thread_event::none;
    const std::uint64_t run = st.runs.fetch_add(1, std::memory_order_relaxed);
    const node_mark mark = node_begin(st, run);
    st.task->handle().resume();
    pipescope::detail::virtual_graph_node_end(st.id, run);   // on virtual time the resumption ends here
    node_end(st, run, mark);
    r.progressed = true;
    r.packets_out = static_cast<std::uint32_t>(ctx.outputs_since_resume_);
    if (!st.task->handle().done()) return std::nullopt;
    if (std::exception_ptr e = st.task->handle().promise().error) {
        if (traced_) trace_event(event_kind::stage_exception, run, st.id);
        fail(e);
        return unclaim(st, {step_status::failed});
    }
    finish_stage(st);
    r.status = step_status::finished;
    return unclaim(st, r);
}

// The resumed stage suspended: its partial packets flushed, where it waits recorded, the claim
// released; `r` says why it stopped.
[[gnu::always_inline]] inline step_result graph_engine::suspend_serial(stage_state& st, step_result r) {
    thread_context& ctx = st.ctx;
    // A suspended stage holds no packet it filled with push(): held back, a partial packet could be
    // exactly what the stages downstream wait for — and on an ordered queue it would hold back every
    // later ticket too — while this stage waits for them (through its other queues) in turn.
    try {
        for (std::size_t k = 0; k < st.spec->outputs.size(); ++k) ctx.flush(k);
    } catch (...) {
        fail(std::current_exception());
        return unclaim(st, {step_status::failed});
    }
    note_blocked(st, ctx);
    switch (ctx.event_) {
        case thread_event::preempted:
            st.preemptions.fetch_add(1, std::memory_order_relaxed);
            if (traced_) trace_event(event_kind::graph_preempted, st.id, ctx.outputs_since_resume_);
            r.status = step_status::preempted;
            break;
        case thread_event::empty:
        case thread_event::full:
        case thread_event::waiting:
            st.blocks.fetch_add(1, std::memory_order_relaxed);
            trace_blocked(st.id, ctx.event_queue_, ctx.event_);
            r.queue = ctx.event_queue_;
            r.status = blocked_status(ctx.event_);
            break;
        case thread_event::none:   // a coroutine suspended outside the context's awaiters
            fail(std::make_exception_ptr(std::logic_error(
                "graph stage '" + st.spec->name +
                "' suspended on something other than its thread_context (co_await only ctx.pop/reserve/push)")));
            return unclaim(st, {step_status::failed});
    }
    release_claim(st);
    return r;
}

step_result graph_engine::step_serial(stage_state& st) {
    if (st.claimed.exchange(true, std::memory_order_acq_rel)) return {step_status::busy};
    if (st.finished.load(std::memory_order_acquire)) return unclaim(st, {step_status::finished});
    thread_context& ctx = st.ctx;
    ctx.worker_ = this_worker_index();
    ctx.preempt_after_ = config_.preempt_after;
    ctx.outputs_since_resume_ = 0;
    ctx.event_ = thread_event::none;

    step_result r{step_status::ran};
    try {
        if (!st.task) st.task.emplace(st.spec->serial(ctx));
        if (std::optional<step_result> blocked = retry_reserve(st)) return *blocked;
        if (std::optional<step_result> ended = resume_serial(st, r)) return *ended;
    } catch (...) {   // the body's first call, or a flush / close, threw
        fail(std::current_exception());
        return unclaim(st, {step_status::failed});
    }
    return suspend_serial(st, r);
}

// ---------------------------------------------------------------------------------------------------
// Termination

void graph_engine::close_output(stage_state& st, std::size_t k) {
    if (st.output_closed[k].exchange(true, std::memory_order_acq_rel)) return;
    const queue_id q = st.spec->outputs[k].queue;
    queues_[q]->close();   // (the fill stays: no counter)
    // A parallel consumer whose input has just ended finishes once its instances are done; nobody
    // would step it to find out (seed 002 §III-A5: termination propagates along the queues).
    stage_state& c = *stages_[graph_.consumer(q)];
    if (c.spec->kind == stage_kind::parallel && queues_[q]->end_of_stream()) {
        c.input_ended.store(true, std::memory_order_release);
        try_finish_parallel(c);
    }
}

// A parallel stage's instance closed output k. Other instances may still hold reservations on it
// (reserved before this one closed): the queue closes when the last of them commits (step_parallel),
// or now if there are none. Whoever sees both "closing" and "no reservation" closes; close_output
// runs once. The flag is set under reserve_mutex, so no reservation on k starts after it.
void graph_engine::close_output_when_unreserved(stage_state& st, std::size_t k) {
    {
        std::lock_guard lock(st.reserve_mutex);
        st.output_closing[k].store(true, std::memory_order_seq_cst);
    }
    if (unreserved(st, k)) close_output(st, k);
}

// No instance of the stage holds a reservation on output k. Without a count of its own the stage
// asks the queue, under the queue's lock: a committer lowers the queue's count under that lock and
// then reads output_closing, a closer sets output_closing and then takes that lock, so one of the
// two sees the other's change (close_output runs once either way).
bool graph_engine::unreserved(stage_state& st, std::size_t k) {
    if (st.counts_reservations[k]) return st.output_reservations(k).load(std::memory_order_seq_cst) == 0;
    return queues_[st.spec->outputs[k].queue]->push_reservations() == 0;
}

bool graph_engine::over_forward_bound(const stage_state& st, std::size_t k, std::size_t packets) const noexcept {
    const std::size_t bound = st.forward_bound[k];
    return bound != 0 && queues_[st.spec->outputs[k].queue]->packets_in_use_hint() + packets > bound;
}

void graph_engine::finish_stage(stage_state& st) {
    if (st.spec->kind == stage_kind::serial)
        for (std::size_t k = 0; k < st.spec->outputs.size(); ++k) st.ctx.flush(k);
    for (std::size_t k = 0; k < st.spec->outputs.size(); ++k) close_output(st, k);
    st.finished.store(true, std::memory_order_release);
    finished_stages_.fetch_add(1, std::memory_order_acq_rel);
    if (traced_) trace_event(event_kind::graph_stage_done, st.id);
    bump();
}

void graph_engine::try_finish_parallel(stage_state& st) {
    const packet_queue& in = *queues_[st.spec->inputs[0]];
    if (!st.input_ended.load(std::memory_order_acquire) || !in.end_of_stream()) return;
    {
        std::lock_guard lock(st.reserve_mutex);   // steppers reserve under it, and look at `finishing` first
        if (st.finishing.load(std::memory_order_acquire)) return;
        // input_ended is a hint set outside this lock, where a stepper's tentative reservation may
        // have emptied the input for a moment (cancel_pop puts the packet back). Only here, with no
        // stepper inside, is "closed, drained and no instance holding its input" the truth; the
        // instance that commits the last input reservation calls here again after its commit.
        if (!in.drained()) return;
        st.finishing.store(true, std::memory_order_release);
    }
    finish_stage(st);   // outside the lock: closing may finish other stages, even this one's consumers
}

// ---------------------------------------------------------------------------------------------------
// Waiting, workers, errors

void graph_engine::signalled() noexcept {
    if (bump_deferred_by == this) {
        bump_owed = true;
        return;
    }
    bump();
}

graph_engine::deferred_bumps::deferred_bumps(graph_engine& e) noexcept : engine_(e) {
    bump_deferred_by = &e;
    bump_owed = false;
}

graph_engine::deferred_bumps::~deferred_bumps() {
    bump_deferred_by = nullptr;
    if (bump_owed) engine_.bump();
}

void graph_engine::bump() noexcept {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
        if (virtual_) return wake_virtual_sleepers();
        std::lock_guard lock(wait_mutex_);
        wait_cv_.notify_all();
    }
}

void graph_engine::wait(std::uint64_t seen) {
    if (virtual_) return wait_virtual(seen);
    // Spin a little first: on a busy graph the epoch moves again within microseconds (another
    // worker commits a packet), and a sleep and wake-up would cost more than the wait itself.
    for (int i = 0; i < wait_spin_rounds; ++i) {
        if (epoch() != seen || stopping() || all_finished()) return;
        pipescope::detail::cpu_relax();
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    struct leave_sleep {
        std::atomic<int>& n;
        ~leave_sleep() { n.fetch_sub(1, std::memory_order_seq_cst); }
    } guard{sleepers_};
    std::unique_lock lock(wait_mutex_);
    if (!should_sleep(lock, seen)) return;
    trace_event(event_kind::idle_begin);   // (closes the worker's folded run)
    // The timeout is a safety net for policies whose own state changes without a queue signal.
    wait_cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return epoch() != seen || stopping(); });
    if (waiting_epoch_ == seen && waiting_ > 0) --waiting_;
    lock.unlock();
    trace_event(event_kind::idle_end);
}

bool graph_engine::should_sleep(std::unique_lock<std::mutex>& lock, std::uint64_t seen) {
    // Finished: nothing to wait for. (The last stage's bump may have come before `seen` was read, so
    // the epoch alone would not say so — and the loops still running would look deadlocked.)
    if (epoch() != seen || stopping() || all_finished()) return false;
    // Every running loop waiting on the current epoch: nothing can move it any more.
    if (waiting_epoch_ != seen) {
        waiting_epoch_ = seen;
        waiting_ = 0;
    }
    if (++waiting_ < loops_) return true;
    lock.unlock();
    fail(std::make_exception_ptr(std::runtime_error(describe_deadlock())));
    return false;
}

std::string graph_engine::describe_deadlock() const {
    std::ostringstream o;
    o << "graph deadlocked: every worker waits and no stage can run.";
    for (const auto& stp : stages_) {
        const stage_state& st = *stp;
        if (st.finished.load()) continue;
        o << "\n  stage '" << st.spec->name << "': ";
        if (st.spec->kind == stage_kind::serial) {
            const auto on = static_cast<thread_event>(st.blocked_on.load());
            const packet_queue& q = *queues_[st.blocked_queue.load()];
            if (on == thread_event::empty || on == thread_event::full || on == thread_event::waiting)
                o << "waits for " << wait_words(on) << " queue '" << q.name() << "' (" << q.stats().packets_in_use << " of "
                  << q.capacity_packets() << " packets in use" << (q.closed() ? ", closed" : "") << ")";
            else o << "runnable but not run";
            continue;
        }
        const packet_queue& in = *queues_[st.spec->inputs[0]];
        bool said = false;
        for (std::size_t k = 0; k < st.spec->outputs.size(); ++k) {
            const output_spec& out = st.spec->outputs[k];
            const packet_queue& q = *queues_[out.queue];
            if (!st.output_closing[k].load() && q.free_packets_hint() < out.max_packets) {
                o << "no room in queue '" << q.name() << "' (" << q.stats().packets_in_use << " of " << q.capacity_packets()
                  << " packets in use); ";
                said = true;
            }
        }
        o << "input '" << in.name() << "' has " << in.ready_packets_hint() << " packets ready"
          << (in.closed() ? " and is closed" : ", not closed");
        (void)said;
    }
    o << "\n(a queue may be too small for what a stage reserves or peeks, or a cycle's feedback queue is never closed)";
    return o.str();
}

void graph_engine::fail(std::exception_ptr e) noexcept {
    {
        std::lock_guard lock(error_mutex_);
        if (!error_ && e) error_ = std::move(e);
    }
    stopping_.store(true, std::memory_order_release);
    bump();
    std::lock_guard lock(wait_mutex_);
    wait_cv_.notify_all();
}

void graph_engine::cancel() noexcept {
    if (!cancelled_.exchange(true) && traced_) trace_event(event_kind::loop_cancelled);
    fail(nullptr);
}

void graph_engine::rethrow_if_failed() {
    std::exception_ptr e;
    {
        std::lock_guard lock(error_mutex_);
        e = error_;
    }
    if (e) std::rethrow_exception(e);
}

namespace {
struct loop_job final : pipescope::detail::job {
    graph_engine* engine = nullptr;
    const std::function<void(unsigned)>* loop = nullptr;
    pipescope::detail::completion_latch* latch = nullptr;
    std::function<void()> on_exit;
    void run() noexcept override {
        try {
            (*loop)(static_cast<unsigned>(pipescope::this_worker_index()));
        } catch (...) {
            engine->fail(std::current_exception());
        }
        engine->close_fold_run();   // no run outlives its loop (the recorder may be detached next)
        on_exit();
        latch->arrive();
    }
};
}   // namespace

void graph_engine::run_workers(const std::function<void(unsigned)>& loop, unsigned loops) {
    if (pipescope::this_worker_index() >= 0)
        throw std::logic_error("graph::run: called from a worker thread; run graphs from outside the scheduler");
    if (loops == 0 || loops > workers()) loops = workers();
    {
        std::lock_guard lock(wait_mutex_);
        loops_ = loops;
    }
    pipescope::detail::completion_latch latch;
    std::vector<loop_job> jobs(loops);
    latch.add(loops);
    for (loop_job& j : jobs) {
        j.engine = this;
        j.loop = &loop;
        j.latch = &latch;
        j.on_exit = [this] {
            std::lock_guard lock(wait_mutex_);
            --loops_;
            wait_cv_.notify_all();
        };
        pipescope::detail::submit(sched_, &j);
    }
    latch.wait(sched_);
}

void graph_engine::place(stage_id s, std::vector<unsigned> workers) {
    stage_state& st = *stages_.at(s);
    for (unsigned w : workers)
        if (w >= this->workers())
            throw std::invalid_argument("graph: stage '" + st.spec->name + "' placed on worker " + std::to_string(w) +
                                        " of " + std::to_string(this->workers()));
    if (workers.size() > 1 && st.spec->kind != stage_kind::parallel)
        throw std::invalid_argument("graph: serial stage '" + st.spec->name +
                                    "' has one instance and cannot be split across workers");
    st.placed = std::move(workers);
}

run_stats graph_engine::stats() const {
    run_stats r;
    for (const auto& st : stages_)
        if (!st->placed.empty()) r.placement.push_back({st->spec->name, st->placed});
    for (const auto& q : queues_) r.queues.push_back({q->name(), q->capacity_packets(), q->unbounded(), q->stats()});
    r.peak_packets = static_cast<std::size_t>(footprint_.peak_packets());
    r.peak_bytes = static_cast<std::size_t>(footprint_.peak_bytes());
    for (const auto& st : stages_) {
        if (st->spec->kind == stage_kind::parallel) {
            std::lock_guard lock(st->reserve_mutex);
            r.instances += st->next_instance;   // every reservation ran one instance (or failed the run)
        } else {
            r.resumptions += st->runs.load();
            r.preemptions += st->preemptions.load();
            r.blocked += st->blocks.load();
        }
    }
    r.cancelled = cancelled_.load();
    return r;
}

}   // namespace pipescope::graph
