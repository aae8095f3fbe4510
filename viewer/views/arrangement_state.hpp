// The state dump's (app/state_dump.cpp) keys for the arranged tracks and the bookmarks:
// `tracks` {filter, pinned, hidden (each {file, name}), collapsed (document run indices), hidden_count,
// drawn (the names of the tracks the timeline draws, in order, the pinned band first)} and
// `bookmarks` (by time: {file, run, ts, time (display ns), note, current}).
#pragma once

#include "../model/view_state.hpp"

#include <nlohmann/json.hpp>

namespace pipescope::viewer {

nlohmann::json arrangement_state_json(const document& d, const view_state& st);

}   // namespace pipescope::viewer
