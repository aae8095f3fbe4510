// pipescope — on-the-fly pipelines (Cilk-P's pipe_while, seed 001 §2).
//
//     pipescope::pipe_while(sched, [&] { return reader.more(); },          // evaluated in stage 0
//         [&](pipescope::iteration& it) -> pipescope::pipe_task {
//             auto chunk = reader.next();                                  // stage 0: serial
//             co_await it.stage(1);                                        // stage 1: parallel
//             auto packed = compress(chunk);
//             co_await it.stage_wait(2);                                   // stage 2: after (i-1, 2)
//             writer.write(packed);
//         });
//
// Each iteration is a C++20 coroutine whose frame holds the iteration's state. Stage numbers
// strictly increase and may skip (null nodes); which boundaries wait may differ per iteration.
// Every iteration ends in an implicit serial stage, so iterations retire in order.
#pragma once

#include <pipescope/detail/pipeline_engine.hpp>
#include <pipescope/scheduler.hpp>

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

namespace pipescope {

// How a stage behaves in a pipeline whose structure is declared up front (the filter modes of
// construct-and-run policies, seed 000 §2.3): serial in order (iteration i after i-1, the cross
// edge of stage_wait), serial out of order (one iteration at a time, any order), parallel.
enum class stage_kind : std::uint8_t { serial_in_order, serial_out_of_order, parallel };

// How a pipe_while loop is scheduled.
struct pipeline_options {
    std::string policy = "piper";   // a name from pipeline_policies(): "piper", "serial", ...
    // What a recording (trace_session, PIPESCOPE_TRACE) calls the loop and its stages: the run is
    // "name · policy · P=n", node slices of stage j are "stage j · stage_names[j]" in the viewer and
    // the Perfetto UI. Both optional; stages past the end of stage_names keep their number only.
    std::string name = {};
    std::vector<std::string> stage_names = {};
    unsigned throttle = 0;            // K, most iterations in flight (tokens); 0 means 4P (seed 001 §10)
    bool lazy_enabling = true;        // seed 001 §9
    bool dependency_folding = true;   // seed 001 §9
    pipeline_observer* observer = nullptr;
    // The structure, for policies that need it before the loop runs (construct-and-run): stage j
    // of every iteration has kind declared_stages[j] (stage 0, where the loop condition runs, must
    // be serial_in_order). Iterations may still skip stages. Empty: the structure is decided on
    // the fly, which only the work-stealing policies (piper, serial elision) can run.
    std::vector<stage_kind> declared_stages = {};
    // bind-to-stage (seed 000 §2.1, §4.1): c, the threads of each parallel stage (serial stages get
    // one thread each); 0 means P, the scheduler's worker count. More threads than cores is allowed
    // (oversubscription). 1..1024.
    unsigned stage_threads = 0;
    // bind-to-stage: Queue_size, the capacity of the bounded queue in front of every stage j >= 1;
    // 0 means 20, PARSEC ferret's default (seed 000 §2.1). 1..2^20.
    unsigned queue_size = 0;
    // Cancellation from outside (any thread: request_stop() on the source): no iteration starts
    // after the request, the ones in flight unwind at their next stage boundary, and pipe_while
    // returns with pipeline_stats::cancelled set (an exception from a stage still wins: it is
    // rethrown). A token that can never stop (the default) costs nothing.
    std::stop_token cancel = {};
};

// The K a loop runs with on `workers` workers: options.throttle, or 4P when that is 0.
inline unsigned effective_throttle(const pipeline_options& options, unsigned workers) noexcept {
    return options.throttle ? options.throttle : 4 * workers;
}

// bind-to-stage's c and Queue_size as a loop runs with them (the defaults resolved).
inline constexpr unsigned default_queue_size = 20;
inline unsigned effective_stage_threads(const pipeline_options& options, unsigned workers) noexcept {
    return options.stage_threads ? options.stage_threads : workers;
}
inline unsigned effective_queue_size(const pipeline_options& options) noexcept {
    return options.queue_size ? options.queue_size : default_queue_size;
}

// What happened, counted by the runtime (cheap, always on).
struct pipeline_stats {
    std::uint64_t iterations = 0;
    std::uint64_t peak_live = 0;        // most iterations in flight at once
    std::uint64_t suspensions = 0;      // cross edges found unsatisfied
    std::uint64_t throttle_waits = 0;   // times the loop waited for an iteration to retire
    std::uint64_t tail_swaps = 0;
    unsigned throttle = 0;    // K actually used
    bool cancelled = false;   // pipeline_options::cancel stopped the loop early
};

// Hooks a test or tool installs to watch a loop (Taskflow-style observer: no cost when absent).
// Calls come from worker threads, concurrently; `worker` is this_worker_index().
class pipeline_observer {
public:
    virtual ~pipeline_observer() = default;
    virtual void on_iteration_start(std::uint64_t /*i*/, int /*worker*/) {}
    // Node (i, stage) begins; `waited` when it was entered through stage_wait.
    virtual void on_node_begin(std::uint64_t /*i*/, std::uint64_t /*stage*/, bool /*waited*/, int /*worker*/) {}
    // Node (i, stage) ended and the iteration moves on to next_stage (final_stage() at the end);
    // called before the new stage is visible to other iterations.
    virtual void on_node_end(std::uint64_t /*i*/, std::uint64_t /*stage*/, std::uint64_t /*next*/, int /*worker*/) {}
    // Called before the retirement is visible to other iterations.
    virtual void on_iteration_retire(std::uint64_t /*i*/, int /*worker*/) {}
    static constexpr std::uint64_t final_stage() { return detail::final_stage; }
};

class pipe_task;
namespace detail {
class engine_iteration;
}

// The handle an iteration body receives. Lives as long as the iteration.
class iteration {
    struct stage_awaiter {
        iteration& it;
        std::uint64_t stage;
        bool wait;
        // Forced inline: GCC otherwise keeps this call out of line, which is most of the cost of a
        // stage boundary in fine-grained pipelines (bench/: pipe-fib).
        [[gnu::always_inline]] bool await_ready() {
            if (stage >= detail::final_stage) [[unlikely]]
                detail::throw_bad_stage(it.index_, it.stage_, stage);
            return it.enter(stage, wait);
        }
        bool await_suspend(std::coroutine_handle<> h) noexcept { return it.engine_->suspend(it, h); }
        // Cancellation, observer and tracer all hide behind one flag test (see slow_).
        [[gnu::always_inline]] void await_resume() {
            if (it.slow_.load(std::memory_order_relaxed) & (stop_flag | hooked_flag | gated_flag | virtual_flag))
                [[unlikely]]
                it.resumed_slow(wait);
        }
    };

public:
    std::uint64_t index() const noexcept { return index_; }
    std::uint64_t current_stage() const noexcept { return stage_; }

