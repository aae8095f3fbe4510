// A lesson as the viewer's lesson panel shows it: the lesson.json that `pipescope lesson NAME`
// writes next to the traces it recorded (format "pipescope-lesson/1", docs/viewer.md "Lesson
// panel"), and where each step puts the viewer. Pure C++ (no ImGui), unit-tested in tests/viewer.
#pragma once

#include "document.hpp"
#include "view_state.hpp"

#include <pipescope/analysis/lesson_file.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipescope::viewer {

inline constexpr std::string_view lesson_format = analysis::lesson_format;

// A lesson file that cannot be used; what() names the file and the field ("lesson.json: steps[2].range: ...").
struct lesson_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The file's parts, as the format defines them (analysis/lesson_file.hpp).
using lesson_run = analysis::lesson_run;
using lesson_refusal = analysis::lesson_refusal;
using lesson_finding = analysis::lesson_finding;
using lesson_move = analysis::lesson_move;
using lesson_step = analysis::lesson_step;

// A lesson file as loaded: what it says, where it is, and where each run's trace is.
struct lesson : analysis::lesson_file {
    std::filesystem::path file;                       // the lesson.json
    std::vector<std::filesystem::path> trace_paths;   // runs[i].trace resolved against the file's directory
};

// Tells whether a view name exists (the app passes its view registry; the model does not know it).
using view_name_check = std::function<bool(std::string_view)>;

// Parses the text of `file` (named in errors; trace paths are resolved against its directory).
// Throws lesson_error on malformed JSON, a wrong format, a missing or wrong-typed field, a
// fraction outside [0, 1], a range with a >= b, or (if known_view is given) an unknown view.
lesson parse_lesson(std::string_view json_text, const std::filesystem::path& file, const view_name_check& known_view = {});
// Reads and parses `file`; an unreadable file is a lesson_error too.
lesson load_lesson(const std::filesystem::path& file, const view_name_check& known_view = {});

// Whether `file` looks like a lesson (a .json whose "format" names the pipescope-lesson format),
// so that opening, dropping or passing it on the command line opens the lesson, not a trace.
bool looks_like_lesson(const std::filesystem::path& file);

// Length of the display axis (ns): the document's span, or the longest run's when runs are
// aligned to their own starts (as view_state::request_frame_all frames it). At least 1.
double display_span(const document& d, bool aligned);

// A fraction of the display axis in display ns: 0 = the axis' start, 1 = its end.
inline double fraction_to_display(const document& d, bool aligned, double f) { return f * display_span(d, aligned); }

// What a step's move comes to on a loaded document. Every step sets everything, so a step looks
// the same whichever step came before it (Prev, Next, --lesson-step K).
struct resolved_move {
    std::string view;
    bool align_runs = false;
    std::optional<double> cursor;            // display ns; unset: the views put it halfway
    std::pair<double, double> frame{0, 1};   // display range for the timeline
    selection sel;                           // invalid: nothing selected
    std::string problem;                     // e.g. the node to select is in no run (the move still applies)
};
resolved_move resolve_move(const document& d, const lesson_move& m, bool default_align);

}   // namespace pipescope::viewer
