#include "search_mark_painter.hpp"

namespace pipescope::viewer {

std::uint32_t file_index(const document& d, const loaded_file& f) {
    for (std::uint32_t i = 0; i < d.files.size(); ++i)
        if (d.files[i].get() == &f) return i;
    return tm::no_index;
}

void search_mark_painter::lane(ImDrawList* dl, view_state& st, std::uint32_t fi, const loaded_file& f, std::uint32_t ti,
                               const lod_params& p, float x0, float y0, float y1) {
    if (!active(st)) return;
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + static_cast<float>(p.width), y1), col_search_dim);
    const std::vector<std::uint32_t>* marks = st.search.marks.instants(fi, ti);
    if (!marks) return;
    instant_marks(f.model.tracks[ti].instants, *marks, p, spans_);
    // A marker like the lane's own (a triangle), in the mark colour; a run of columns: a bar under it.
    for (const mark_span& m : spans_) {
        const float xa = x0 + static_cast<float>(m.x0), xb = x0 + static_cast<float>(m.x1);
        const float xm = (xa + xb) * 0.5f;
        dl->AddTriangleFilled(ImVec2(xm, y0 + 1), ImVec2(xm - 4.5f, y1 - 1), ImVec2(xm + 4.5f, y1 - 1), col_search_mark);
        if (xb - xa > 2) dl->AddRectFilled(ImVec2(xa, y1 - 3), ImVec2(xb, y1 - 1), col_search_mark);
        ++st.search.marked;
    }
}

}   // namespace pipescope::viewer
