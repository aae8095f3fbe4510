// The views' common interface. A view is one file in viewer/views/ with a class deriving from
// `view` and a factory; registering it is one line in registry.cpp (see docs/viewer.md).
#pragma once

#include "../model/document.hpp"
#include "../model/lesson.hpp"
#include "../model/view_state.hpp"

#include <imgui.h>

#include <memory>
#include <span>

namespace pipescope::viewer {

struct view_context {
    const document& doc;
    view_state& state;
    ImFont* mono = nullptr;   // monospace font for numbers (may be nullptr: use the default)
};

class view {
public:
    virtual ~view() = default;
    // Draws into the current ImGui window's remaining content region.
    virtual void draw(view_context& ctx) = 0;
};

struct view_entry {
    const char* name;    // command-line name (--view NAME)
    const char* title;   // menu title
    std::unique_ptr<view> (*make)();
};
std::span<const view_entry> view_registry();
const view_entry* find_view(std::string_view name);

// Panels drawn beside/over every view (one file each).
void draw_details_panel(view_context& ctx);
// The area selection's part of the details panel (area_panel.cpp); nothing without an area.
void draw_area_panel(view_context& ctx);
void draw_help_overlay(view_context& ctx);
// The lesson panel (lesson_panel.cpp): the lesson's current step, findings and refusals, with Prev /
// Next (Page Up / Page Down). Returns the step to go to: `step` itself when nothing was asked. `note`
// is what went wrong applying the step's move (e.g. its node is in no run), shown under its text.
std::size_t draw_lesson_panel(view_context& ctx, const lesson& l, std::size_t step, const std::string& note);

}   // namespace pipescope::viewer
