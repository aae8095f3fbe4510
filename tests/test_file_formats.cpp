// The file formats have one typed struct each, written and read through it: pipescope-run/1
// (trace/run_metadata.hpp) and pipescope-lesson/1 (analysis/lesson_file.hpp). A struct written and
// read back is the same struct; what the writers write reads back without a problem and writes
// out to the same bytes; a reader names each field it leaves out.
#include <pipescope/analysis/lesson_file.hpp>
#include <pipescope/recording/recording.hpp>

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/run_metadata.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace pipescope;
namespace ws = pipescope::workloads;

namespace {

// A document with every member set.
trace::run_metadata full_metadata() {
    trace::run_metadata m;
    m.workload = "mergesort";
    m.policy = "gramps";
    m.workers = 16;
    m.size = "tiny";
    m.seed = 7;
    m.recorded_by = "pipescope run";
    m.reference_seconds = 0.0125;
    m.params = {"K=2", "queue=4"};
    m.trace = trace::run_trace_settings{.detail = "auto", .fold_below_ns = 2000, .counter_quantum_ns = 1000};
    trace::run_program p{.kind = "graph", .shape = "a stage graph of 2 stages and 1 queues"};
    p.stages = std::vector<trace::run_stage>{{.index = 0, .name = "split", .kind = "serial", .note = "reads"},
                                             {.index = 1, .name = "sort", .kind = "parallel", .threads = 3}};
    p.queues = std::vector<trace::run_queue>{{.index = 0,
                                              .name = "runs",
                                              .element_bytes = 8,
                                              .packet_elements = 32,
                                              .capacity_packets = 16,
                                              .backward = true,
                                              .producers = {0, 1},
                                              .consumer = 1,
                                              .counter = "queue runs packets"}};
    p.footprint = "sum of queue counters";
    p.K = 4;
    p.lazy_enabling = true;
    p.dependency_folding = false;
    m.program = std::move(p);
    m.machine = trace::run_machine{.cpu = "a CPU", .hardware_threads = 2, .kernel = "Linux"};
    trace::run_virtual v{.workers = 16, .job_costs = "virtual_work only", .costs_ns = trace::cost_table{{"steal", 250}}};
    v.calibration = trace::calibration_use{};   // none found: null
    v.cost_file = trace::cost_file_use{"costs.json", {{"steal", 300}}};
    v.params_ns = trace::cost_table{{"wake", 77}};
    v.node_costs = trace::node_costs_use{.recording = trace::node_cost_recording{"a.pftrace", "mergesort · gramps · P=2",
                                                                                 "gramps", 10, 2, 12345},
                                         .charged = "each node from the cost source"};
    m.virtual_run = std::move(v);
    m.other["comment"] = R"({"from":"another writer"})";
    return m;
}

}   // namespace

TEST_CASE("pipescope-run/1: a struct written and read back is the same struct", "[file_formats][metadata]") {
    const trace::run_metadata m = full_metadata();
    std::vector<std::string> problems;
    const auto back = trace::run_metadata_from_json(trace::to_json(m), &problems);
    REQUIRE(back);
    CHECK(problems.empty());
    CHECK(*back == m);
    CHECK(trace::to_json(*back) == trace::to_json(m));

    // A calibration file, where the one above had none; a run with no "virtual" at all.
    trace::run_metadata c = m;
    c.virtual_run->calibration = trace::calibration_use{trace::cost_file_use{"calibration.json", {{"yield", 400}}}};
    CHECK(trace::run_metadata_from_json(trace::to_json(c)) == c);
    trace::run_metadata plain;
    plain.workload = "w";
    CHECK(trace::run_metadata_from_json(trace::to_json(plain)) == plain);
    CHECK(trace::to_json(plain) == R"({"format":"pipescope-run/1","params":[],"policy":"","workload":"w"})");
}

TEST_CASE("pipescope-run/1: what pipescope run and a trace_session write reads back to the same bytes",
          "[file_formats][metadata]") {
    for (const char* workload : {"pipe-fib", "ferret", "mergesort"}) {
        for (const char* policy : {"piper", "bind-to-stage", "danbi"}) {
            const ws::workload& w = *ws::find_workload(workload);
            if (!w.cannot_run_under(policy).empty()) continue;
            INFO(workload << " under " << policy);
            scheduler s({2});
            recording::run_args args;
            args.workload = w.name();
            args.request.policy = policy;
            args.request.size = ws::input_size::tiny;
            args.params = {"K=3"};
            const std::string written = recording::run_metadata(s, args, w, 0.25);
            std::vector<std::string> problems;
            const auto read = trace::run_metadata_from_json(written, &problems);
            REQUIRE(read);
            CHECK(problems.empty());
            CHECK(read->workload == workload);
            CHECK(read->reference_seconds == 0.25);
            CHECK(read->params == std::vector<std::string>{"K=3"});
            REQUIRE(read->program);
            REQUIRE(read->program->stages);
            CHECK_FALSE(read->program->stages->empty());
            CHECK(trace::to_json(*read) == written);
        }
    }
    // The runtime's own description of a pipe_while (a trace_session's "program").
    pipeline_options o;
    o.policy = "bind-to-stage";
    o.stage_names = {"read", "work", "write"};
    o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order};
    const std::string program = pipeline_program_json(o, 4);
    const auto read = trace::run_program_from_json(program);
    REQUIRE(read);
    CHECK(*read == pipeline_program(o, 4));
    CHECK(read->c == 4u);
    CHECK_FALSE(read->K);
    CHECK(trace::to_json(*read) == program);
}

