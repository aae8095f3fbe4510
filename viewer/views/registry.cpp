#include "view.hpp"

#include <array>

namespace pipescope::viewer {

std::unique_ptr<view> make_timeline_view();      // timeline_view.cpp
std::unique_ptr<view> make_dag_view();           // dag_view.cpp
std::unique_ptr<view> make_compare_view();       // compare_view.cpp
std::unique_ptr<view> make_breakdown_view();     // breakdown_view.cpp
std::unique_ptr<view> make_explain_view();       // explain_view.cpp
std::unique_ptr<view> make_stage_graph_view();   // stage_graph_view.cpp
std::unique_ptr<view> make_scaling_view();       // scaling_view.cpp
std::unique_ptr<view> make_stats_view();         // stats_view.cpp

// One line per view: {name for --view, menu title, factory}.
static const std::array registry{
    view_entry{"timeline", "Timeline", &make_timeline_view},
    view_entry{"dag", "Pipeline DAG", &make_dag_view},
    view_entry{"compare", "Compare runs", &make_compare_view},
    view_entry{"breakdown", "Time breakdown", &make_breakdown_view},
    view_entry{"explain", "Explain (analysis)", &make_explain_view},
    view_entry{"graph", "Stage graph", &make_stage_graph_view},
    view_entry{"scaling", "Scaling (sweep)", &make_scaling_view},
    view_entry{"stats", "Statistics", &make_stats_view},
};

std::span<const view_entry> view_registry() { return registry; }

const view_entry* find_view(std::string_view name) {
    for (const auto& e : registry)
        if (name == e.name) return &e;
    return nullptr;
}

}   // namespace pipescope::viewer
