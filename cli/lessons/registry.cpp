// The lessons, in the order `pipescope lesson --list` shows them (the order of issue 10 / the docs),
// and the helpers they share.
#include "lesson.hpp"

#include <cstdio>
#include <stdexcept>

namespace pipescope::lessons {

// One factory per lesson file (declared here, defined at the bottom of each lesson's file).

std::span<const std::unique_ptr<lesson>> all_lessons() {
    static const auto lessons = [] {
        std::vector<std::unique_ptr<lesson>> v;
        using factory = std::unique_ptr<lesson> (*)();
        const std::vector<factory> factories = {
            // one line per lesson, in the order
        };
        for (factory make : factories) v.push_back(make());
        return v;
    }();
    return lessons;
}

const lesson* find_lesson(std::string_view name) {
    for (const auto& l : all_lessons())
        if (name == l->name()) return l.get();
    return nullptr;
}

const recorded& lesson_data::run(std::string_view key) const {
    for (const auto& r : runs)
        if (r.spec.key == key) return r;
    throw std::out_of_range("lesson has no run named '" + std::string(key) + "'");
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string ratio(double v) { return fixed(v, v >= 10 ? 0 : 1) + "×"; }

std::string percent(double fraction) { return fixed(fraction * 100, 0) + "%"; }

}  // namespace pipescope::lessons
