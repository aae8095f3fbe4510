// `pipescope export-json in.pftrace out.json`: the trace model as Chrome trace-event JSON.
#include <pipescope/recording/usage_error.hpp>
#include "commands.hpp"
#include "trace_loading.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/chrome_json.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <fmt/format.h>

#include <exception>
#include <cstdio>

int export_json_command(const std::vector<std::string>& args) {
    if (args.size() != 2 || args[0].empty() || args[1].empty() || args[0][0] == '-' || args[1][0] == '-')
        throw pipescope::recording::usage_error("export-json: give the trace and the JSON file to write");
    try {   // before loading the trace: a directory, device or link there is refused at once
        pipescope::trace::check_output_path(args[1]);
    } catch (const pipescope::trace::output_path_error& e) {
        fmt::print(stderr, "pipescope: export-json: {}\n", e.what());
        return 2;
    }
    std::optional<pipescope::trace::trace_model> loaded = load_one_trace(args[0]);
    if (!loaded) return 1;
    const pipescope::trace::trace_model& model = *loaded;
    try {
        const auto st = pipescope::trace::write_chrome_json(model, std::filesystem::path(args[1]));
        using pipescope::analysis::numbers::count;
        fmt::print("{}: {} events ({} slices, {} instants, {} counter values, {} flows)\n", args[1], count(st.events),
                   count(st.slices), count(st.instants), count(st.counters), count(st.flows));
        for (const auto& p : model.problems) fmt::print("  problem: {}\n", p);
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: export-json: {}\n", e.what());
        return 1;
    }
    return 0;
}
