// pipe_while: validates the options and hands the loop to the policy that runs it.
#include "engine_iteration.hpp"
#include "policy.hpp"
#include "../loop_listener.hpp"
#include "../policy_registry.hpp"
#include "../scheduler_impl.hpp"
#include "../trace_hooks.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipescope {

namespace detail {

thread_local stage_use* tls_stage_use = nullptr;

void throw_bad_stage(std::uint64_t index, std::uint64_t current, std::uint64_t next) {
    if (next >= final_stage)
        throw std::invalid_argument("pipe_while: iteration " + std::to_string(index) + " asked for stage " +
                                    std::to_string(next) + ", which is reserved for the implicit final stage");
    throw std::invalid_argument("pipe_while: iteration " + std::to_string(index) + " went from stage " +
                                std::to_string(current) + " to stage " + std::to_string(next) +
                                "; stage numbers must strictly increase");
}

}   // namespace detail

// The boundary with something more to do than publish and check (iteration::enter is the fast
// path). Same order as there, plus the hooks: the node's end is reported before the new stage is
// visible to other iterations; eager enabling checks right after publishing (seed 001 §5); a
// gated boundary is decided by the engine (construct-and-run).
bool iteration::enter_slow(std::uint64_t j, bool wait) {
    const std::uint8_t f = slow_.load(std::memory_order_relaxed);
    if (f & virtual_flag) detail::virtual_node_ends();   // the node's body is over; its yield point follows
    if (!(f & gated_flag)) note_entry(j, wait);          // a gated boundary behaves as its stage was declared
    if (f & fold_flag) {
        // On virtual workers every node end is a yield point, also inside a folded run.
        if (f & virtual_flag) detail::virtual_pipeline_node_end(index_, stage_, j);
        // A folded run holds consecutive stage numbers only, so that it names its nodes exactly:
        // a skip (a null node, the final stage) or a stop ends it here.
        if (run_open_ && (j != stage_ + 1 || (f & stop_flag))) engine_->notify_run_end(*this, stage_);
    } else if (f & hooked_flag) {
        engine_->notify_node_end(*this, j);
    }
    const std::uint64_t was = stage_;
    stage_ = j;
    slot_->counter.store(j, std::memory_order_release);
    if (was == 0) engine_->release_control(*this);
    if (f & eager_flag) engine_->check_right(*this);
    if (f & gated_flag) return engine_->admit(*this);
    if (!wait || prev_seen_ > j) return true;
    return refresh_prev(j);
}

// Cancellation (an exception elsewhere, or pipeline_options::cancel) unwinds the iteration here;
// gated engines set no stop_flag, so this reads the engine's own word for them.
void iteration::resumed_slow(bool waited) {
    if (engine_->stopping.load(std::memory_order_relaxed)) throw detail::pipeline_cancelled{};
    const std::uint8_t f = slow_.load(std::memory_order_relaxed);
    if (f & hooked_flag) engine_->notify_node_begin(*this, waited);
    // On virtual workers the node begins here, in the body: its measure leaves out the way back from
    // the yield point (returns through frames entered before the token's hand-over, mispredicted
    // after the context switch; docs/virtual.md, "Idle workers and hand-overs") and the tracer's record of its begin.
    if (f & virtual_flag) detail::virtual_node_begins();
}

