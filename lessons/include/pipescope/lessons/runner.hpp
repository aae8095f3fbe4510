// Running a lesson: record its runs into a directory, analyze them, let the lesson measure and tell,
// and write lesson.json for the viewer's lesson panel (schema: docs/viewer.md, "Lesson panel").
#pragma once

#include <pipescope/lessons/lesson.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>
#include <stop_token>

namespace pipescope::lessons {

struct lesson_result {
    lesson_data data;
    story told;
    std::filesystem::path dir;         // where the traces and lesson.json are
    std::filesystem::path json_path;   // dir / "lesson.json"
};

// Records every run of `l` into dir (created if missing; a trace is written whole or not at all),
// analyzes the traces, measures and tells. `progress` gets one line per run (may be nullptr).
// Throws std::runtime_error naming the run when a run fails (its output differs from the serial
// reference, or a stage threw) and std::invalid_argument for a bad option.
lesson_result run_lesson(const lesson& l, const options& o, const std::filesystem::path& dir,
                         std::ostream* progress = nullptr, std::stop_token cancel = {});

nlohmann::json to_json(const lesson& l, const lesson_result& r);
// The story as the terminal shows it: title, runs, steps with their numbers, findings against the paper.
std::string story_text(const lesson& l, const lesson_result& r);

}   // namespace pipescope::lessons
