// What stage bodies call: a parallel instance's pushes (instance_context) and a serial stage's
// reserves, pops, pushes and commits (thread_context), on top of the engine (engine.hpp).
#include "engine.hpp"

#include <algorithm>
#include <cstring>

namespace pipescope::graph {

using detail::graph_engine;
using detail::packets_for;
using detail::stage_state;

push_window& instance_context::window(std::size_t k) {
    if (k >= outputs_count_)
        throw std::out_of_range("graph stage '" + state_->spec->name + "': push to output " + std::to_string(k) +
                                ", but it has " + std::to_string(outputs_count_) + " outputs");
    return outputs_[k];
}

// Output k exists and is open, the element has the queue's size, and there is room; then the cursor
// moves to the packet the next element falls in.
void instance_context::advance(std::size_t k, std::size_t size) {
    push_window& w = window(k);
    if (!w) overflow(k);   // closed by close_output
    const packet_queue& q = *w.source();
    if (size != q.element_size())
        throw std::invalid_argument("graph stage '" + state_->spec->name + "': push of a " + std::to_string(size) +
                                    "-byte element to output " + std::to_string(k) + " (queue '" + q.name() +
                                    "'), whose elements are " + std::to_string(q.element_size()) + " bytes");
    const std::size_t n = counts_[k];
    if (n == w.capacity()) overflow(k);
    const std::size_t per = q.packet_elements();
    cursor& c = cursors_[k];
    c.element_size = size;
    c.next = w.packet_bytes(n / per).data() + (n % per) * size;
    c.left = per - n % per;
}

// What push's inline fast path does for one element, for a run: as much of it as the current packet
// holds goes in with one copy, then the cursor moves on (advance) to the next packet, which is where
// n single pushes would cross the boundary too; a run past the last reserved packet throws there,
// with the elements before it pushed.
void instance_context::push_run(std::size_t k, const void* values, std::size_t size, std::size_t n) {
    const auto* from = static_cast<const std::byte*>(values);
    while (n > 0) {
        if (k >= outputs_count_ || cursors_[k].left == 0 || cursors_[k].element_size != size) advance(k, size);
        cursor& c = cursors_[k];
        const std::size_t m = std::min(n, c.left);
        std::memcpy(c.next, from, m * size);
        c.next += m * size;
        c.left -= m;
        counts_[k] += m;
        from += m * size;
        n -= m;
    }
}

void instance_context::overflow(std::size_t k) const {
    const output_spec& o = state_->spec->outputs[k];
    if (!outputs_[k])
        throw std::logic_error("graph stage '" + state_->spec->name + "': push to output " + std::to_string(k) +
                               " after an instance of the stage closed it (close_output)");
    throw std::length_error("graph stage '" + state_->spec->name + "': an instance pushed more than its max_packets = " +
                            std::to_string(o.max_packets) + " packets (" + std::to_string(outputs_[k].capacity()) +
                            " elements) to output " + std::to_string(k) + "; declare a larger max_packets");
}

void instance_context::close_output(std::size_t k) {
    window(k);
    close_[k] = true;
}

namespace {
queue_id input_id(const stage_state& st, std::size_t k) {
    if (k >= st.spec->inputs.size())
        throw std::out_of_range("graph stage '" + st.spec->name + "': input " + std::to_string(k) +
                                " does not exist (it has " + std::to_string(st.spec->inputs.size()) + ")");
    return st.spec->inputs[k];
}
queue_id output_id(const stage_state& st, std::size_t k) {
    if (k >= st.spec->outputs.size())
        throw std::out_of_range("graph stage '" + st.spec->name + "': output " + std::to_string(k) +
                                " does not exist (it has " + std::to_string(st.spec->outputs.size()) + ")");
    return st.spec->outputs[k].queue;
}
queue_id find_queue(const stage_state& st, const packet_queue* q, graph_engine& e) {
    for (queue_id id : st.spec->inputs)
        if (&e.queue(id) == q) return id;
    for (const output_spec& o : st.spec->outputs)
        if (&e.queue(o.queue) == q) return o.queue;
    throw std::invalid_argument("graph stage '" + st.spec->name + "': commit of a window from queue '" +
                                (q ? q->name() : std::string("?")) + "', which is not one of its queues");
}
}   // namespace

void thread_context::blocked(thread_event e, queue_id q, std::uint64_t version) noexcept {
    event_ = e;
    event_queue_ = q;
    event_version_ = version;
}

bool thread_context::try_pop(pop_awaiter& a) {
    const queue_id id = input_id(*state_, a.input);
    packet_queue& q = engine_->queue(id);
    const std::uint64_t version = q.data_version();
    a.result = q.try_reserve_pop(a.packets, a.peek);
    const bool ok = a.result || a.result.status() == reserve_status::end_of_stream;
    engine_->trace_queue_op(trace::event_kind::graph_reserve, id, a.packets, true, ok, stage_);
    if (ok) return true;
    blocked(q.waiting_commits_hint() > 0 ? thread_event::waiting : thread_event::empty, id, version);
    state_->retry = +[](void* p, thread_context& c) { return c.try_pop(*static_cast<pop_awaiter*>(p)); };
    state_->retry_awaiter = &a;
    return false;
}

bool thread_context::try_reserve(reserve_awaiter& a) {
    const queue_id id = output_id(*state_, a.output);
    packet_queue& q = engine_->queue(id);
    state_->retry = +[](void* p, thread_context& c) { return c.try_reserve(*static_cast<reserve_awaiter*>(p)); };
    state_->retry_awaiter = &a;
    if (budget_spent()) {   // preempted at a reserve (seed 004 §III-A)
        blocked(thread_event::preempted, id, 0);
        return false;
    }
    const std::uint64_t version = q.space_version();
    queue_change change;
    a.result = engine_->over_forward_bound(*state_, a.output, a.packets)
                   ? push_window{}
                   : q.try_reserve_push(a.packets, engine_->traced_ ? &change : nullptr);
    engine_->trace_queue_op(trace::event_kind::graph_reserve, id, a.packets, false, bool(a.result), stage_);
    if (a.result) {
        state_->retry = nullptr;
        engine_->queue_changed(id, change);
        return true;
    }
    blocked(thread_event::full, id, version);
    return false;
}

bool thread_context::try_push(std::size_t k, const void* value, std::size_t size) {
    const queue_id id = output_id(*state_, k);
    packet_queue& q = engine_->queue(id);
    if (size != q.element_size())
        throw std::invalid_argument("graph stage '" + state_->spec->name + "': push of a " + std::to_string(size) +
                                    "-byte element to queue '" + q.name() + "', whose elements are " +
                                    std::to_string(q.element_size()) + " bytes");
    push_window& w = open_[k];
    if (w && open_count_[k] == w.capacity()) flush(k);   // a full packet goes out first
    if (!w) {
        pending_value_ = value;
        pending_size_ = size;
        pending_output_ = k;
        state_->retry =
            +[](void*, thread_context& c) { return c.try_push(c.pending_output_, c.pending_value_, c.pending_size_); };
        state_->retry_awaiter = nullptr;
        if (budget_spent()) {
            blocked(thread_event::preempted, id, 0);
            return false;
        }
        const std::uint64_t version = q.space_version();
        queue_change change;
        w = engine_->over_forward_bound(*state_, k, 1) ? push_window{}
                                                       : q.try_reserve_push(1, engine_->traced_ ? &change : nullptr);
        engine_->trace_queue_op(trace::event_kind::graph_reserve, id, 1, false, bool(w), stage_);
        if (!w) {
            blocked(thread_event::full, id, version);
            return false;
        }
        state_->retry = nullptr;
        engine_->queue_changed(id, change);
    }
    std::memcpy(w.element(open_count_[k]++).data(), value, size);
    return true;
}

void thread_context::flush(std::size_t k) {
    output_id(*state_, k);
    if (!open_[k]) return;
    commit(open_[k], open_count_[k]);
    open_count_[k] = 0;
}

void thread_context::commit(push_window& w, std::size_t elements) {
    const queue_id id = find_queue(*state_, w.source(), *engine_);
    packet_queue& q = engine_->queue(id);
    queue_change change;
    const bool published = q.commit_push(w, elements, engine_->traced_ ? &change : nullptr);
    outputs_since_resume_ += packets_for(elements, q.packet_elements());
    engine_->trace_queue_op(trace::event_kind::graph_commit, id, elements, false, published, stage_);
    engine_->queue_changed(id, change);
}

void thread_context::commit(pop_window& w) {
    const queue_id id = find_queue(*state_, w.source(), *engine_);
    const std::size_t n = w.size();
    queue_change change;
    engine_->queue(id).commit_pop(w, engine_->traced_ ? &change : nullptr);
    engine_->trace_queue_op(trace::event_kind::graph_commit, id, n, true, true, stage_);
    engine_->queue_changed(id, change);
}

void thread_context::close_output(std::size_t k) {
    flush(k);
    engine_->close_output(*state_, k);
}

}   // namespace pipescope::graph
