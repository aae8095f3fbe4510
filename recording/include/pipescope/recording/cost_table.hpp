// The scheduler's own costs on virtual workers (pipescope::virtual_costs) as a table people write
// and tools read: `--param steal_ns=300`, `--cost-file FILE.json`, and the calibration file that
// `pipescope calibrate` writes (docs/virtual.md, "The cost model").
//
// A cost file is a JSON object with a "costs_ns" object of any of the names below:
//     {"costs_ns": {"steal": 300, "failed_steal": 80}}
// The calibration file has the same "costs_ns" (every name) and more: how each value was measured.
#pragma once

#include <pipescope/scheduler.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::recording {

// One entry of virtual_costs: its name in files ("steal"), in --param ("steal_ns"), and what it is.
using cost_entry = virtual_cost_entry;
inline std::span<const cost_entry> cost_entries() noexcept { return virtual_cost_entries(); }
const cost_entry* find_cost(std::string_view name);   // by file name; nullptr if unknown

// virtual_costs as {"steal": 250, ...}.
nlohmann::json costs_json(const virtual_costs& c);

// Reads the "costs_ns" of a cost or calibration file into `costs` (only the names it has) and
// returns them. Throws std::runtime_error naming the file and what is wrong: it cannot be read, is
// not JSON (and where), has no "costs_ns" object, names an unknown cost, or a value that is not a
// whole number of ns below 10 s.
nlohmann::json read_cost_file(const std::filesystem::path& path, virtual_costs& costs);

// Takes the scheduler's costs ("steal_ns=300") out of `--param` values, leaving the workload's
// parameters in `params`. Throws std::invalid_argument for a cost whose value is not a whole number
// of ns.
std::vector<std::string> take_cost_params(std::vector<std::string>& params);
// Applies such "NAME_ns=V" values to `costs`; returns them as {"NAME": V}.
nlohmann::json apply_cost_params(const std::vector<std::string>& cost_params, virtual_costs& costs);

// Where `pipescope calibrate` stores its results and `run --virtual` looks for them:
// $XDG_CONFIG_HOME/pipescope/calibration.json, else ~/.config/pipescope/calibration.json. Empty
// when neither variable is set.
std::filesystem::path default_calibration_path();

}   // namespace pipescope::recording
