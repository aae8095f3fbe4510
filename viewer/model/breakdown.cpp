// The viewer's breakdown: the analysis library's, over a viewer run (breakdown.hpp).
#include "breakdown.hpp"

namespace pipescope::viewer {

analysis::run_scope scope_of(const loaded_file& f, const run_ref& r) {
    analysis::run_scope s;
    s.model = &f.model;
    s.run = r.run;
    s.title = r.title;
    s.start = r.start;
    s.end = r.end;
    s.workers = r.workers;
    s.lines = r.lines;
    s.counters = r.counters;
    return s;
}

run_breakdown compute_breakdown(const loaded_file& f, const run_ref& r) { return analysis::compute_breakdown(scope_of(f, r)); }

}  // namespace pipescope::viewer
