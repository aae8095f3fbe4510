// A pipe_while policy as its folder registers it (policy_registry.hpp): the entry, the generated
// list of every folder's entry, and run_engine, which runs a loop on a fresh engine.
#pragma once

#include "../cancel_on_stop.hpp"
#include "../policy_registry.hpp"
#include "stage_use.hpp"

#include <pipescope/pipeline.hpp>

#include <atomic>
#include <span>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace pipescope::detail {

struct policy_entry {
    const char* name;
    const char* summary;
    pipeline_stats (*run)(scheduler&, const pipe_condition&, const pipe_body&, const pipeline_options&);
    bool needs_declared_stages = false;   // construct-and-run (pipeline_options::declared_stages)
    int order = 0;                        // where listings put it: lower first (policy_registry.hpp)
};

// Every folder of pipeline/policies/ with its entry, `FOLDER_policy` (e.g. `extern const policy_entry
// piper_policy{...}` in policies/piper/piper.cpp): defined in the translation unit CMake generates
// from cmake/policy_registry.cpp.in (cmake/PipescopePolicies.cmake), in folder-name order.
std::span<const policy_folder<policy_entry>> pipeline_policy_folders();

// Runs the loop on an Engine built from the loop (and the scheduler, if the engine takes one),
// stopping it when options.cancel asks.
template <class Engine>
pipeline_stats run_engine(scheduler& s, const pipe_condition& c, const pipe_body& b, const pipeline_options& o) {
    // Taken before any stage runs: a loop nested in one of this loop's stages finds none.
    stage_use* const use = std::exchange(tls_stage_use, nullptr);
    auto run = [&](Engine& engine) {
        const stage_use_note<Engine> note(use, engine);
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
