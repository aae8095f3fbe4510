// The PIPER scheduler of Cilk-P (seed 001 §5) with lazy enabling and dynamic dependency folding
// (§9), on the work-stealing core.
//
// Mapping of the paper's model onto this runtime:
//   control frame        -> `control_`, a job that starts the next iteration (the continuation of
//                           the pipe_while loop). Pushed on the worker's deque when an iteration
//                           leaves stage 0, so a thief steals the loop while the worker follows the
//                           iteration (parent stealing, §5 footnote 6).
//   iteration frame      -> a coroutine frame plus a `slot_record` (stage counter, status) in a ring
//                           of K slots; iteration i uses slot i mod K.
//   join counter / K     -> `created_ - retired`; the control suspends ("throttled_") at K.
//   check right          -> try_claim() on slot i+1 after iteration i publishes progress.
//   check parent         -> claiming `throttled_` when an iteration retires.
//   tail swap            -> retire(): when retirement enables only the control, swap it with the
//                           tail of the deque.
//
// Policies that refine PIPER (piper-earliest, seed 003 §4) derive from piper_engine and override
// the protected hooks below. They sit on the slow paths only (suspension, claiming, retirement), so
// PIPER itself pays one indirect call there and nothing on the stage-boundary fast path.
#pragma once

#include "../../../scheduler_impl.hpp"

#include "../../engine_iteration.hpp"

#include <pipescope/pipeline.hpp>

#include <memory>

namespace pipescope::detail {

class piper_engine : public pipeline_engine, public idle_work_source {
public:
    piper_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body, const pipeline_options& o);
    virtual ~piper_engine() = default;
    pipeline_stats run();

    void release_control(iteration& it) noexcept final;
    void check_right(iteration& it) noexcept final;
    bool suspend(iteration& it, std::coroutine_handle<> h) noexcept final;
    std::coroutine_handle<> finish_iteration(iteration& it) noexcept final;
    void record_exception(std::exception_ptr e) noexcept final;
    job* find_enabled_work() noexcept override;

protected:
    struct slot_record;

    // Hooks for derived policies (PIPER's own behaviour is the default).
    // Before a suspension's status is published (the status goes odd).
    virtual void before_publish_suspension(slot_record&) noexcept {}
    // The status of r went from odd to even: someone claimed the suspended iteration; `self` when
    // it was the suspending worker itself, whose re-check found the edge satisfied after all.
    virtual void after_claim(slot_record&, bool /*self*/) noexcept {}
    // The iteration stays suspended: the suspending worker is about to go back to the scheduler.
    // Called while the loop is still held open; may hand the worker something to run (set_next).
    virtual void after_suspended() noexcept {}
    // Iteration i has retired (its slot may be reused already): the iteration to follow, claimed,
    // or nullptr. PIPER: "check right", iteration i+1 if it waits (§5).
    virtual slot_record* enable_at_retire(std::uint64_t i) noexcept;

    struct slot_record final : job {
        iteration_slot sync;
        engine_iteration it;
        std::coroutine_handle<pipe_task::promise_type> frame;
        bool finishing = false;   // waiting in the implicit final stage: resuming means retiring
        // Tracer: when the iteration's current state on its line (running, waiting) began. Handed
        // from suspender to resumer along with the status word.
        std::uint64_t line_since = 0;
        piper_engine* engine = nullptr;
        void run() noexcept override;
    };
    struct control_job final : job {
        piper_engine* engine = nullptr;
        void run() noexcept override { engine->control_step(); }
    };

    slot_record& record_of(std::uint64_t i) noexcept { return slots_[i % throttle_]; }
    // The line track an iteration is drawn on (its slot), as the 16-bit trace operand.
    std::uint16_t line_of(std::uint64_t i) const noexcept { return static_cast<std::uint16_t>(i % throttle_); }
    // Live iterations as a retirer sees them (iteration i retiring), for the trace's counter.
    std::uint32_t live_after_retiring(std::uint64_t i) const noexcept;
    void control_step() noexcept;
    void start_iteration(std::uint64_t i) noexcept;
    slot_record* try_claim(slot_record& r, std::uint64_t index, std::uint64_t predecessor_progress) noexcept;
    std::uint64_t progress_of_predecessor(std::uint64_t i, std::uint64_t waited_stage) noexcept;
    std::coroutine_handle<> retire(slot_record& r) noexcept;
    std::coroutine_handle<> continue_with(slot_record* r) noexcept;

    // Whether idle workers ask this loop for work (find_enabled_work): PIPER does with lazy enabling.
    bool idle_source_;

    scheduler& sched_;
    const pipe_condition& condition_;
    const pipe_body& body_;
    pipeline_observer* observer_;
    unsigned throttle_;
    bool lazy_;
    bool folding_;
    bool traced_;   // hooks_every_node: the scheduler records, or runs on virtual time
    std::unique_ptr<slot_record[]> slots_;
    control_job control_;

    // Touched only by whoever runs the control (one at a time).
    std::uint64_t created_ = 0;
    std::uint64_t peak_live_ = 0;
    std::uint64_t throttle_waits_ = 0;
    std::uint64_t throttle_since_ = 0;   // tracer: when the control throttled (read by the retirer that resumes it)

    alignas(64) std::atomic<bool> throttled_{false};
    std::atomic<std::uint64_t> suspended_{0};
    std::atomic<std::uint64_t> suspensions_{0};
    std::atomic<std::uint64_t> tail_swaps_{0};
    std::atomic<std::uint64_t> created_published_{0};   // created_, for the retirers' live-iterations counter
    completion_latch outstanding_;                      // the control plus every live iteration
    exception_slot errors_;
};

}   // namespace pipescope::detail
