// The `bind-to-stage` policy: the Pthreads pipelines of PARSEC's ferret and dedup (seed 000 §2.1,
// §2.2, §3.1, §4.1; seed 001 §10 "Pthreaded implementations"), on the same coroutine iterations as
// every other policy but not on the work-stealing workers: the threads are bound to stages and the
// OS schedules them.
//
// Mapping of the paper's design onto this runtime:
//   stage S_j            -> pipeline_options::declared_stages[j] (construct-and-run, like `tbb`).
//   threads c_j          -> one std::thread per serial stage (serial_in_order, serial_out_of_order),
//                           c = pipeline_options::stage_threads per parallel stage (0: P). Threads
//                           may outnumber cores: oversubscription (seed 000 §4.1), the OS balances.
//   queue Q_j            -> stage_queue, capacity Queue_size = pipeline_options::queue_size (0: 20,
//                           seed 000 §2.1), one in front of every stage j >= 1. A thread blocks on a
//                           condition variable while the queue it pushes to is full or the one it
//                           takes from is empty (seed 000 §3.1: items stall in a full closed system).
//   input stage          -> stage 0's thread evaluates the loop condition and runs stage 0 of each
//                           new iteration: it creates the coroutine and resumes it up to its first
//                           boundary, then puts it into the next stage's queue.
//   boundaries           -> every boundary is gated (admit() says no); the coroutine suspends, and
//                           the thread that ran the node pushes the iteration into the queue of the
//                           stage it goes to. Skipped stages (dedup's Compress, seed 000 §2.2) are
//                           jumped over; a skipped serial_in_order stage gets a skip mark instead.
//   serial_in_order      -> as PARSEC's dedup output thread: take items from the queue as they
//                           arrive, keep those early for their turn in a private reorder buffer
//                           (not bounded by Queue_size; traced), run the one whose turn it is.
//   serial_out_of_order  -> one thread, FIFO.
//   output / retirement  -> pipe_while's implicit final stage needs no thread: whoever finishes an
//                           iteration's last node retires, in order, under a lock, every finished
//                           iteration from the oldest on.
//
// On virtual workers (scheduler_options::virtual_time; docs/virtual.md, "Threads on virtual cores"):
// the same threads run the same code, but as the actors of an executor of their own that models an
// OS scheduling them on P virtual cores (virtual_executor::core_model: round robin with a quantum,
// context switches). Every node's end is a yield point (its CPU time is the thread's demand for a
// core), and a thread that waits on a queue parks there and leaves its core (stage_queue). The
// scheduler's own workers stay idle, held still by the outside thread that runs the loop.
//
// Termination: when stage 0 finds the loop condition false its thread exits; when the last thread
// of stage j exits, queue j+1 is closed; its threads drain it and exit in turn. An exception (a
// stage, the condition, an undeclared stage) sets `stopping` and aborts every queue: every thread
// wakes and exits; run() joins them, destroys the frames still in flight and rethrows.
#pragma once

#include "bind_to_stage_check.hpp"
#include "stage_queue.hpp"

#include "../../../scheduler_impl.hpp"

#include "../../engine_iteration.hpp"

#include "../../../virtual/virtual_executor.hpp"

#include <pipescope/pipeline.hpp>

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace pipescope::detail {

class bind_to_stage_engine final : public pipeline_engine {
public:
    // Throws std::invalid_argument for a loop without declared stages, stage 0 not serial_in_order,
    // or stage_threads / queue_size out of range (naming the parameter).
    bind_to_stage_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body, const pipeline_options& o);
    ~bind_to_stage_engine();
    pipeline_stats run();

    void release_control(iteration&) noexcept override {}
    void check_right(iteration&) noexcept override {}
    bool admit(iteration& it) override;
    bool suspend(iteration& it, std::coroutine_handle<> h) noexcept override;
    std::coroutine_handle<> finish_iteration(iteration& it) noexcept override;
    void record_exception(std::exception_ptr e) noexcept override;

    static constexpr unsigned max_stage_threads = 1024;
    static constexpr unsigned max_queue_size = 1u << 20;
    static constexpr std::size_t max_stages = 1u << 12;

private:
    struct item {
        engine_iteration it;
        iteration_slot sync;
        std::coroutine_handle<pipe_task::promise_type> frame;
        std::uint64_t at = 0;           // the stage it ran last (or waits for)
        std::uint64_t target = 0;       // the stage it goes to next (set by admit)
        bool finished = false;          // the body returned (finish_iteration ran)
        bool retirable = false;         // finished and handed to complete() (under retire_mutex_)
        std::uint64_t line_since = 0;   // tracer: when its state on its line began
        std::uint16_t line = 0;         // tracer: its line (a free slot, taken at start)
    };
    struct stage {
        stage_kind kind = stage_kind::parallel;
        unsigned threads = 1;
        std::unique_ptr<stage_queue<item*>> in;   // j >= 1
        unsigned alive = 0;                       // threads still running (under exit_mutex_)
        std::size_t reorder_peak = 0;
    };

    static item* item_of(iteration& it) noexcept;
    void input_thread();
    void stage_thread(std::uint64_t j);
    void in_order_loop(std::uint64_t j);
    void run_node(item* r, std::uint64_t j);   // resume r at stage j, then move it on
    void forward(item* r);                     // into the next stage's queue, or retire
    void complete(item* r);                    // the body returned: retire in order
    void thread_exits(std::uint64_t j);
    void report_to_check() const;
    void abort_queues() noexcept;
    void trace_blocked(bool begin, std::uint64_t queue, trace::blocked_on why) noexcept;

    scheduler& sched_;
    const pipe_condition& condition_;
    const pipe_body& body_;
    pipeline_observer* observer_;
    std::uint64_t n_;       // declared stages
    unsigned c_;            // threads per parallel stage
    unsigned queue_size_;   // Queue_size
    bool traced_;
    std::vector<stage> stages_;

    std::mutex exit_mutex_;   // stage::alive

    // Retirement, under retire_mutex_: items [retired, retired + window_.size()) in creation order.
    std::mutex retire_mutex_;
    std::deque<item*> window_;
    std::uint64_t created_ = 0;
    std::uint64_t peak_live_ = 0;
    std::vector<std::uint16_t> free_lines_;   // tracer: line slots given back, reused smallest first
    std::uint16_t next_line_ = 0;

    // Virtual workers: the threads' executor (one actor per thread, in start order), else empty.
    std::unique_ptr<virtual_executor> virtual_;
    std::vector<virtual_actor> actors_;

    std::atomic<std::uint64_t> blocks_{0}, full_blocks_{0};
    std::mutex error_mutex_;
    std::exception_ptr error_;
};

}   // namespace pipescope::detail
