// Running a lesson inside the test suite: small sizes, traces in the build tree, and lookups of
// the findings by name. Each lesson's test asserts its finding from the traces (counts and ratios,
// never a wall-clock time on its own).
#pragma once

#include <pipescope/lessons/runner.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace lesson_test {

inline pipescope::lessons::lesson_result run(const std::string& name, unsigned workers = 2,
                                             const std::string& size = "small") {
    const pipescope::lessons::lesson* l = pipescope::lessons::find_lesson(name);
    REQUIRE(l != nullptr);
    const std::filesystem::path dir = std::filesystem::path(PIPESCOPE_LESSON_TEST_DIR) / name;
    std::filesystem::remove_all(dir);
    auto r = pipescope::lessons::run_lesson(*l, {workers, size}, dir);
    // Every lesson tells its story in at least four steps: look, the paper, this run, try next.
    CHECK(r.told.steps.size() >= 4);
    CHECK(std::filesystem::exists(r.json_path));
    return r;
}

inline const pipescope::lessons::finding& finding(const pipescope::lessons::lesson_result& r, const std::string& name) {
    for (const auto& f : r.told.findings)
        if (f.name == name) return f;
    throw std::out_of_range("the lesson has no finding named " + name);
}

}   // namespace lesson_test
