// The lessons, in the order `pipescope lesson --list` shows them (the order of issue 10 / the docs),
// and the helpers they share.
#include <pipescope/lessons/lesson.hpp>

#include <stdexcept>

namespace pipescope::lessons {

// One factory per lesson file (declared here, defined at the bottom of each lesson's file).
std::unique_ptr<lesson> make_imbalance_lesson();
std::unique_ptr<lesson> make_serial_bottleneck_lesson();
std::unique_ptr<lesson> make_throttling_lesson();
std::unique_ptr<lesson> make_fine_grained_lesson();
std::unique_ptr<lesson> make_earliest_first_lesson();
std::unique_ptr<lesson> make_thundering_herd_lesson();
std::unique_ptr<lesson> make_footprint_lesson();
std::unique_ptr<lesson> make_on_the_fly_lesson();

std::span<const std::unique_ptr<lesson>> all_lessons() {
    static const auto lessons = [] {
        std::vector<std::unique_ptr<lesson>> v;
        using factory = std::unique_ptr<lesson> (*)();
        const std::vector<factory> factories = {
            // one line per lesson, in the order
            make_imbalance_lesson,      make_serial_bottleneck_lesson, make_throttling_lesson, make_fine_grained_lesson,
            make_earliest_first_lesson, make_thundering_herd_lesson,   make_footprint_lesson,  make_on_the_fly_lesson,
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

view_move aligned(std::string view, std::optional<double> cursor, std::optional<std::pair<double, double>> range) {
    view_move m;
    m.view = std::move(view);
    m.cursor = cursor;
    m.range = range;
    m.align_runs = true;
    return m;
}

}   // namespace pipescope::lessons
