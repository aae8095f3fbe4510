// The run panel (File > New run..., Ctrl+R): choose a workload, policy, workers (real or virtual),
// size, K and the other parameters, press Run; each run's progress, path, errors and a Cancel
// button. The runs themselves are model/run_launcher.hpp's; docs/viewer.md, "Running a workload
// from the viewer".
#pragma once

#include "../model/run_launcher.hpp"

#include <nlohmann/json.hpp>

namespace pipescope::viewer {

void draw_run_panel(run_launcher& l, float ui_scale);
// The panel's key in the scripted-input state dump: `run_panel` (open, cli, dir, the form's choice,
// jobs with state, phase, progress, path, exit code, messages; last_path).
nlohmann::json run_panel_state(const run_launcher& l);

}   // namespace pipescope::viewer
