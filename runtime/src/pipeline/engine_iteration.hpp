// An iteration as the engine that runs it sees it: the body's handle (pipescope::iteration) plus
// what only engines may do to it (set it up, stop it, mark its resumptions and folded runs for the
// tracer). iteration keeps those members private and befriends this class, which publishes them;
// engines hold their iterations as engine_iteration, and reach one they got as `iteration&` (a
// pipeline_engine hook) through engine_side().
#pragma once

#include <pipescope/pipeline.hpp>

namespace pipescope::detail {

class engine_iteration final : public iteration {
public:
    using iteration::setup;

    using iteration::raise_stop;
    using iteration::reset;

    using iteration::engine;
    using iteration::observer;
    using iteration::slot;

    using iteration::enter_final;
    using iteration::set_prev_seen;

    using iteration::boundary_ticks;
    using iteration::mark_resumed;
    using iteration::set_boundary_ticks;
    using iteration::take_resumed;

    using iteration::begin_run;
    using iteration::begin_run_at;
    using iteration::disarm_begin;
    using iteration::end_run;
    using iteration::folds;
    using iteration::run_first_stage;
    using iteration::run_open;
};

// Every iteration a body runs in was made by an engine as an engine_iteration.
inline engine_iteration& engine_side(iteration& it) noexcept { return static_cast<engine_iteration&>(it); }

}   // namespace pipescope::detail
