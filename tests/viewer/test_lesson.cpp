// The lesson file (model/lesson.hpp): parsing lesson.json as `pipescope lesson` writes it, the
// errors on malformed input (each naming the file and the field), and where a step's move puts the
// viewer on a loaded document.
#include <catch2/catch.hpp>

#include "support.hpp"

#include <model/lesson.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace pipescope::viewer;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const fs::path traces_dir = fs::path(PIPESCOPE_SOURCE_DIR) / "traces";

json good_lesson() {
    return json::parse(R"({
      "format": "pipescope-lesson/1", "name": "imbalance", "title": "Bind-to-stage idles where work stealing does not",
      "seeds": "000 §2.1, §4.1, Tables 1–2", "workers": 2, "size": "small",
      "runs": [
        {"key": "bind-to-stage", "workload": "ferret", "policy": "bind-to-stage", "params": ["stages=6"], "workers": 2,
         "size": "small", "trace": "bind-to-stage.pftrace"},
        {"key": "piper", "workload": "ferret", "policy": "piper", "params": [], "workers": 2, "size": "small",
         "trace": "/abs/piper.pftrace"}
      ],
      "refusals": [{"key": "tbb", "workload": "x264", "policy": "tbb", "reason": "x264 waits across iterations"}],
      "findings": [{"name": "idle_ratio", "what": "idle time, bind-to-stage / work stealing", "value": 3.4, "shown": "3.4×",
                    "paper": "Table 2: 2.9×", "holds": true, "why_not": ""},
                   {"name": "speedup", "what": "speedup", "value": null, "shown": "1.1×", "paper": "6×", "holds": false,
                    "why_not": "only 2 cores"}],
      "steps": [
        {"title": "What to look at", "text": "The idle grey.", "view": "compare"},
        {"title": "The paper", "text": "…", "view": "timeline", "cursor": 0.4, "range": [0.1, 0.3], "select": [12, 3],
         "align_runs": false},
        {"title": "Try next", "text": "…", "view": "dag", "cursor": null, "range": null, "select": null, "align_runs": true}
      ]})");
}

lesson parse(const json& j, const view_name_check& views = {}) {
    return parse_lesson(j.dump(), "/tmp/l/lesson.json", views);
}

// The message of the lesson_error that parsing `j` throws ("" if it parses).
std::string error_of(const json& j, const view_name_check& views = {}) {
    try {
        parse(j, views);
    } catch (const lesson_error& e) {
        return e.what();
    }
    return "";
}

}   // namespace

TEST_CASE("a lesson file parses into its runs, refusals, findings and steps", "[viewer][lesson]") {
    const lesson l = parse(good_lesson());
    CHECK(l.name == "imbalance");
    CHECK(l.title == "Bind-to-stage idles where work stealing does not");
    CHECK(l.seeds == "000 §2.1, §4.1, Tables 1–2");
    CHECK(l.workers == 2);
    CHECK(l.size == "small");
    REQUIRE(l.runs.size() == 2);
    CHECK(l.runs[0].key == "bind-to-stage");
    CHECK(l.runs[0].workload == "ferret");
    CHECK(l.runs[0].params == std::vector<std::string>{"stages=6"});
    CHECK(l.runs[0].trace == "bind-to-stage.pftrace");
    CHECK(l.trace_paths[0] == fs::path("/tmp/l/bind-to-stage.pftrace"));   // relative to the lesson's directory
    CHECK(l.trace_paths[1] == fs::path("/abs/piper.pftrace"));             // absolute stays
    REQUIRE(l.refusals.size() == 1);
    CHECK(l.refusals[0].policy == "tbb");
    CHECK(l.refusals[0].reason == "x264 waits across iterations");
    REQUIRE(l.findings.size() == 2);
    CHECK(l.findings[0].value == Approx(3.4));
    CHECK(l.findings[0].shown == "3.4×");
    CHECK(l.findings[0].holds);
    CHECK_FALSE(l.findings[1].value);
    CHECK_FALSE(l.findings[1].holds);
    CHECK(l.findings[1].why_not == "only 2 cores");
    REQUIRE(l.steps.size() == 3);
    CHECK(l.steps[0].move.view == "compare");
    CHECK_FALSE(l.steps[0].move.cursor);
    CHECK_FALSE(l.steps[0].move.range);
    CHECK_FALSE(l.steps[0].move.select);
    CHECK_FALSE(l.steps[0].move.align_runs);   // absent: the document's default
    CHECK(l.steps[1].move.cursor == Approx(0.4));
    REQUIRE(l.steps[1].move.range);
    CHECK(l.steps[1].move.range->first == Approx(0.1));
    CHECK(l.steps[1].move.range->second == Approx(0.3));
    CHECK(l.steps[1].move.select == std::pair<std::uint64_t, std::uint64_t>{12, 3});
    CHECK(l.steps[1].move.align_runs == false);
    // null stands for absent in the optional fields.
    CHECK_FALSE(l.steps[2].move.cursor);
    CHECK_FALSE(l.steps[2].move.range);
    CHECK_FALSE(l.steps[2].move.select);
    CHECK(l.steps[2].move.align_runs == true);
}

