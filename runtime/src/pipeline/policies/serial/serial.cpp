// The serial elision of pipe_while: iterations run one after another on the calling thread, every
// stage_wait is satisfied on arrival. This is the reference every parallel run is checked against.
#include "serial.hpp"
#include "../../policy.hpp"

namespace pipescope::detail {

serial_engine::serial_engine(const pipe_condition& condition, const pipe_body& body, const pipeline_options& o)
    : condition_(condition), body_(body), observer_(o.observer) {}

pipeline_stats serial_engine::run() {
    pipeline_stats st;
    st.throttle = 1;
    for (std::uint64_t i = 0; !stopping.load(std::memory_order_relaxed); ++i) {
        bool more = false;
        try {
            more = condition_();
        } catch (...) {
            record_exception(std::current_exception());
        }
        if (!more || stopping.load(std::memory_order_relaxed)) break;
        it_.reset({.engine = this,
                   .slot = &slot_,
                   .prev_slot = nullptr,
                   .index = i,
                   .observer = observer_,
                   .folding = true,
                   .eager = false});
        try {
            frame_ = body_(it_).release();
            frame_.promise().it = &it_;
            if (observer_) {
                observer_->on_iteration_start(i, this_worker_index());
                notify_node_begin(it_, false);
            }
            frame_.resume();   // runs to completion: nothing ever suspends
        } catch (...) {
            record_exception(std::current_exception());
        }
        st.iterations = i + 1;
        st.peak_live = 1;
    }
    errors_.rethrow_and_reset();
    return st;
}

std::coroutine_handle<> serial_engine::finish_iteration(iteration& handle) noexcept {
    engine_iteration& it = engine_side(handle);
    it.enter_final();
    if (observer_) observer_->on_iteration_retire(it.index(), this_worker_index());
    retired.store(it.index() + 1, std::memory_order_relaxed);
    frame_.destroy();
    return std::noop_coroutine();
}

void serial_engine::record_exception(std::exception_ptr e) noexcept {
    errors_.capture(std::move(e));
    stopping.store(true, std::memory_order_seq_cst);
    it_.raise_stop();   // the boundary's fast path only looks at the iteration's flags
}

extern const policy_entry serial_policy{
    .name = "serial",
    .summary = "the serial elision: iterations one after another on the calling thread",
    .run = run_engine<serial_engine>,
    .order = 30,
};

}   // namespace pipescope::detail
