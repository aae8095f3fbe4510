// Stories as data (lesson.hpp): the tables of text filled in with the measured values.
#include <pipescope/lessons/lesson.hpp>

#include <stdexcept>

namespace pipescope::lessons {

story tell_story(std::span<const finding_text> findings, std::span<const finding_measure> measured,
                 std::span<const step_text> steps, const story_values& values) {
    if (findings.size() != measured.size())
        throw std::logic_error("tell_story: " + std::to_string(findings.size()) + " findings written, " +
                               std::to_string(measured.size()) + " measured");
    auto fill = [&](const char* text) { return fmt::vformat(text, values); };
    story s;
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const finding_text& f = findings[i];
        const finding_measure& m = measured[i];
        if (std::string_view(f.name) != m.name)
            throw std::logic_error(std::string("tell_story: finding ") + f.name + " measured as " + m.name);
        s.findings.push_back({f.name, fill(f.what), m.value, m.shown, fill(f.paper), m.holds, fill(f.why_not)});
    }
    for (const step_text& st : steps) s.steps.push_back({st.title, fill(st.text), st.move});
    return s;
}

}   // namespace pipescope::lessons
