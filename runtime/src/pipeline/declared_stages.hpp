// The declared stages of a construct-and-run policy (tbb, bind-to-stage): such a policy builds its
// filters or binds its threads before the first item, so the loop must declare its stages
// (pipeline_options::declared_stages), stage 0 serial and in order, and no iteration may enter a
// stage it did not declare. Both policies check this the same way, with the same words.
#pragma once

#include <pipescope/pipeline.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace pipescope::detail {

struct construct_and_run {
    std::string_view policy;        // "tbb"
    std::string_view builds;        // what it does before the first item: "it must know the filter chain"
    std::string_view stage0_role;   // why stage 0 is serial in order: "stage 0 is the input filter, ..."
    std::size_t max_stages;
};

// Throws std::invalid_argument naming the policy unless o declares 1..max_stages stages, the first
// serial_in_order.
void check_declared_stages(const pipeline_options& o, const construct_and_run& policy);

// The error for an iteration that entered a stage the loop did not declare.
[[noreturn]] void throw_undeclared_stage(std::string_view policy, std::uint64_t iteration, std::uint64_t stage,
                                         std::size_t declared);

}   // namespace pipescope::detail