TEST_CASE("the viewer reads the lesson file as the lessons write it (analysis/lesson_file.hpp)", "[viewer][lesson]") {
    pipescope::analysis::lesson_file f{.name = "n", .title = "t", .seeds = "s", .size = "tiny", .workers = 2};
    f.runs.push_back({.key = "a", .workload = "ferret", .policy = "piper", .virtual_time = true, .trace = "a.pftrace"});
    f.findings.push_back({"x", "what", 1.5, "1.5×", "paper", true, ""});
    f.steps.push_back({"Look", "text", {.view = "timeline", .cursor = 0.5, .align_runs = true}});
    const lesson l = parse_lesson(pipescope::analysis::to_json(f).dump(2), "/tmp/l/lesson.json");
    CHECK(static_cast<const pipescope::analysis::lesson_file&>(l) == f);
    CHECK(l.trace_paths == std::vector<fs::path>{"/tmp/l/a.pftrace"});
}

TEST_CASE("the optional parts of a lesson may be left out", "[viewer][lesson]") {
    json j = good_lesson();
    for (const char* k : {"seeds", "workers", "size", "refusals", "findings"}) j.erase(k);
    j["runs"][0] = json{{"key", "a"}, {"trace", "a.pftrace"}};
    const lesson l = parse(j);
    CHECK(l.seeds.empty());
    CHECK(l.workers == 0);
    CHECK(l.refusals.empty());
    CHECK(l.findings.empty());
    CHECK(l.runs[0].params.empty());
    CHECK(l.runs[0].workload.empty());
}

