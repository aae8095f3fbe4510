// The search's results list (the "List" button beside the search box's counter): a window with a
// row per match — run, track, name, start, duration — sortable by time or duration, virtualised
// (ImGuiListClipper: only the visible rows are built, whatever the number of matches). Clicking a
// row selects that match and brings it into view, as Enter does; the current match's row is
// highlighted and scrolled to when Enter steps. "Copy as TSV" copies the rows in the order shown.
#pragma once

#include "view.hpp"

#include <cstdint>
#include <vector>

namespace pipescope::viewer {

class search_results {
public:
    // Draws the window while st.search.list_open; closing it clears that.
    void draw(view_context& ctx);

private:
    std::vector<std::uint32_t> order_;       // indices into the matches, in the order shown
    std::uint64_t order_revision_ = ~0ull;   // the search revision order_ was made for
    bool by_duration_ = false, descending_ = false;
    std::size_t scrolled_to_ = static_cast<std::size_t>(-1);   // the current match last scrolled to

    void sort(const view_context& ctx);
    void table(view_context& ctx);
};

}   // namespace pipescope::viewer
