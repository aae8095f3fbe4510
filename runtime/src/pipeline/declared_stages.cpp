// The declared stages of a construct-and-run policy (declared_stages.hpp).
#include "declared_stages.hpp"

#include <stdexcept>

namespace pipescope::detail {

namespace {

std::string prefix(std::string_view policy) { return "pipe_while: policy '" + std::string(policy) + "'"; }

}   // namespace

void check_declared_stages(const pipeline_options& o, const construct_and_run& p) {
    if (o.declared_stages.empty())
        throw std::invalid_argument(
            prefix(p.policy) + " is construct-and-run: " + std::string(p.builds) +
            " before the first item, but this loop declares no stages (pipeline_options::declared_stages is empty). A "
            "pipeline whose structure is decided on the fly, as in Cilk-P's on-the-fly pipelines (seed 001 §10: x264), "
            "cannot be expressed this way; declare a stage_kind per stage, or use policy 'piper'");
    if (o.declared_stages[0] != stage_kind::serial_in_order)
        throw std::invalid_argument(prefix(p.policy) + ": declared_stages[0] must be serial_in_order (" +
                                    std::string(p.stage0_role) + ")");
    if (o.declared_stages.size() > p.max_stages)
        throw std::invalid_argument(prefix(p.policy) + ": " + std::to_string(o.declared_stages.size()) +
                                    " declared stages, at most " + std::to_string(p.max_stages));
}

void throw_undeclared_stage(std::string_view policy, std::uint64_t iteration, std::uint64_t stage, std::size_t declared) {
    throw std::invalid_argument(prefix(policy) + ": iteration " + std::to_string(iteration) + " entered stage " +
                                std::to_string(stage) + ", but only stages 0.." + std::to_string(declared - 1) +
                                " are declared (pipeline_options::declared_stages)");
}

}   // namespace pipescope::detail
