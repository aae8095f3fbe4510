// The explain view's words for an observed speedup above its bound (issue 22): "observed 2.42
// against a bound of 2.00" printed without a word read like a contradiction. Pure C++: unit-tested.
#pragma once

#include <string>

namespace pipescope::viewer {

struct speedup_figures {
    double observed = 0;           // reference / makespan if from_reference, else T1 / makespan
    double bound = 0;              // min(P, T1 / T∞)
    bool from_reference = false;   // observed is measured against the serial reference's time
    bool approximate = false;      // a folded trace: the bound is a lower bound
};

// Why the observed speedup exceeds the bound, in words; "" when it does not (within 1 %).
std::string speedup_above_bound_note(const speedup_figures& f);

}   // namespace pipescope::viewer