TEST_CASE("malformed lesson files are refused naming the file and the field", "[viewer][lesson]") {
    auto with = [](auto change) {
        json j = good_lesson();
        change(j);
        return error_of(j);
    };
    CHECK(error_of(good_lesson()).empty());

    SECTION("not JSON") {
        std::string e;
        try {
            parse_lesson("{\"format\": ", "/tmp/l/lesson.json");
        } catch (const lesson_error& x) {
            e = x.what();
        }
        CHECK_THAT(e, Catch::StartsWith("/tmp/l/lesson.json: not valid JSON: parse error"));
    }
    SECTION("not an object") {
        CHECK(error_of(json::array()) == "/tmp/l/lesson.json: the file: expected an object, got an array");
    }
    SECTION("another format") {
        CHECK_THAT(with([](json& j) { j["format"] = "pipescope-lesson/2"; }),
                   Catch::StartsWith(
                       "/tmp/l/lesson.json: format: expected \"pipescope-lesson/1\", got \"pipescope-lesson/2\""));
    }
    SECTION("missing fields") {
        CHECK(with([](json& j) { j.erase("format"); }) == "/tmp/l/lesson.json: format: missing");
        CHECK(with([](json& j) { j.erase("title"); }) == "/tmp/l/lesson.json: title: missing");
        CHECK(with([](json& j) { j.erase("steps"); }) == "/tmp/l/lesson.json: steps: missing");
        CHECK(with([](json& j) { j.erase("runs"); }) == "/tmp/l/lesson.json: runs: missing");
        CHECK(with([](json& j) { j["runs"][1].erase("trace"); }) == "/tmp/l/lesson.json: runs[1].trace: missing");
        CHECK(with([](json& j) { j["steps"][2].erase("view"); }) == "/tmp/l/lesson.json: steps[2].view: missing");
        CHECK(with([](json& j) { j["steps"][0].erase("text"); }) == "/tmp/l/lesson.json: steps[0].text: missing");
        CHECK(with([](json& j) { j["findings"][0].erase("holds"); }) == "/tmp/l/lesson.json: findings[0].holds: missing");
        CHECK(with([](json& j) { j["refusals"][0].erase("reason"); }) == "/tmp/l/lesson.json: refusals[0].reason: missing");
    }
    SECTION("wrong types") {
        CHECK(with([](json& j) { j["title"] = 3; }) == "/tmp/l/lesson.json: title: expected a string, got a number");
        CHECK(with([](json& j) { j["steps"] = json::object(); }) ==
              "/tmp/l/lesson.json: steps: expected an array, got an object");
        CHECK(with([](json& j) { j["steps"][1] = "x"; }) ==
              "/tmp/l/lesson.json: steps[1]: expected an object, got a string");
        CHECK(with([](json& j) {
                  j["runs"][0]["params"] = json::array({"a=1", 2});
              }) == "/tmp/l/lesson.json: runs[0].params[1]: expected a string, got a number");
        CHECK(with([](json& j) { j["runs"][0]["workers"] = -1; }) ==
              "/tmp/l/lesson.json: runs[0].workers: expected a non-negative integer, got -1");
        CHECK(with([](json& j) { j["findings"][1]["holds"] = "yes"; }) ==
              "/tmp/l/lesson.json: findings[1].holds: expected true or false, got a string");
        CHECK(with([](json& j) { j["steps"][1]["cursor"] = "0.4"; }) ==
              "/tmp/l/lesson.json: steps[1].cursor: expected a number, got a string");
        CHECK(with([](json& j) { j["steps"][1]["align_runs"] = 1; }) ==
              "/tmp/l/lesson.json: steps[1].align_runs: expected true or false, got a number");
        CHECK(with([](json& j) { j["steps"][1]["select"] = json::array({12}); }) ==
              "/tmp/l/lesson.json: steps[1].select: expected [iteration, stage]: two non-negative integers, got [12]");
        CHECK(with([](json& j) {
                  j["steps"][1]["select"] = json::array({12, -3});
              }) ==
              "/tmp/l/lesson.json: steps[1].select: expected [iteration, stage]: two non-negative integers, got [12,-3]");
        CHECK(with([](json& j) {
                  j["steps"][1]["range"] = json::array({0.1, "x"});
              }) ==
              "/tmp/l/lesson.json: steps[1].range: expected [a, b]: two fractions of the document's span, got [0.1,\"x\"]");
    }
    SECTION("fractions outside [0, 1] and empty ranges") {
        CHECK(with([](json& j) { j["steps"][1]["cursor"] = 1.5; }) ==
              "/tmp/l/lesson.json: steps[1].cursor: expected a fraction of the document's span in [0, 1], got 1.5");
        CHECK(with([](json& j) { j["steps"][1]["cursor"] = -0.1; }) ==
              "/tmp/l/lesson.json: steps[1].cursor: expected a fraction of the document's span in [0, 1], got -0.1");
        CHECK(with([](json& j) {
                  j["steps"][1]["range"] = json::array({0.2, 1.2});
              }) == "/tmp/l/lesson.json: steps[1].range: fractions of the document's span must be in [0, 1], got [0.2,1.2]");
        CHECK(with([](json& j) {
                  j["steps"][1]["range"] = json::array({0.3, 0.3});
              }) == "/tmp/l/lesson.json: steps[1].range: expected a < b, got [0.3,0.3]");
        CHECK(with([](json& j) {
                  j["steps"][1]["range"] = json::array({0.5, 0.2});
              }) == "/tmp/l/lesson.json: steps[1].range: expected a < b, got [0.5,0.2]");
    }
    SECTION("no steps, an empty trace path") {
        CHECK(with([](json& j) { j["steps"] = json::array(); }) ==
              "/tmp/l/lesson.json: steps: empty: a lesson has at least one step");
        CHECK(with([](json& j) { j["runs"][0]["trace"] = ""; }) == "/tmp/l/lesson.json: runs[0].trace: empty path");
    }
    SECTION("an unknown view, when the app says which exist") {
        const view_name_check views = [](std::string_view v) { return v == "timeline" || v == "dag" || v == "compare"; };
        CHECK(error_of(good_lesson(), views).empty());
        json j = good_lesson();
        j["steps"][2]["view"] = "flamegraph";
        CHECK(error_of(j, views) == "/tmp/l/lesson.json: steps[2].view: unknown view \"flamegraph\"");
    }
}