TEST_CASE("pipescope-run/1: the reader keeps what it can and names what it leaves out", "[file_formats][metadata]") {
    std::vector<std::string> problems;
    CHECK_FALSE(trace::run_metadata_from_json("[1, 2]", &problems));
    CHECK(problems == std::vector<std::string>{"metadata: not a JSON object"});

    problems.clear();
    const auto m = trace::run_metadata_from_json(
        R"({"workers": -2, "policy": 3, "params": {"K": 2, "name": "x"}, "T_S": 1.5,
            "program": {"K": 4.0, "c": 2.5, "stages": [{"index": 1, "name": "stage 1"}, 7, {"threads": "x"}],
                        "queues": [{"producers": [0, -1], "consumer": 1}]},
            "virtual": {"workers": 4, "calibration": null, "costs_ns": {"steal": -1, "wake": 5}}})",
        &problems);
    REQUIRE(m);
    CHECK_FALSE(m->workers);
    CHECK(m->policy.empty());
    CHECK(m->params == std::vector<std::string>{"K=2", "name=x"});
    CHECK(m->reference_seconds == 1.5);   // an older name of it
    REQUIRE(m->program);
    CHECK(m->program->K == 4u);   // a whole number written as a float
    CHECK_FALSE(m->program->c);
    REQUIRE(m->program->stages);
    REQUIRE(m->program->stages->size() == 2);
    CHECK((*m->program->stages)[0].index == 1u);
    CHECK_FALSE((*m->program->stages)[1].threads);
    REQUIRE(m->program->queues);
    CHECK((*m->program->queues)[0].producers == std::vector<std::uint64_t>{0});
    REQUIRE(m->virtual_run);
    CHECK(m->virtual_run->calibration == trace::calibration_use{});
    CHECK(m->virtual_run->costs_ns == trace::cost_table{{"wake", 5}});
    CHECK(problems == std::vector<std::string>{
                          "policy: expected a string, got 3",
                          "workers: expected a whole number, got -2",
                          "program.stages[1]: expected an object, got 7",
                          "program.stages[2].threads: expected a whole number, got a string",
                          "program.queues[0].producers[1]: expected a whole number, got -1",
                          "program.c: expected a whole number, got 2.5",
                          "virtual.costs_ns.steal: expected a whole number, got -1",
                      });
}

namespace {

analysis::lesson_file full_lesson() {
    analysis::lesson_file l{.name = "imbalance", .title = "A title", .seeds = "000 §2.1", .size = "small", .workers = 2};
    l.runs.push_back({.key = "bts",
                      .workload = "ferret",
                      .policy = "bind-to-stage",
                      .params = {"stages=6"},
                      .workers = 4,
                      .virtual_time = true,
                      .size = "tiny",
                      .trace = "bts.pftrace"});
    l.refusals.push_back({"x264", "x264", "tbb", "waits across iterations"});
    l.findings.push_back({"ratio", "idle ratio", 3.4, "3.4×", "§4: 3×", true, ""});
    l.findings.push_back({"none", "not measured", std::nullopt, "—", "", false, "only 2 cores"});
    l.steps.push_back({"Look", "At the timeline.", {.view = "timeline"}});
    l.steps.push_back(
        {"Zoom",
         "There.",
         {.view = "dag", .cursor = 0.4, .range = std::pair{0.1, 0.3}, .select = std::pair{12u, 3u}, .align_runs = false}});
    return l;
}

}   // namespace

TEST_CASE("pipescope-lesson/1: a struct written and read back is the same struct", "[file_formats][lesson]") {
    const analysis::lesson_file l = full_lesson();
    const nlohmann::json j = analysis::to_json(l);
    CHECK(j["format"] == analysis::lesson_format);
    CHECK(j["runs"][0]["virtual"] == true);
    CHECK(j["findings"][1]["value"].is_null());
    CHECK(analysis::lesson_from_json(j) == l);
    CHECK(analysis::lesson_from_json(nlohmann::json::parse(j.dump(2))) == l);

    // A value that is not a number is written to the file as null and read back as none.
    analysis::lesson_file nan = l;
    nan.findings[0].value = std::nan("");
    CHECK_FALSE(analysis::lesson_from_json(nlohmann::json::parse(analysis::to_json(nan).dump())).findings[0].value);

    nlohmann::json bad = j;
    bad["steps"][1]["range"] = {0.3, 0.3};
    CHECK_THROWS_WITH(analysis::lesson_from_json(bad), "steps[1].range: expected a < b, got [0.3,0.3]");
    bad = j;
    bad["format"] = "pipescope-lesson/0";
    CHECK_THROWS_WITH(analysis::lesson_from_json(bad), Catch::StartsWith("format: expected \"pipescope-lesson/1\""));
}
