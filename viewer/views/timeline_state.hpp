// The timeline's part of the scripted-input state dump (app/state_dump.cpp; docs/viewer.md,
// "Scripted input"): `search` (text, matches, current 1-based, counter), `area` (null, or its
// range, tracks and aggregates: model/area_selection.hpp) and `ruler` (base, step, the labels as
// drawn, whether they all fit).
#pragma once

#include "../model/view_state.hpp"

#include <nlohmann/json.hpp>

namespace pipescope::viewer {

nlohmann::json timeline_state_json(const document& d, const view_state& st);

}   // namespace pipescope::viewer
