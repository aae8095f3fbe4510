// The pipe_while policies as types: each holds the knobs its engine reads and nothing else, so a
// program that picks bind-to-stage can only set bind-to-stage's c and Queue_size, and a typo in a
// policy's name is a compile error. The string form (pipeline_options::policy, `pipescope run
// --policy`) stays for tools that pick a policy at run time; both reach the same engines.
//
//   pipe_while(sched, cond, body, policies::tbb{.stages = kinds, .tokens = 8}, {.name = "ferret"});
//
// tests/test_policy_types.cpp keeps this list and the policy folders (pipeline_policies()) equal.
#pragma once

#include <pipescope/pipeline.hpp>

#include <string_view>
#include <variant>
#include <vector>

namespace pipescope {

namespace policies {

// Cilk-P's PIPER (seed 001): work stealing with throttle K (§10), lazy enabling and dependency
// folding (§9). throttle 0 means 4P.
struct piper {
    unsigned throttle = 0;
    bool lazy_enabling = true;
    bool dependency_folding = true;
};

// PIPER plus Cheetah-Piper's suspended list (seed 003 §4): the same knobs as piper.
struct piper_earliest {
    unsigned throttle = 0;
    bool lazy_enabling = true;
    bool dependency_folding = true;
};

// The serial elision: iterations one after another on the calling thread. No knobs.
struct serial {};

// TBB's construct-and-run pipeline (seed 000 §2.3): the declared filters and at most `tokens`
// iterations in flight (0 means 4P).
struct tbb {
    std::vector<stage_kind> stages;
    unsigned tokens = 0;
};

// Pthreads bind-to-stage (seed 000 §2.1): one thread per serial stage, c = stage_threads per
// parallel stage (0 means P), bounded queues of queue_size between stages (0 means 20).
struct bind_to_stage {
    std::vector<stage_kind> stages;
    unsigned stage_threads = 0;
    unsigned queue_size = 0;
};

}   // namespace policies

using pipeline_policy =
    std::variant<policies::piper, policies::piper_earliest, policies::serial, policies::tbb, policies::bind_to_stage>;

// The policy's name as pipeline_policies() lists it ("piper", "bind-to-stage", ...).
std::string_view name_of(const pipeline_policy& p) noexcept;

// The options a loop runs with under `p`: `common` gives what every policy shares (name,
// stage_names, observer, cancel); its policy and policy knobs must be left at their defaults, or
// std::invalid_argument says which knob belongs in the policy's type.
pipeline_options options_for(const pipeline_policy& p, pipeline_options common = {});

// The typed form of options chosen by name (the CLI's way): std::invalid_argument for a name that
// pipeline_policies() does not list. Knobs the named policy does not read are dropped, so
// options_for(typed_policy_of(o)) gives o back when o sets only its policy's knobs.
pipeline_policy typed_policy_of(const pipeline_options& o);

// pipe_while with a typed policy.
inline pipeline_stats pipe_while(scheduler& s, const pipe_condition& condition, const pipe_body& body,
                                 const pipeline_policy& p, pipeline_options common = {}) {
    return pipe_while(s, condition, body, options_for(p, std::move(common)));
}

}   // namespace pipescope
