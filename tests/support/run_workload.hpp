// Runs a registered workload from a test: by name, at size tiny (the tests' size), on a fresh
// scheduler of `workers`. The report says whether the output matched the serial reference; the
// caller asserts on it.
#pragma once

#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

namespace testing {

inline pipescope::workloads::run_report run_tiny(const std::string& name, const std::string& policy, unsigned workers,
                                                 pipescope::workloads::param_set params = {}, std::uint64_t seed = 1) {
    const pipescope::workloads::workload* w = pipescope::workloads::find_workload(name);
    REQUIRE(w != nullptr);
    pipescope::scheduler s({workers});
    pipescope::workloads::run_request r;
    r.policy = policy;
    r.size = pipescope::workloads::input_size::tiny;
    r.seed = seed;
    r.params = std::move(params);
    return w->run(s, r);
}

}   // namespace testing
