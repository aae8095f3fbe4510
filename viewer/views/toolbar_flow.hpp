// The toolbars' wrapping (model/line_flow.hpp) in ImGui terms: before each item the view says how
// wide it is, and the flow puts it on the current line (ImGui::SameLine) or lets ImGui start the
// next one. Every label placed is recorded in the frame's layout audit (model/layout_audit.hpp)
// with the width left for it, so the tests see a toolbar item that does not fit.
#pragma once

#include "../model/layout_audit.hpp"
#include "../model/line_flow.hpp"

#include <imgui.h>

#include <string>
#include <string_view>
#include <vector>

namespace pipescope::viewer {

class toolbar_flow {
public:
    // Starts at the cursor, which must be at the start of a line; wraps at the content region's right edge.
    toolbar_flow(layout_audit& audit, std::string where);

    // Call right before drawing an item `width` px wide; `gap` px after the previous one on its
    // line (< 0: the style's item spacing). `label` is what the audit reports.
    void next(float width, std::string_view label, float gap = -1);

    // A composite item (several ImGui items side by side): its width is the one measured when it
    // was last drawn (ImGui's state storage, by `id`), so it wraps as a whole from the next frame on.
    // The lines started so far, and the width left on the current one (before any gap).
    int lines() const { return flow_.lines(); }
    float room() const { return static_cast<float>(flow_.room()); }
    // How many lines the toolbar would have after these items (width, gap), placing none: a view
    // compares two ways of writing the rest of its toolbar.
    struct sized {
        float width, gap;
    };
    int lines_after(const std::vector<sized>& items) const;

    void begin_group(const char* id, float gap = -1);
    void end_group();

    // Widths of ImGui's items in the current font and style.
    static float text_width(std::string_view text);
    static float checkbox_width(const char* label);   // also a radio button
    static float button_width(const char* label);

private:
    line_flow flow_;
    layout_audit& audit_;
    std::string where_;
    float right_;   // the content region's right edge (screen x)
    ImGuiID group_id_ = 0;
};

}   // namespace pipescope::viewer
