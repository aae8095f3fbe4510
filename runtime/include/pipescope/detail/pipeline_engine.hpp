// Internal: what an iteration's inline fast path needs to know about the policy running it.
//
// Vocabulary follows Cilk-P (seed 001 §2, §9): every iteration has a *stage counter* holding the
// stage of the node it runs now; node (i-1, j) is finished once iteration i-1's counter exceeds j.
// The implicit last serial stage is `final_stage`; an iteration's counter never needs to exceed it,
// because retirement is tracked by the pipeline-wide `retired` watermark instead (iterations retire
// in order, so "iteration i-1 retired" is simply retired >= i).
#pragma once

#include <pipescope/detail/job.hpp>

#include <atomic>
#include <functional>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <limits>

namespace pipescope {
class iteration;
class pipeline_observer;
namespace trace {
class recorder;
}
}   // namespace pipescope

namespace pipescope::detail {

inline constexpr std::uint64_t final_stage = std::numeric_limits<std::uint64_t>::max() - 1;
inline constexpr std::uint64_t retired_stage = std::numeric_limits<std::uint64_t>::max();

// Thrown out of a stage boundary when the pipeline is stopping because another stage threw:
// it unwinds the in-flight iteration's frame and is never reported to the caller.
struct pipeline_cancelled {};

[[noreturn]] void throw_bad_stage(std::uint64_t index, std::uint64_t current, std::uint64_t next);

// Per in-flight iteration state, one per throttle slot (iteration i lives in slot i mod K).
// Slots are stable memory for the whole loop, so other workers may inspect them at any time.
struct alignas(64) iteration_slot {
    std::atomic<std::uint64_t> counter{0};   // stage of the node running now
    std::atomic<std::uint64_t> index{0};     // iteration held by the slot (published last)
    // (suspension serial << 1) | suspended. Claiming a suspended iteration is one CAS from an odd
    // to the next even value; the serial makes a stale claim fail (no ABA across re-suspensions).
    std::atomic<std::uint64_t> status{0};
    std::atomic<std::uint64_t> waiting_stage{0};
    std::coroutine_handle<> handle;
};

class pipeline_engine {
public:
    // The iteration leaves stage 0: the loop may start its next iteration (seed 001 §5: the
    // continuation of the control frame is pushed, the worker follows the iteration).
    virtual void release_control(iteration& it) noexcept = 0;
    // Eager enabling: after publishing a new stage, look whether iteration i+1 waits for it.
    virtual void check_right(iteration& it) noexcept = 0;
    // The cross edge into the current node is not satisfied yet. Returns true if the iteration is
    // now suspended (someone else will resume it), false if it may go on after all.
    virtual bool suspend(iteration& it, std::coroutine_handle<> h) noexcept = 0;
    // The body returned: run the implicit final stage and retire. Returns what to run next.
    virtual std::coroutine_handle<> finish_iteration(iteration& it) noexcept = 0;
    virtual void record_exception(std::exception_ptr e) noexcept = 0;
    // Construct-and-run policies only (iteration::setup::gated): the iteration has just moved to
    // it.current_stage(); true if the node may start now, false if the awaiter must call suspend()
    // (which parks it or finds it may go on after all). May throw (an undeclared stage).
    virtual bool admit(iteration&) { return true; }

    // Observer and tracer hooks, called only when an observer is installed or a trace recorded.
    void notify_node_end(iteration& it, std::uint64_t next_stage) noexcept;
    void notify_node_begin(iteration& it, bool waited) noexcept;
    // Tracer, folded runs: the run of `it` ends with node (i, last_stage) now (node_fold_end).
    void notify_run_end(iteration& it, std::uint64_t last_stage) noexcept;

    // Tracer: which detail the iterations started from now on record at (docs/tracing.md, "Detail
    // levels"). setup_detail() reads the recorder's level when the loop starts; under `automatic`
    // the first nodes are recorded one by one and measured (notify_node_end), and once enough are
    // measured the loop decides, records a detail_decision, and folds from then on if they are short.
    void setup_detail(const trace::recorder* r) noexcept;
    bool fold_new_iterations() const noexcept { return detail_state_.load(std::memory_order_relaxed) == fold_state; }

    // Stage 0's loop condition, evaluated by the loop's control: true when another iteration starts.
    // An exception it throws is recorded (and stops the loop) like one from a stage.
    bool loop_goes_on(const std::function<bool()>& condition) noexcept;
    // The loop's control asks whether the loop is stopping (an exception or a cancellation): then
    // it starts nothing more. Marks a cancellation in the trace, once.
    bool control_stops() noexcept;

    // A stage of iteration `it` threw: traced where it happened, then recorded (the loop stops).
    void stage_threw(iteration& it, std::exception_ptr e) noexcept;
    // pipeline_options::cancel was requested (from any thread): stop as an exception would, with
    // nothing to rethrow. Engines see it as record_exception(nullptr).
    void cancel() noexcept;

    std::atomic<bool> stopping{false};       // an exception was recorded or the loop was cancelled
    std::atomic<bool> cancelled{false};      // cancel() was called
    std::atomic<std::uint64_t> retired{0};   // iterations [0, retired) have retired

    // The stages the loop's iterations entered through stage_wait (stages_waited) and through stage
    // (stages_free): bit j for stage j < 63, bit 63 for every later one. Noted on the paths a traced
    // or observed boundary takes (iteration::note_entry), each bit stored once, so the line stays
    // shared between the workers; its own line, away from `retired`, which every retirement writes.
    alignas(64) std::atomic<std::uint64_t> stages_waited{0};
    std::atomic<std::uint64_t> stages_free{0};

protected:
    ~pipeline_engine() = default;

private:
    void measure_node(std::uint64_t ticks) noexcept;

    std::atomic<bool> cancel_traced_{false};
    enum : std::uint8_t { node_state = 0, sampling_state = 1, fold_state = 2 };
    std::atomic<std::uint8_t> detail_state_{node_state};
    std::atomic<std::uint64_t> sampled_ticks_{0}, sampled_nodes_{0};
    std::uint64_t fold_below_ns_ = 0;
    const trace::recorder* recorder_ = nullptr;
};

}   // namespace pipescope::detail
