#include "open_framing.hpp"

#include <algorithm>
#include <cmath>

namespace pipescope::viewer {

bool shows_everything(const document& d, const view_state& st) {
    if (st.sel.valid() || st.area) return false;
    const std::pair<double, double> all = frame_all_range(d, st.align_runs);
    if (st.frame_request) return *st.frame_request == all;
    viewport framed = st.vp;
    framed.frame(all.first, all.second, timeline_frame_margin);
    // A resize since keeps [t0, t1] (viewport::resize), up to rounding.
    const double tol = std::max(1.0, 1e-6 * (all.second - all.first));
    return std::abs(framed.t0 - st.vp.t0) <= tol && std::abs(framed.t1() - st.vp.t1()) <= tol;
}

axis_before_add note_axis_before_add(const document& d, const view_state& st) {
    axis_before_add a;
    a.had_runs = !d.runs.empty();
    a.reframe = !a.had_runs || shows_everything(d, st);
    if (a.had_runs) a.first_run_offset = display_offset(d, d.runs.front(), st.align_runs);
    return a;
}

void carry_axis_after_add(const document& d, view_state& st, const axis_before_add& before) {
    if (before.reframe) {
        st.request_frame_all(d);
        return;
    }
    if (!before.had_runs || d.runs.empty()) return;
    // The same absolute moment of the first run at the same place: display times shift by the
    // change of its offset (0 unless the document's start moved or the runs became aligned).
    const double shift = before.first_run_offset - display_offset(d, d.runs.front(), st.align_runs);
    if (shift == 0) return;
    st.vp.t0 += shift;
    if (st.frame_request) st.frame_request = std::pair{st.frame_request->first + shift, st.frame_request->second + shift};
    if (st.cursor) *st.cursor += shift;
    if (st.area) {
        st.area->t0 += shift;
        st.area->t1 += shift;
    }
}

}   // namespace pipescope::viewer
