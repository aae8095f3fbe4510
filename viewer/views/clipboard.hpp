// Copy: puts text on the system clipboard (ImGui::SetClipboardText, GLFW's) and keeps it in
// view_state::clipboard, so that a script can check what was copied (the state dump's `clipboard`).
#pragma once

#include "../model/copy_text.hpp"
#include "../model/view_state.hpp"

#include <imgui.h>

#include <string>
#include <string_view>
#include <vector>

namespace pipescope::viewer {

inline void copy_to_clipboard(view_state& st, std::string text) {
    ImGui::SetClipboardText(text.c_str());
    st.clipboard = std::move(text);
}

// A small "Copy" button (id after ##) that copies what make_text() returns; hover says what.
template <class MakeText>
void copy_button(view_state& st, const char* label, const char* tooltip, MakeText&& make_text) {
    if (ImGui::SmallButton(label)) copy_to_clipboard(st, make_text());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip);
}

// A table's text recorded as it is drawn (begin() before BeginTable, row() with each TableNextRow,
// cell() with each cell's text), so that a right-click over the table (context_menu() after EndTable)
// offers "Copy as TSV" of exactly what the table shows.
class table_copy {
public:
    void begin() {
        rows_.clear();
        top_left_ = ImGui::GetCursorScreenPos();
        width_ = ImGui::GetContentRegionAvail().x;
    }
    void row() { rows_.emplace_back(); }
    void cell(std::string_view text) {
        if (rows_.empty()) row();
        rows_.back().emplace_back(text);
    }
    void context_menu(view_state& st, const char* popup_id) {
        const ImVec2 bottom_right(top_left_.x + width_, ImGui::GetCursorScreenPos().y);
        if (ImGui::IsMouseReleased(ImGuiMouseButton_Right) && ImGui::IsMouseHoveringRect(top_left_, bottom_right) &&
            ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows))
            ImGui::OpenPopup(popup_id);
        if (ImGui::BeginPopup(popup_id)) {
            if (ImGui::MenuItem("Copy as TSV")) copy_to_clipboard(st, to_tsv(rows_));
            ImGui::EndPopup();
        }
    }

private:
    std::vector<std::vector<std::string>> rows_;
    ImVec2 top_left_{};
    float width_ = 0;
};

}   // namespace pipescope::viewer
