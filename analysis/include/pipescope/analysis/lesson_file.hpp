// pipescope-lesson/1: the lesson.json that `pipescope lesson NAME` writes next to the traces it
// recorded (lessons/src/runner.cpp, to_json) and the viewer's lesson panel reads back
// (viewer/model/lesson.cpp, lesson_from_json; docs/viewer.md "Lesson panel"). One typed value for
// both, here because the viewer cannot include lessons/; scaling.hpp's pipescope-scale/1 is the model.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pipescope::analysis {

inline constexpr const char* lesson_format = "pipescope-lesson/1";

// A recording of the lesson: `pipescope run WORKLOAD --policy POLICY --param ...` into `trace`.
struct lesson_run {
    std::string key, workload, policy;
    std::vector<std::string> params;   // "key=value"
    unsigned workers = 0;              // 0: not given
    bool virtual_time = false;         // "virtual": on `workers` virtual workers
    std::string size;
    std::string trace;   // the trace's file name, relative to the lesson file's directory (or absolute)
    bool operator==(const lesson_run&) const = default;
};

// A program the lesson shows a policy refusing ("" reason: accepted).
struct lesson_refusal {
    std::string key, workload, policy, reason;
    bool operator==(const lesson_refusal&) const = default;
};

// One measured fact, next to what the paper reports.
struct lesson_finding {
    std::string name, what;
    std::optional<double> value;   // written as null when not a number
    std::string shown;             // the value as the story prints it, e.g. "3.4×"
    std::string paper;             // what the paper found
    bool holds = false;
    std::string why_not;   // when it does not hold: why
    bool operator==(const lesson_finding&) const = default;
};

// Where a step puts the viewer. Times are fractions of the document's span, in [0, 1].
struct lesson_move {
    std::string view;
    std::optional<double> cursor;
    std::optional<std::pair<double, double>> range;                  // a < b
    std::optional<std::pair<std::uint64_t, std::uint64_t>> select;   // pipeline node (iteration, stage)
    std::optional<bool> align_runs;   // absent: the viewer's default (aligned when several files)
    bool operator==(const lesson_move&) const = default;
};

struct lesson_step {
    std::string title, text;
    lesson_move move;
    bool operator==(const lesson_step&) const = default;
};

struct lesson_file {
    std::string name, title, seeds, size;
    unsigned workers = 0;
    std::vector<lesson_run> runs;
    std::vector<lesson_refusal> refusals;
    std::vector<lesson_finding> findings;
    std::vector<lesson_step> steps;   // at least one
    bool operator==(const lesson_file&) const = default;
};

nlohmann::json to_json(const lesson_file& l);
// Throws std::runtime_error naming the field and what is wrong with it ("steps[2].range: expected
// a < b, got [0.3,0.3]", "format: missing", "the file: expected an object, got an array"): a wrong
// format, a missing or wrong-typed field, an empty trace path, a fraction outside [0, 1], a range
// with a >= b, no steps. A field that may be left out may also be null.
lesson_file lesson_from_json(const nlohmann::json& j);

}   // namespace pipescope::analysis
