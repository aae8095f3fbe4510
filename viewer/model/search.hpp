// The timeline's search: which slices and instants of the document a query matches, in time
// order, and stepping through them (Enter / Shift+Enter). Pure C++.
//
// A query is words, all of which must hold (case does not matter):
//   stage 3, s3, s=3        a node of stage 3 (a folded node run holding stage 3 too), or a line
//                           state at stage 3 ("waiting at stage 3")
//   iteration 12, i12, i=12 an event of iteration 12 (its `iteration` annotation; a folded run of a
//                           graph stage holds iterations [iteration, last_iteration])
//   any other word          part of the event's name, or of its stage's name in the run metadata
//                           ("extract" finds ferret's stage 2 nodes)
#pragma once

#include "document.hpp"
#include "file_set.hpp"
#include "search_marks.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::viewer {

struct search_query {
    std::vector<std::string> words;   // lower case
    std::optional<std::uint64_t> stage, iteration;
    bool empty() const { return words.empty() && !stage && !iteration; }
};
search_query parse_query(std::string_view text);

struct search_match {
    double t = 0;   // display time of its start (the view's axis)
    std::uint32_t file = 0;
    tm::event_ref ev;
};

// Every event of the document the query matches, by display start time (then file, track,
// index), or none if more than `limit` match (a one-letter query on a big trace: stepping through
// millions is no use, and keeping them would cost 24 bytes each); `total` (if given) gets how many
// matched. O(events of the document); names are matched once per distinct string.
inline constexpr std::size_t max_search_matches = std::size_t{1} << 21;
std::vector<search_match> find_matches(const document& d, const search_query& q, bool aligned,
                                       std::size_t limit = max_search_matches, std::size_t* total = nullptr);

// The search box's state: the query last searched, its matches and the one shown.
struct search_state {
    static constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::string text;                    // what was searched for
    bool aligned = false;                // the axis the match times are on
    file_set files;                      // the files searched
    std::vector<search_match> matches;   // empty when there are more than max_search_matches
    std::size_t total = 0;               // how many matched
    std::size_t current = none;          // the match last stepped to
    search_marks marks;                  // the matches by file, track and row, for drawing them
    std::uint64_t revision = 0;          // counts the searches (a view caches what it derives from them)
    // Drawn state (views/search_mark_painter.hpp, views/search_results.cpp), for the state dump:
    std::size_t marked = 0;           // marks the timeline drew in the last frame
    bool list_open = false;           // the results list is shown
    std::size_t list_rows = 0;        // its rows
    std::string list_sort = "time";   // "time" or "duration", then " descending" if so

    // Searches again if the text, the axis or the document's files changed (the current match is then forgotten).
    void update(const document& d, std::string_view query, bool aligned_axis);
    // Steps to the next (or previous) match and returns it, or none if there is no match. From no
    // current match, forward is the first match at or after `from_t` and backward the last one
    // before it; both wrap around.
    std::size_t step(bool backwards, double from_t);
    // "3 / 41", "41 matches", "no match", "2500000 matches: add a word", or "" with no query.
    std::string counter() const;
};

}   // namespace pipescope::viewer
