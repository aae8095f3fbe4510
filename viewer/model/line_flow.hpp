// A toolbar's layout: items placed left to right, a new line started when the next item would
// cross the right edge, so that a narrow window wraps the toolbar and its legend instead of
// cutting them off. The views measure each item and ask where it goes (views/toolbar_flow.hpp
// turns the answer into ImGui::SameLine or a new line). Pure C++.
#pragma once

namespace pipescope::viewer {

struct flow_cell {
    double x = 0;   // from the toolbar's left edge
    int line = 0;   // 0: the first line
    double width = 0;
    bool new_line = false;   // the item starts a line (the first item, or one that did not fit after the last)
    bool fits = true;        // it ends within the width (false only for an item wider than a whole line)
};

class line_flow {
public:
    explicit line_flow(double available_width) : avail_(available_width) {}

    // Where the next item of `width` goes: `gap` after the previous item on its line, else at the
    // start of the next line.
    flow_cell place(double width, double gap);
    int lines() const { return line_ + (empty_ ? 0 : 1); }
    // The width left on the current line after its last item.
    double room() const { return avail_ - (empty_ ? 0 : x_); }
    double available() const { return avail_; }

private:
    double avail_;
    double x_ = 0;   // the right end of the last item on the current line
    int line_ = 0;
    bool empty_ = true;   // nothing placed on the current line yet
};

}   // namespace pipescope::viewer
