// The statistics view's part of the scripted-input state dump (app/state_dump.cpp; docs/viewer.md,
// "Statistics"): `stats` — the grouping, the scope, runs A and B, the sort, the selected row, the
// histogram's range and the rows in the order shown.
#pragma once

#include "../model/view_state.hpp"

#include <nlohmann/json.hpp>

namespace pipescope::viewer {

nlohmann::json stats_state_json(const document& d, const view_state& st);

}   // namespace pipescope::viewer
