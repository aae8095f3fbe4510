#include "line_flow.hpp"

namespace pipescope::viewer {

flow_cell line_flow::place(double width, double gap) {
    flow_cell c;
    c.width = width;
    if (!empty_ && x_ + gap + width > avail_) {
        ++line_;
        empty_ = true;
    }
    c.new_line = empty_;
    c.x = empty_ ? 0 : x_ + gap;
    c.line = line_;
    c.fits = c.x + width <= avail_;
    x_ = c.x + width;
    empty_ = false;
    return c;
}

}   // namespace pipescope::viewer
