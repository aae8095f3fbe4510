// The timeline's search box (model/search.hpp): `/` or Ctrl+F focuses it, typing searches, Enter /
// Shift+Enter (or the arrows beside it) step to the next / previous match, which is selected and
// brought into view; "3 / 41" says where in the matches the selection is; "List" opens the results
// list (search_results.hpp). The matches are marked in the tracks (search_mark_painter.hpp).
#pragma once

#include "search_results.hpp"
#include "toolbar_flow.hpp"
#include "view.hpp"

#include <string>

namespace pipescope::viewer {

// Makes match i the current one: selects it and brings it into view (Enter, a click in the list).
void show_match(view_context& ctx, std::size_t i);

class search_box {
public:
    // Draws the box in the toolbar; `focus`: take the keyboard focus (the key that opens it was pressed).
    void draw(view_context& ctx, bool focus, toolbar_flow& flow);

private:
    char query_[256] = {};
    std::string typed_;      // the text while the box has the keyboard: Esc leaves the box keeping it
    bool refocus_ = false;   // Enter leaves an ImGui text box: come back to it for the next Enter
    search_results results_;

    void step(view_context& ctx, bool backwards);
};

}   // namespace pipescope::viewer
