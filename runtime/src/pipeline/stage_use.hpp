// Which stages a recorded loop's iterations entered with stage_wait and which with stage: the
// stage kinds as the program used them, for the run's summary (docs/tracing.md, "Run summary").
// The engine keeps one bit per stage (pipeline_engine::stages_waited / stages_free); run_engine
// copies them into the loop_finish of the outermost loop, which pipe_while hands it through
// tls_stage_use on the thread that starts the loop (a nested loop never finds it there).
#pragma once

#include <atomic>
#include <cstdint>

namespace pipescope::detail {

struct stage_use {
    std::uint64_t waited = 0;   // bit j: some iteration entered stage j through stage_wait (bit 63: j >= 63)
    std::uint64_t free = 0;     // bit j: some iteration entered stage j through stage
    bool noted = false;         // the loop's engine reported (not for construct-and-run engines' gated
                                // boundaries, whose declared stages say how they behave)
};

// Where the next engine started on this thread reports its stage use (nullptr: nowhere).
extern thread_local stage_use* tls_stage_use;

// Sets tls_stage_use for the loop started in its scope.
class stage_use_capture {
public:
    explicit stage_use_capture(stage_use* sink) noexcept : previous_(tls_stage_use) { tls_stage_use = sink; }
    ~stage_use_capture() { tls_stage_use = previous_; }
    stage_use_capture(const stage_use_capture&) = delete;
    stage_use_capture& operator=(const stage_use_capture&) = delete;

private:
    stage_use* previous_;
};

// Copies an engine's stage bits into the sink when the loop ends (also when it throws).
template <class Engine>
class stage_use_note {
public:
    stage_use_note(stage_use* sink, const Engine& engine) noexcept : sink_(sink), engine_(engine) {}
    ~stage_use_note() {
        if (!sink_) return;
        sink_->waited = engine_.stages_waited.load(std::memory_order_relaxed);
        sink_->free = engine_.stages_free.load(std::memory_order_relaxed);
        sink_->noted = true;
    }
    stage_use_note(const stage_use_note&) = delete;
    stage_use_note& operator=(const stage_use_note&) = delete;

private:
    stage_use* sink_;
    const Engine& engine_;
};

}   // namespace pipescope::detail