namespace detail {

// A stage boundary that does not suspend ends one node and begins the next at the same instant:
// the end's clock read is kept in the iteration and reused for the begin (suspend() drops it).
void pipeline_engine::notify_node_end(iteration& handle, std::uint64_t next_stage) noexcept {
    engine_iteration& it = engine_side(handle);
    // On virtual time the node ends here, before the boundary publishes it.
    virtual_pipeline_node_end(it.index(), it.current_stage(), next_stage);
    if (auto* o = it.observer()) o->on_node_end(it.index(), it.current_stage(), next_stage, this_worker_index());
    const std::uint64_t began = it.boundary_ticks();
    const std::uint64_t now = trace_event_at(0, trace::event_kind::node_end, it.index(), it.current_stage());
    it.set_boundary_ticks(now);
    if (began && now && detail_state_.load(std::memory_order_relaxed) == sampling_state) [[unlikely]]
        measure_node(now - began);
}

// Folded or not, a node begin keeps its clock read in the iteration (boundary_ticks): the next
// node end measures the node from it (trace_detail::automatic), or begins the next node at once.
void pipeline_engine::notify_node_begin(iteration& handle, bool waited) noexcept {
    engine_iteration& it = engine_side(handle);
    if (auto* o = it.observer()) o->on_node_begin(it.index(), it.current_stage(), waited, this_worker_index());
    const std::uint32_t flags = (waited ? trace::node_waited : 0) | (it.take_resumed() ? trace::node_resumed : 0);
    it.set_boundary_ticks(
        trace_event_at(it.boundary_ticks(), trace::event_kind::node_begin, it.index(), it.current_stage(), flags));
    if (it.folds()) {
        it.begin_run();
        it.disarm_begin();
    }
}

void pipeline_engine::notify_run_end(iteration& handle, std::uint64_t last_stage) noexcept {
    engine_iteration& it = engine_side(handle);
    const std::uint64_t nodes = last_stage - it.run_first_stage() + 1;
    it.set_boundary_ticks(trace_event_at(0, trace::event_kind::node_fold_end, it.index(), last_stage,
                                         static_cast<std::uint32_t>(std::min<std::uint64_t>(nodes, 0xFFFFFFFFu))));
    it.end_run();
}

void pipeline_engine::setup_detail(const trace::recorder* r) noexcept {
    recorder_ = r;
    if (!r) return;
    fold_below_ns_ = r->fold_below_ns();
    switch (r->detail()) {
        case trace::trace_detail::nodes: detail_state_.store(node_state, std::memory_order_relaxed); break;
        case trace::trace_detail::folded: detail_state_.store(fold_state, std::memory_order_relaxed); break;
        case trace::trace_detail::automatic: detail_state_.store(sampling_state, std::memory_order_relaxed); break;
    }
}

// trace_detail::automatic: the loop's first nodes measured one by one decide for every stage at
// once (a folded run spans stages, so the decision is the loop's). Enough nodes to see past a
// cold start, few enough that a run of short nodes is folded almost from its beginning.
void pipeline_engine::measure_node(std::uint64_t ticks) noexcept {
    constexpr std::uint64_t nodes_to_measure = 1024;
    const std::uint64_t total = sampled_ticks_.fetch_add(ticks, std::memory_order_relaxed) + ticks;
    const std::uint64_t n = sampled_nodes_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n != nodes_to_measure) return;   // exactly one node end decides
    const double mean_ns = static_cast<double>(total) * recorder_->ns_per_tick_estimate() / static_cast<double>(n);
    const bool fold = mean_ns < static_cast<double>(fold_below_ns_);
    trace_event(trace::event_kind::detail_decision, trace::all_stages, static_cast<std::uint64_t>(mean_ns), fold ? 1 : 0,
                static_cast<std::uint16_t>(std::min<std::uint64_t>(n, 0xFFFF)));
    detail_state_.store(fold ? fold_state : node_state, std::memory_order_relaxed);
}

void pipeline_engine::stage_threw(iteration& handle, std::exception_ptr e) noexcept {
    engine_iteration& it = engine_side(handle);
    if (it.run_open()) notify_run_end(it, it.current_stage());
    trace_event(trace::event_kind::stage_exception, it.index(), it.current_stage());
    record_exception(std::move(e));
}

void pipeline_engine::cancel() noexcept {
    cancelled.store(true, std::memory_order_release);
    record_exception(nullptr);
}

bool pipeline_engine::control_stops() noexcept {
    if (!stopping.load(std::memory_order_acquire)) return false;
    // A cancellation is marked once, where the loop's control first sees it.
    if (cancelled.load(std::memory_order_acquire) && !cancel_traced_.exchange(true, std::memory_order_acq_rel))
        trace_event(trace::event_kind::loop_cancelled);
    return true;
}

bool pipeline_engine::loop_goes_on(const std::function<bool()>& condition) noexcept {
    if (control_stops()) return false;
    bool more = false;
    try {
        more = condition();
    } catch (...) {
        record_exception(std::current_exception());
    }
    return more && !stopping.load(std::memory_order_acquire);
}

}   // namespace detail

namespace {

// The policies that can run a pipe_while loop: one folder each (policy_registry.hpp). Built on first
// use, so that no static initializer depends on another translation unit's.
const detail::policy_registry<detail::policy_entry>& policies() {
    static const detail::policy_registry<detail::policy_entry> registry("pipe_while: unknown policy",
                                                                        detail::pipeline_policy_folders());
    return registry;
}

}   // namespace

std::vector<pipeline_policy_info> pipeline_policies() {
    std::vector<pipeline_policy_info> out;
    for (const detail::policy_entry* p : policies()) out.push_back({p->name, p->summary, p->needs_declared_stages});
    return out;
}

pipeline_stats pipe_while(scheduler& s, const pipe_condition& condition, const pipe_body& body,
                          const pipeline_options& options) {
    if (!condition) throw std::invalid_argument("pipe_while: the loop condition is empty");
    if (!body) throw std::invalid_argument("pipe_while: the iteration body is empty");
    const detail::policy_entry& p = policies().find(options.policy);
    // A recording session makes the loop a run of its trace (trace_session.hpp).
    detail::loop_scope loop(s.impl(), {.pipeline = &options});
    return loop.run([&] {
        const detail::stage_use_capture capture(loop.stage_use_sink());
        return p.run(s, condition, body, options);
    });
}

}   // namespace pipescope
