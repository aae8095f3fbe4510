// The `tbb` policy: TBB's construct-and-run pipeline with tokens (seed 000 §2.3 and Fig. 5; seed
// 001 §10), on the same work-stealing core and the same coroutine iterations as PIPER.
//
// Mapping of TBB's pipeline template onto this runtime:
//   filters            -> pipeline_options::declared_stages: stage j of every iteration is a filter
//                         of kind declared_stages[j]; the program must declare them before the loop
//                         runs (construct-and-run), and the body's own stage / stage_wait choice is
//                         ignored in favour of the declared kind. pipe_while's implicit final stage
//                         is one more serial_in_order filter at the end (an output filter with no
//                         body), so items still retire in order.
//   token / ntokens    -> N = pipeline_options::throttle (0: 4P, the same default as PIPER's K):
//                         at most N items in flight. A token is taken when the input filter starts
//                         an item and given back when the item leaves the output filter.
//   input filter       -> stage 0, run by `input_`, one item at a time and in order. When an item
//                         leaves stage 0 the next input task is spawned only if a token is free
//                         (Fig. 5(b) line 2); otherwise the input waits, and the thread that gives a
//                         token back starts the next item itself (Fig. 5(b) lines 14-18).
//   stage_task         -> item_task: one task carries one item through the filters (scheduler
//                         bypass / recycle_as_continuation: the coroutine simply goes on) and is
//                         recycled for item i + N at the end.
//   serial filter      -> filter: an input buffer. serial_in_order: item i enters after every item
//                         before it has passed (or skipped) the filter; an item arriving early is
//                         parked, and the thread that finishes item i-1 there spawns item i.
//                         serial_out_of_order: one item at a time, parked items taken in arrival
//                         order. parallel filters never wait.
#pragma once

#include "../../../scheduler_impl.hpp"

#include "../../engine_iteration.hpp"

#include <pipescope/pipeline.hpp>

#include <memory>
#include <mutex>

namespace pipescope::detail {

class tbb_engine final : public pipeline_engine {
public:
    // Throws std::invalid_argument if the loop declares no stages (a construct-and-run policy must
    // know the filter chain before the first item), if stage 0 is not serial_in_order, or if N is
    // out of range.
    tbb_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body, const pipeline_options& o);
    pipeline_stats run();

    void release_control(iteration& it) noexcept override;
    void check_right(iteration&) noexcept override {}
    bool admit(iteration& it) override;
    bool suspend(iteration& it, std::coroutine_handle<> h) noexcept override;
    std::coroutine_handle<> finish_iteration(iteration& it) noexcept override;
    void record_exception(std::exception_ptr e) noexcept override;

    static constexpr unsigned max_tokens = 1u << 16;
    static constexpr std::size_t max_stages = 1u << 16;

private:
    // Fig. 5(b)'s stage_task: carries one item through the filters.
    struct item_task final : job {
        iteration_slot sync;
        engine_iteration it;
        std::coroutine_handle<pipe_task::promise_type> frame;
        std::uint64_t filter = 0;       // the filter the item is in or parked at (n_: the output filter)
        bool finishing = false;         // parked at the output filter: running it means retiring
        std::uint64_t line_since = 0;   // tracer: when the item's state on its line began
        tbb_engine* engine = nullptr;
        void run() noexcept override;
    };
    struct input_task final : job {
        tbb_engine* engine = nullptr;
        void run() noexcept override { engine->input_step(); }
    };
    // A filter and its input buffer. Guarded by `m` (TBB guards its input buffers with a spin mutex).
    struct filter {
        stage_kind kind = stage_kind::parallel;
        std::mutex m;
        std::uint64_t turn = 0;                  // in order: the oldest item that has not passed yet
        std::unique_ptr<std::uint8_t[]> mark;    // in order, ring of N: item i+k has passed / is parked
        bool busy = false;                       // out of order: an item is inside
        std::unique_ptr<std::uint64_t[]> fifo;   // out of order: parked items, arrival order (ring of N)
        std::size_t head = 0, count = 0;
        std::uint32_t parked = 0;   // items in the buffer
    };
    static constexpr std::uint64_t none = ~std::uint64_t{0};

    item_task& task_of(std::uint64_t i) noexcept { return tasks_[i % tokens_]; }
    std::uint16_t line_of(std::uint64_t i) const noexcept { return static_cast<std::uint16_t>(i % tokens_); }
    std::uint32_t in_flight_after_retiring(std::uint64_t i) const noexcept;

    void input_step() noexcept;
    bool wait_for_token() noexcept;
    void start_item(std::uint64_t i) noexcept;
    bool can_enter(filter& f, std::uint64_t i) const noexcept;
    std::uint64_t advance(filter& f) noexcept;                                                   // in order, under f.m
    std::uint64_t take_parked(filter& f, std::uint64_t f_index, std::uint64_t taken) noexcept;   // under f.m
    item_task* leave(std::uint64_t f_index, std::uint64_t i) noexcept;
    item_task* skip(std::uint64_t f_index, std::uint64_t i) noexcept;
    void spawn(item_task* t) noexcept;
    std::coroutine_handle<> retire(item_task& r) noexcept;

    scheduler& sched_;
    const pipe_condition& condition_;
    const pipe_body& body_;
    pipeline_observer* observer_;
    unsigned tokens_;   // N
    std::uint64_t n_;   // declared filters; filter n_ is the implicit output filter
    bool traced_;       // hooks_every_node: the scheduler records, or runs on virtual time
    std::unique_ptr<item_task[]> tasks_;
    std::unique_ptr<filter[]> filters_;
    input_task input_;

    // Touched only by whoever runs the input filter (one at a time).
    std::uint64_t created_ = 0;
    std::uint64_t peak_live_ = 0;
    std::uint64_t token_waits_ = 0;
    std::uint64_t token_wait_since_ = 0;   // tracer: read by the retirer that hands the input a token

    alignas(64) std::atomic<bool> input_waits_{false};   // the input filter waits for a token
    std::atomic<std::uint64_t> parks_{0};
    std::atomic<std::uint64_t> created_published_{0};
    completion_latch outstanding_;   // the input plus every live item
    exception_slot errors_;
};

}   // namespace pipescope::detail
