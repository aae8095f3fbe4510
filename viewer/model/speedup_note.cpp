#include "speedup_note.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <cstdio>

namespace pipescope::viewer {

namespace {
std::string two(double v) { return analysis::numbers::fixed(v, 2); }
}   // namespace

std::string speedup_above_bound_note(const speedup_figures& f) {
    if (!(f.bound > 0) || f.observed <= f.bound * 1.01) return {};
    const std::string head = "The observed speedup " + two(f.observed) + " is above the bound " + two(f.bound) + ". ";
    if (f.approximate)
        return head +
               "This trace is folded: its span is an upper bound, so the bound is only a lower bound of the real one (\"at least " +
               two(f.bound) + "\"), and the run did not beat it.";
    if (f.from_reference)
        return head +
               "The bound limits this run's own work T1 divided by its makespan; the observed speedup divides the serial "
               "reference's time instead. The serial program took " +
               two(f.observed / f.bound) +
               "\xC3\x97 longer than the work this run did: it does more per iteration than the pipeline's nodes (the serial "
               "elision keeps what the parallel version splits or skips), or ran with colder caches, or the "
               "parallel run's workers kept more of the data in their caches. Measured against T1, the speedup stays within the bound.";
    return head +
           "T1 / makespan can exceed min(P, T1/T\xE2\x88\x9E) only when the trace's node slices overlap in time on one worker "
           "(nested or misrecorded slices) or the makespan misses part of the run: check the timeline for overlaps.";
}

}   // namespace pipescope::viewer
