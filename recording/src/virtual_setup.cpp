// The costs of a virtual run (virtual_setup.hpp).
#include "virtual_setup.hpp"

#include <pipescope/recording/cost_table.hpp>
#include <pipescope/recording/recording.hpp>

#include <pipescope/analysis/numbers.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace pipescope::recording {

namespace {

// "steal 250 ns, failed_steal 60 ns, ..." for the values `taken` names.
std::string cost_list(const nlohmann::json& taken) {
    std::string out;
    for (const auto& [name, value] : taken.items())
        out += fmt::format("{}{} {} ns", out.empty() ? "" : ", ", name, value.get<std::uint64_t>());
    return out;
}

// The costs `taken` names, for the run's metadata.
trace::cost_table cost_table_of(const nlohmann::json& taken) {
    trace::cost_table out;
    for (const auto& [name, value] : taken.items()) out[name] = value.get<std::uint64_t>();
    return out;
}

}   // namespace

virtual_setup prepare_virtual(const run_args& args) {
    virtual_setup v;
    // The file names only, not where they are: a trace says what set its costs without the machine's paths.
    const std::filesystem::path calibration = default_calibration_path();
    if (!calibration.empty() && std::filesystem::exists(calibration)) {
        const nlohmann::json taken = read_cost_file(calibration, v.costs);
        v.origin.calibration =
            trace::calibration_use{trace::cost_file_use{calibration.filename().string(), cost_table_of(taken)}};
        v.lines.push_back(fmt::format("calibration {}: {}", calibration.string(), cost_list(taken)));
    } else {
        v.origin.calibration = trace::calibration_use{};   // none: written as null
        v.lines.push_back("calibration none (pipescope calibrate measures this machine): the built-in costs");
    }
    if (!args.cost_file.empty()) {
        const nlohmann::json taken = read_cost_file(args.cost_file, v.costs);
        v.origin.cost_file =
            trace::cost_file_use{std::filesystem::path(args.cost_file).filename().string(), cost_table_of(taken)};
        v.lines.push_back(fmt::format("cost file {}: {}", args.cost_file, cost_list(taken)));
    }
    if (!args.cost_params.empty()) {
        const nlohmann::json taken = apply_cost_params(args.cost_params, v.costs);
        v.origin.params_ns = cost_table_of(taken);
        v.lines.push_back(fmt::format("--param    {}", cost_list(taken)));
    }
    v.lines.push_back(fmt::format("costs      {}", cost_list(costs_json(v.costs))));
    if (!args.costs_trace.empty()) {
        v.node_costs = std::make_unique<trace_node_costs>(args.costs_trace,
                                                          costs_wanted{.workload = args.workload,
                                                                       .size = workloads::size_name(args.request.size),
                                                                       .seed = args.request.seed,
                                                                       .params = args.params});
        v.origin.node_costs = trace::node_costs_use{.recording = v.node_costs->describe()};
        v.lines.push_back(fmt::format("nodes      cost what {} recorded ({} nodes, {} of them from folded slices, "
                                      "{} in all; run \"{}\")",
                                      args.costs_trace, analysis::numbers::count(v.node_costs->nodes()),
                                      analysis::numbers::count(v.node_costs->folded_nodes()),
                                      analysis::numbers::duration(static_cast<double>(v.node_costs->total_ns())),
                                      v.node_costs->describe().run));
    } else {
        v.lines.push_back("nodes      cost their measured thread CPU time (--costs TRACE fixes them)");
    }
    return v;
}

}   // namespace pipescope::recording
