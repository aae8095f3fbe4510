// A pipe_while policy as its engine file registers it (policy_registry.hpp): the entry, the
// declarations of every policy's entry, and run_engine, which runs a loop on a fresh engine.
#pragma once

#include "../cancel_on_stop.hpp"

#include <pipescope/pipeline.hpp>

#include <atomic>
#include <stop_token>
#include <type_traits>

namespace pipescope::detail {

struct policy_entry {
    const char* name;
    const char* summary;
    pipeline_stats (*run)(scheduler&, const pipe_condition&, const pipe_body&, const pipeline_options&);
    bool needs_declared_stages = false;   // construct-and-run (pipeline_options::declared_stages)
};

// Each engine file defines its entry (e.g. `extern const policy_entry piper_policy{...}` in piper.cpp).
extern const policy_entry piper_policy;
extern const policy_entry piper_earliest_policy;
extern const policy_entry serial_policy;
extern const policy_entry tbb_policy;
extern const policy_entry bind_to_stage_policy;

// Runs the loop on an Engine built from the loop (and the scheduler, if the engine takes one),
// stopping it when options.cancel asks.
template <class Engine>
pipeline_stats run_engine(scheduler& s, const pipe_condition& c, const pipe_body& b, const pipeline_options& o) {
    auto run = [&](Engine& engine) {
        const std::stop_callback on_cancel(o.cancel, cancel_engine{&engine});
        pipeline_stats st = engine.run();
        st.cancelled = engine.cancelled.load(std::memory_order_acquire);
        return st;
    };
    if constexpr (std::is_constructible_v<Engine, scheduler&, const pipe_condition&, const pipe_body&,
                                          const pipeline_options&>) {
        Engine engine(s, c, b, o);
        return run(engine);
    } else {
        Engine engine(c, b, o);
        return run(engine);
    }
}

}   // namespace pipescope::detail
