// The program of a stage graph in a trace's metadata has one author, graph_program_json
// (trace_session.hpp): what `pipescope run` writes for a graph workload (recording/src/recording.cpp) and what
// a trace_session writes for the same graph::run describe the same stages and queues.
#include <pipescope/recording/recording.hpp>

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

using namespace pipescope;
using nlohmann::json;
namespace ws = pipescope::workloads;

namespace {

// The graph program a trace_session records when `w` runs under `request`.
json session_program(scheduler& s, const ws::workload& w, ws::run_request request) {
    const auto path = std::filesystem::temp_directory_path() / ("pipescope-graph-metadata-" + request.policy + ".pftrace");
    std::filesystem::remove(path);
    {
        trace_session session(s, path, {.name = w.name()});
        const ws::run_report report = w.run(s, request);
        REQUIRE(report.matches_reference);
    }
    const trace::trace_model m = trace::load_trace_file(path);
    std::filesystem::remove(path);
    for (const trace::run& r : m.runs)
        if (r.program_kind == trace::vocab::graph_program) return json::parse(r.metadata_json)["program"];
    FAIL("the session recorded no stage graph");
    return {};
}

}   // namespace

TEST_CASE("pipescope run and a trace_session describe a workload's stage graph alike", "[graph][metadata]") {
    const ws::workload& w = *ws::find_workload("histogram");
    for (const auto& p : graph::policies()) {
        INFO("policy " << p.name);
        scheduler s({2});
        recording::run_args args;
        args.workload = w.name();
        args.request.policy = p.name;
        args.request.size = ws::input_size::tiny;
        const json from_cli = json::parse(recording::run_metadata(s, args, w, 0))["program"];
        const json from_session = session_program(s, w, args.request);

        CHECK(from_cli["kind"] == trace::vocab::graph_program);
        CHECK(from_cli["kind"] == from_session["kind"]);
        CHECK(from_cli["queues"] == from_session["queues"]);
        CHECK(from_cli["footprint"] == from_session["footprint"]);
        // The stages alike but for the notes, which (like the shape) are the workload's words.
        REQUIRE(from_cli["stages"].size() == from_session["stages"].size());
        for (std::size_t j = 0; j < from_cli["stages"].size(); ++j) {
            json cli_stage = from_cli["stages"][j], session_stage = from_session["stages"][j];
            cli_stage.erase("note");
            session_stage.erase("note");
            CHECK(cli_stage == session_stage);
        }
    }
}
