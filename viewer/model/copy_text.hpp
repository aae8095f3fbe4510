// What Copy puts on the clipboard (views/clipboard.hpp): a selected slice's or instant's details as
// the details panel shows them, and tables as TSV (tab-separated, one line per row, a header line
// first; times in ns, so a spreadsheet can compute with them). Pure C++.
#pragma once

#include "area_selection.hpp"
#include "document.hpp"
#include "search.hpp"
#include "view_state.hpp"

#include <optional>
#include <string>
#include <vector>

namespace pipescope::viewer {

// Rows of cells as TSV: cells joined by tabs, rows by newlines (each row ends in one); a tab or a
// line break inside a cell becomes a space.
std::string to_tsv(const std::vector<std::vector<std::string>>& rows);

// The selected event's details: name, kind, times (display and trace ns), track, run and
// annotations, one "key<TAB>value" line each; "" with no valid selection.
std::string event_details_text(const document& d, const selection& s, bool aligned);

// An area selection's tables: time by state, then time by stage (with a blank line between).
std::string area_tsv(const area_stats& s);

// The search's matches as listed (views/search_results.cpp), in `order` (indices into matches):
// match (1-based, time order), run, track, name, start and duration in display ns (empty for an instant).
std::string search_results_tsv(const document& d, const search_state& s, const std::vector<std::uint32_t>& order);

// What the results list shows of one match.
struct match_row {
    std::string run, track, name;
    double start = 0;                 // display ns
    std::optional<double> duration;   // none for an instant
};
match_row describe_match(const document& d, const search_match& m);

}   // namespace pipescope::viewer
