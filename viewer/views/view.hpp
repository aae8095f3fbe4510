// The views' common interface. A view is one file in viewer/views/ with a class deriving from
// `view` and a factory; registering it is one line in registry.cpp (see docs/viewer.md).
#pragma once

#include "../model/document.hpp"
#include "../model/view_state.hpp"

#include <imgui.h>

#include <memory>
#include <span>

namespace pipescope::viewer {

struct view_context {
    const document& doc;
    view_state& state;
    ImFont* mono = nullptr;      // monospace font for numbers (may be nullptr: use the default)
};

class view {
public:
    virtual ~view() = default;
    // Draws into the current ImGui window's remaining content region.
    virtual void draw(view_context& ctx) = 0;
};

struct view_entry {
    const char* name;            // command-line name (--view NAME)
    const char* title;           // menu title
    std::unique_ptr<view> (*make)();
};
std::span<const view_entry> view_registry();
const view_entry* find_view(std::string_view name);

// Panels drawn beside/over every view (one file each).
void draw_details_panel(view_context& ctx);
void draw_help_overlay(view_context& ctx);

}  // namespace pipescope::viewer