    // End the current node; the next one, (i, j), may start at once.
    stage_awaiter stage(std::uint64_t j) noexcept { return {*this, j, false}; }
    stage_awaiter stage() noexcept { return {*this, stage_ + 1, false}; }
    // End the current node; (i, j) starts once (i-1, j) has finished (a cross edge).
    stage_awaiter stage_wait(std::uint64_t j) noexcept { return {*this, j, true}; }
    stage_awaiter stage_wait() noexcept { return {*this, stage_ + 1, true}; }

private:
    friend class pipe_task;
    // The engines' view: every member below that a body must not call (reset, the tracer's marks, ...)
    // is reached through it (runtime/src/pipeline/engine_iteration.hpp), as oneTBB befriends its
    // pipeline's internals.
    friend class detail::engine_iteration;

    // What a boundary may have to do besides publishing progress and checking the cross edge. All of
    // it sits behind one byte tested once per boundary, so the fast path is: a misuse check, this
    // test, the new stage stored (release: seed 001 §9's stage counter), and with stage_wait the
    // folded cross-edge check. Only stop_flag is written by other threads (raise_stop()).
    enum : std::uint8_t {
        hooked_flag = 1,   // an observer or the tracer wants node begin/end
        eager_flag = 2,    // lazy enabling off: check right at every boundary (seed 001 §5)
        gated_flag = 4,    // construct-and-run: the engine admits every boundary (setup::gated)
        stop_flag = 8,     // the loop is stopping: unwind at the next boundary
        // The tracer folds node runs (trace_detail::folded): a boundary to the next stage number
        // passes on the fast path unrecorded; a boundary that skips stages ends the run (slow path),
        // and so do suspensions and the final stage (the engine). hooked_flag is then set only from
        // a run's end to the next node's begin.
        fold_flag = 16,
        // Virtual workers: every boundary takes the slow path, where the node's end is a yield point
        // (docs/virtual.md; without fold_flag, hooked_flag does that), and the next node's measure
        // starts once the boundary is back in the body (resumed_slow).
        virtual_flag = 32,
    };

