// Lessons: each one reproduces a finding of the seed papers live (docs/lessons/). A lesson names
// the runs it needs; the runner (runner.hpp) records them into Perfetto traces, analyzes the traces
// and hands them to the lesson, which measures its finding and tells its story in steps. The story
// goes to the terminal, to lesson.json (read by the viewer's lesson panel) and to the docs.
//
// Adding a lesson: one file in lessons/ with a class deriving from `lesson`, and one line in
// registry.cpp. The measurement reads only the traces (counts and ratios, never a wall-clock time
// on its own), so the test suite can assert it (tests/test_lessons.cpp).
#pragma once

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/report.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <fmt/args.h>
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pipescope::lessons {

// What the command line chose for the whole lesson.
struct options {
    unsigned workers = 2;         // --workers: P for the lesson's runs (a run may fix its own)
    std::string size = "small";   // --size: tiny|small|large
};

// One recording the lesson needs (`pipescope run WORKLOAD --policy POLICY --param ...`), written
// with designated initializers, e.g. {.key = "gramps", .workload = "ray-1", .policy = "gramps"}
// (every member has a default, so the ones left out need not be spelled).
struct run_spec {
    std::string key{};   // the lesson's name for it, e.g. "bind-to-stage" (file: KEY.pftrace)
    std::string workload{}, policy{};
    std::vector<std::string> params{};   // "key=value"
    unsigned workers = 0;                // 0: options::workers
    std::string size{};                  // empty: options::size
    // The recorder's memory budget: large enough that no event is dropped (a lesson counts events).
    std::size_t trace_buffer_mib = 256;
    // Lessons measure the DAG node by node (spans, critical paths, per-stage times), so they record
    // every node unless a run says otherwise (docs/tracing.md, "Detail levels").
    trace::trace_detail detail = trace::trace_detail::nodes;
    // On `workers` virtual workers (docs/virtual.md): the real bodies and policy on more cores than
    // the machine has, in virtual time, each node costing its measured CPU time. A lesson uses it to
    // show a finding that needs 16 or 40 cores; its measurements read the virtual trace like any other.
    bool virtual_time = false;
};

// A program the lesson shows being refused by a policy (the reason is part of the story).
struct refusal_spec {
    std::string key, workload, policy;
};

// A recorded run, as the lesson measures it.
struct recorded {
    run_spec spec;            // workers and size resolved
    std::string trace_file;   // file name inside the lesson's directory
    std::shared_ptr<const trace::trace_model> model;
    analysis::run_report report;   // the analysis of the run (its only run in the file)
};

struct refusal {
    refusal_spec spec;
    std::string reason;   // empty: the policy accepted the program (the lesson says so)
};

struct lesson_data {
    options opts;
    std::vector<recorded> runs;                        // in the order of runs()
    std::vector<refusal> refusals;                     // in the order of refusals()
    const recorded& run(std::string_view key) const;   // throws std::out_of_range naming the key
};

// One measured fact, next to what the paper reports.
struct finding {
    std::string name;   // stable id, e.g. "idle_ratio" (tests and JSON)
    std::string what;   // what was measured, in words
    double value = 0;
    std::string shown;     // the value as the story prints it, e.g. "3.4×"
    std::string paper;     // what the paper found, with its section/figure
    bool holds = false;    // this run shows the paper's finding
    std::string why_not;   // when it does not: the honest reason (e.g. only 2 cores)
};

// Where a step puts the viewer. Times are fractions of the document's span (0 = start, 1 = end)
// so that a step works whatever the run's length.
struct view_move {
    std::string view;                                 // a viewer view: timeline, dag, graph, compare, breakdown, explain
    std::optional<double> cursor;                     // the replay cursor (dag, graph)
    std::optional<std::pair<double, double>> range;   // the visible time range
    std::optional<std::pair<std::uint64_t, std::uint64_t>> select;   // a pipeline node (iteration, stage)
    // Each run at its own start (comparing runs of different lengths) or on the absolute clock;
    // unset: the viewer's default (aligned when the lesson has several traces).
    std::optional<bool> align_runs;
};

struct step {
    std::string title;   // e.g. "What to look at"
    std::string text;    // a few sentences; may quote the measured numbers
    view_move move;
};

struct story {
    std::vector<finding> findings;
    std::vector<step> steps;   // look, the paper, this run, try next (at least these four)
};

class lesson {
public:
    virtual ~lesson() = default;
    virtual const char* name() const = 0;    // command-line name, e.g. "imbalance"
    virtual const char* title() const = 0;   // one line
    virtual const char* seeds() const = 0;   // the paper sections it reproduces, e.g. "000 §2.1, §4.1, Tables 1–2"
    virtual std::vector<run_spec> runs(const options& o) const = 0;
    virtual std::vector<refusal_spec> refusals(const options&) const { return {}; }
    // Measures the finding from the recorded runs and tells the story.
    virtual story tell(const lesson_data& data) const = 0;
};

std::span<const std::unique_ptr<lesson>> all_lessons();
const lesson* find_lesson(std::string_view name);

// A step's move with the runs aligned at their starts (runs of different lengths on one axis).
view_move aligned(std::string view, std::optional<double> cursor = {}, std::optional<std::pair<double, double>> range = {});

// Stories as data. A lesson writes its findings and steps as tables of text in which {name} stands
// for a number it measured; it measures its runs into those named values and into the value, the
// shown text and the verdict of each finding; tell_story puts the two together.
//
//   const finding_text findings[] = {{"idle_ratio", "idle time, {policy}", "§4: ...", "too short a run"}};
//   const step_text steps[] = {{"What to look at", "{policy} idled {idle} of the time.", aligned("timeline")}};
//   story_values v;
//   v.push_back(fmt::arg("policy", "piper"));
//   v.push_back(fmt::arg("idle", percent(0.42)));
//   return tell_story(findings, {{"idle_ratio", 0.42, percent(0.42), true}}, steps, v);
using story_values = fmt::dynamic_format_arg_store<fmt::format_context>;

struct finding_text {
    const char* name;   // finding::name
    const char* what;   // the other fields of finding, with {name} placeholders
    const char* paper;
    const char* why_not;
};

// What the runs measured for a finding: finding_text and finding_measure give one finding each,
// in the same order (tell_story checks the names).
struct finding_measure {
    const char* name;
    double value;
    std::string shown;
    bool holds;
};

struct step_text {
    const char* title;
    const char* text;   // with {name} placeholders
    view_move move;
};

story tell_story(std::span<const finding_text> findings, std::span<const finding_measure> measured,
                 std::span<const step_text> steps, const story_values& values);

// Numbers as every layer writes them (analysis/numbers.hpp): fixed(3.4, 2) "3.40", ratio(3.42)
// "3.4×", percent(0.42) "42 %", percent(0.042, 1) "4.2 %".
using analysis::numbers::fixed;
using analysis::numbers::percent;
using analysis::numbers::ratio;

}   // namespace pipescope::lessons
