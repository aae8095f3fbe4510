// The viewer's breakdown: the analysis library's, over a viewer run (breakdown.hpp).
#include "breakdown.hpp"

namespace pipescope::viewer {

analysis::run_scope scope_of(const loaded_file& f, const run_ref& r) {
    analysis::run_scope s = r;   // the run's scope is the analysis' own (document::rebuild_runs)
    s.model = &f.model;          // the file may have been prepared again since
    return s;
}

run_breakdown compute_breakdown(const loaded_file& f, const run_ref& r) {
    return analysis::compute_breakdown(scope_of(f, r));
}

}   // namespace pipescope::viewer