TEST_CASE("an unreadable lesson file is an error naming it", "[viewer][lesson]") {
    const fs::path missing = fs::temp_directory_path() / "pipescope-no-such-dir" / "lesson.json";
    CHECK_THROWS_WITH(load_lesson(missing), missing.string() + ": cannot be read (no such file, or no permission)");
    CHECK_THROWS_WITH(load_lesson(fs::temp_directory_path()), Catch::Contains("is a directory"));
    const fs::path tmp = fs::temp_directory_path() / "pipescope-test-lesson.json";
    { std::ofstream(tmp) << good_lesson().dump(2); }
    const lesson l = load_lesson(tmp);
    CHECK(l.file == tmp);
    CHECK(l.trace_paths[0] == tmp.parent_path() / "bind-to-stage.pftrace");
    fs::remove(tmp);
}

TEST_CASE("a lesson file is told apart from traces and other JSON by its format", "[viewer][lesson]") {
    const fs::path source = PIPESCOPE_SOURCE_DIR;
    CHECK(looks_like_lesson(source / "tests/data/lesson/lesson.json"));
    CHECK_FALSE(looks_like_lesson(traces_dir / "pipe-fib-256-piper.pftrace"));   // not .json
    const fs::path other = fs::temp_directory_path() / "pipescope-test-not-a-lesson.json";
    { std::ofstream(other) << R"({"traceEvents": [], "format": "chrome"})"; }
    CHECK_FALSE(looks_like_lesson(other));
    fs::remove(other);
    CHECK_FALSE(looks_like_lesson(fs::temp_directory_path() / "pipescope-no-such-dir" / "lesson.json"));
    // The runner writes keys sorted: long findings put "format" far from the start (the imbalance
    // lesson's came after 5 KB, and `pipescope-viewer OUT/lesson.json` opened it as a trace).
    nlohmann::json long_one = good_lesson();
    long_one["findings"][0]["paper"] = std::string(20000, 'x');
    const fs::path late = fs::temp_directory_path() / "pipescope-test-late-format.json";
    { std::ofstream(late) << long_one.dump(2); }
    CHECK(long_one.dump(2).find("pipescope-lesson/") > 16384);
    CHECK(looks_like_lesson(late));
    fs::remove(late);
}