    // Moves the iteration to stage j. Inline fast path: no read-modify-write, no suspension when
    // the cross edge is known (or found) satisfied.
    [[gnu::always_inline]] bool enter(std::uint64_t j, bool wait) {
        if (j <= stage_) [[unlikely]]
            detail::throw_bad_stage(index_, stage_, j);
        if (const std::uint8_t f = slow_.load(std::memory_order_relaxed)) [[unlikely]] {
            if (f != fold_flag || j != stage_ + 1) return enter_slow(j, wait);
            note_entry(j, wait);   // folded runs pass here: the stage's kind is still the run's
        }
        const std::uint64_t was = stage_;
        stage_ = j;
        slot_->counter.store(j, std::memory_order_release);
        // Leaving stage 0 spawns the rest of the loop (seed 001 §5): once per iteration.
        if (was == 0) [[unlikely]]
            engine_->release_control(*this);
        // Dynamic dependency folding (seed 001 §9): trust the cached counter of iteration i-1.
        if (!wait || prev_seen_ > j) return true;
        return refresh_prev(j);
    }
    // The same with hooks, eager enabling, gating or a stop pending (pipe_while.cpp).
    bool enter_slow(std::uint64_t j, bool wait);
    // A recorded (or observed) boundary into stage j: marks how the stage was entered, for the
    // run's stage kinds (pipeline_engine::stages_waited). A load of a line that is written once per
    // stage and kind, so it stays in every worker's cache.
    [[gnu::always_inline]] void note_entry(std::uint64_t j, bool wait) noexcept {
        if (j >= detail::final_stage) return;
        const std::uint64_t bit = std::uint64_t{1} << (j < 63 ? j : 63);
        std::atomic<std::uint64_t>& seen = wait ? engine_->stages_waited : engine_->stages_free;
        if (!(seen.load(std::memory_order_relaxed) & bit)) seen.fetch_or(bit, std::memory_order_relaxed);
    }
    // A boundary was resumed (or passed) while slow_ has stop, hooked, gated or virtual set.
    void resumed_slow(bool waited);

    // Reads iteration i-1's counter for node (i, j). With folding off nothing is cached, so the next
    // stage_wait reads it again (seed 001 §9 measures exactly that difference).
    [[gnu::always_inline]] bool refresh_prev(std::uint64_t j) noexcept {
        const std::uint64_t c = read_prev(j);
        prev_seen_ = folding_ ? c : 0;
        return c > j;
    }

    // The stage counter of iteration i-1 as far as node (i, j) is concerned: any value > j means
    // (i-1, j) is done. The slot may already hold a later iteration (i-1 retired): then any value
    // read is > j or the watermark says retired.
    [[gnu::always_inline]] std::uint64_t read_prev(std::uint64_t j) const noexcept {
        if (!prev_slot_) return detail::retired_stage;
        const std::uint64_t c = prev_slot_->counter.load(std::memory_order_acquire);
        if (c > j) return c;
        if (engine_->retired.load(std::memory_order_acquire) >= index_) return detail::retired_stage;
        return c;
    }

    // Engine-only (engine_iteration publishes them): set up by the engine that runs the iteration.
    struct setup {
        detail::pipeline_engine* engine;
        detail::iteration_slot* slot;
        detail::iteration_slot* prev_slot;   // nullptr: no previous iteration can be in flight
        std::uint64_t index;
        pipeline_observer* observer;
        bool folding;
        bool eager;
        bool traced = false;         // the scheduler records a trace
        bool gated = false;          // every boundary asks engine->admit() (construct-and-run policies)
        bool fold = false;           // traced with folded node runs (fold_flag); else traced means every node
        bool virtual_time = false;   // on virtual workers: every node end is a yield point (virtual_flag)
    };
    void reset(const setup& s) noexcept {
        engine_ = s.engine;
        slot_ = s.slot;
        prev_slot_ = s.prev_slot;
        observer_ = s.observer;
        index_ = s.index;
        stage_ = 0;
        prev_seen_ = s.prev_slot ? 0 : detail::retired_stage;
        boundary_ticks_ = 0;
        resumed_ = false;
        run_open_ = false;
        folding_ = s.folding;
        const bool fold = s.traced && s.fold && s.observer == nullptr;
        const std::uint8_t f = static_cast<std::uint8_t>(
            (fold ? fold_flag : (s.observer != nullptr || s.traced ? hooked_flag : 0)) |
            (s.virtual_time ? virtual_flag : 0) | (s.eager ? eager_flag : 0) | (s.gated ? gated_flag : 0));
        // Dekker with the engine's stop (raise_stop after stopping is set): either we see stopping
        // here, or its raise_stop comes after this store and is not overwritten.
        slow_.store(f, std::memory_order_seq_cst);
        if (s.engine->stopping.load(std::memory_order_seq_cst)) raise_stop();
    }
    // The engine is stopping: the iteration unwinds at its next boundary. Any thread, after
    // engine->stopping was stored (seq_cst); only engines whose iterations are not gated need it.
    void raise_stop() noexcept { slow_.fetch_or(stop_flag, std::memory_order_seq_cst); }
    detail::iteration_slot* slot() const noexcept { return slot_; }
    pipeline_observer* observer() const noexcept { return observer_; }
    // A resumer found iteration i-1 at c (cached only with folding on).
    void set_prev_seen(std::uint64_t c) noexcept { prev_seen_ = folding_ ? c : 0; }
    detail::pipeline_engine* engine() const noexcept { return engine_; }
    std::uint64_t boundary_ticks() const noexcept { return boundary_ticks_; }
    void set_boundary_ticks(std::uint64_t t) noexcept { boundary_ticks_ = t; }
    // Tracer: the iteration was suspended and has been resumed; its next node begin ends the
    // resumption flow. take_resumed() reads and clears the mark.
    void mark_resumed() noexcept { resumed_ = true; }
    bool take_resumed() noexcept { return std::exchange(resumed_, false); }
    // Tracer, folded runs: the run of nodes this worker is in, from its first stage (set when its
    // node_begin is recorded); end_run() closes it and arms the next node's begin (hooked_flag
    // until resumed_slow). Only the thread running the iteration calls them.
    bool folds() const noexcept { return slow_.load(std::memory_order_relaxed) & fold_flag; }
    bool run_open() const noexcept { return run_open_; }
    std::uint64_t run_first_stage() const noexcept { return run_first_; }
    void begin_run() noexcept { begin_run_at(stage_); }
    void begin_run_at(std::uint64_t first_stage) noexcept {
        run_open_ = true;
        run_first_ = first_stage;
    }
    void end_run() noexcept {
        run_open_ = false;
        slow_.fetch_or(hooked_flag, std::memory_order_relaxed);
    }
    // A folded iteration recorded its run's begin: back to the fast path (a no-op when not folding).
    void disarm_begin() noexcept {
        if (folds()) slow_.fetch_and(static_cast<std::uint8_t>(~hooked_flag), std::memory_order_relaxed);
    }
    bool enter_final() { return enter(detail::final_stage, true); }