TEST_CASE("a step's fractions become display time on the document's axis", "[viewer][lesson]") {
    // Two files: runs at [1000, 11000) and [50000, 54000) on the absolute clock.
    document d;
    d.add(viewer_test::make_file({{1000, 6000, 0}, {6000, 11000, 1}}));
    d.add(viewer_test::make_file({{50000, 52000, 0}, {52000, 54000, -1}}));
    REQUIRE(d.runs.size() == 2);
    REQUIRE(d.start == 1000);
    REQUIRE(d.end == 54000);
    // Absolute axis: the document's span; aligned: the longest run's.
    CHECK(display_span(d, false) == 53000);
    CHECK(display_span(d, true) == 10000);
    CHECK(fraction_to_display(d, false, 0.0) == 0);
    CHECK(fraction_to_display(d, false, 0.5) == 26500);
    CHECK(fraction_to_display(d, false, 1.0) == 53000);
    CHECK(fraction_to_display(d, true, 0.25) == 2500);

    lesson_move m;
    m.view = "timeline";
    m.cursor = 0.4;
    m.range = std::pair{0.1, 0.3};
    SECTION("align_runs chosen by the step") {
        m.align_runs = false;
        resolved_move r = resolve_move(d, m, true);
        CHECK_FALSE(r.align_runs);
        CHECK(r.cursor == Approx(21200));
        CHECK(r.frame.first == Approx(5300));
        CHECK(r.frame.second == Approx(15900));
        m.align_runs = true;
        r = resolve_move(d, m, false);
        CHECK(r.align_runs);
        CHECK(r.cursor == Approx(4000));
        CHECK(r.frame.first == Approx(1000));
        CHECK(r.frame.second == Approx(3000));
        CHECK(r.view == "timeline");
        CHECK(r.problem.empty());
        CHECK_FALSE(r.sel.valid());
    }
    SECTION("absent align_runs: the document's default") {
        CHECK(resolve_move(d, m, true).align_runs);
        CHECK(resolve_move(d, m, false).cursor == Approx(21200));
    }
    SECTION("no cursor, no range: cursor unset, the whole axis framed") {
        m.cursor.reset();
        m.range.reset();
        const resolved_move r = resolve_move(d, m, true);
        CHECK_FALSE(r.cursor);
        CHECK(r.frame.first == 0);
        CHECK(r.frame.second == 10000);
    }
    SECTION("a node no run has: nothing selected, the problem said, the rest applied") {
        m.select = std::pair<std::uint64_t, std::uint64_t>{12, 3};
        const resolved_move r = resolve_move(d, m, false);
        CHECK_FALSE(r.sel.valid());
        CHECK(r.problem == "no run has pipeline node (iteration 12, stage 3)");
        CHECK(r.cursor == Approx(21200));
        CHECK(r.frame.first == Approx(5300));
    }
}

TEST_CASE("a step selecting a node of a real run selects it and frames it", "[viewer][lesson]") {
    document d;
    d.add(load_file(traces_dir / "pipe-fib-256-piper-K2.pftrace"));
    // A node in the middle of the run (pipe-fib-256's stages past 0 are sparse: take one it has).
    const auto& dag = d.files[0]->model.runs[0].dag;
    REQUIRE(dag.nodes.size() > 1000);
    const auto& mid = dag.nodes[dag.nodes.size() / 2];
    lesson_move m;
    m.view = "dag";
    m.select = std::pair<std::uint64_t, std::uint64_t>{mid.iteration, mid.stage};
    const resolved_move r = resolve_move(d, m, false);
    REQUIRE(r.sel.valid());
    CHECK(r.sel == selection{0, mid.slice});
    CHECK(r.problem.empty());
    // Without a range: the node with twenty times its duration around it, as --select.
    const auto node = selection_range(d, r.sel, false);
    REQUIRE(node);
    const double len = std::max(node->second - node->first, 1.0);
    CHECK(r.frame.second - r.frame.first == Approx(20 * len));
    CHECK((r.frame.first + r.frame.second) / 2 == Approx((node->first + node->second) / 2));
    // With a range, the range wins (the node is still selected).
    m.range = std::pair{0.0, 0.5};
    const resolved_move q = resolve_move(d, m, false);
    CHECK(q.sel == r.sel);
    CHECK(q.frame.first == 0);
    CHECK(q.frame.second == Approx(0.5 * display_span(d, false)));
}