    detail::pipeline_engine* engine_ = nullptr;
    detail::iteration_slot* slot_ = nullptr;
    detail::iteration_slot* prev_slot_ = nullptr;
    pipeline_observer* observer_ = nullptr;
    std::atomic<std::uint8_t> slow_{0};   // hooked_flag | eager_flag | gated_flag | stop_flag
    std::uint64_t index_ = 0;
    std::uint64_t stage_ = 0;
    std::uint64_t prev_seen_ = 0;        // cached stage counter of iteration i-1
    std::uint64_t boundary_ticks_ = 0;   // tracer: clock read at the last node end, if not suspended since
    bool folding_ = true;
    bool resumed_ = false;          // tracer: see mark_resumed()
    bool run_open_ = false;         // tracer, folded: a run of nodes is open (see begin_run())
    std::uint64_t run_first_ = 0;   // tracer, folded: its first stage
};

namespace detail {
void* frame_allocate(std::size_t size);
void frame_deallocate(void* p, std::size_t size) noexcept;
}   // namespace detail

// The return type of an iteration body.
class pipe_task {
public:
    struct promise_type {
        iteration* it = nullptr;   // set by the engine before the first resume

        pipe_task get_return_object() noexcept {
            return pipe_task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        auto final_suspend() noexcept {
            struct final_awaiter {
                bool await_ready() noexcept { return false; }
                std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
                    iteration& it = *h.promise().it;
                    return it.engine()->finish_iteration(it);
                }
                void await_resume() noexcept {}
            };
            return final_awaiter{};
        }
        void return_void() noexcept {}
        void unhandled_exception() noexcept {
            try {
                throw;
            } catch (const detail::pipeline_cancelled&) {
                // the loop is stopping; unwinding this iteration was the point
            } catch (...) {
                it->engine()->stage_threw(*it, std::current_exception());
            }
        }
        static void* operator new(std::size_t size) { return detail::frame_allocate(size); }
        static void operator delete(void* p, std::size_t size) noexcept { detail::frame_deallocate(p, size); }
    };

    pipe_task(pipe_task&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
    pipe_task(const pipe_task&) = delete;
    ~pipe_task() = default;   // the engine owns the frame once it has the handle

    std::coroutine_handle<promise_type> release() noexcept {
        auto h = h_;
        h_ = nullptr;
        return h;
    }

private:
    explicit pipe_task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    std::coroutine_handle<promise_type> h_;
};

// The policies pipe_while knows, for tools that list or validate them.
struct pipeline_policy_info {
    std::string name;
    std::string summary;
    bool needs_declared_stages = false;   // construct-and-run: refuses loops without declared_stages
};
std::vector<pipeline_policy_info> pipeline_policies();

using pipe_condition = std::function<bool()>;
using pipe_body = std::function<pipe_task(iteration&)>;

// Runs the loop to completion. Rethrows the first exception a stage (or the condition) threw,
// after every in-flight iteration has finished or unwound.
pipeline_stats pipe_while(scheduler& s, const pipe_condition& condition, const pipe_body& body,
                          const pipeline_options& options = {});

}   // namespace pipescope
