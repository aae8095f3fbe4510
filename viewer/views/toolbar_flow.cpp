#include "toolbar_flow.hpp"

#include <algorithm>

namespace pipescope::viewer {

toolbar_flow::toolbar_flow(layout_audit& audit, std::string where)
    : flow_(ImGui::GetContentRegionAvail().x),
      audit_(audit),
      where_(std::move(where)),
      right_(ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x) {}

void toolbar_flow::next(float width, std::string_view label, float gap) {
    const float g = gap < 0 ? ImGui::GetStyle().ItemSpacing.x : gap;
    const flow_cell c = flow_.place(width, g);
    if (!c.new_line) ImGui::SameLine(0, g);
    // The audit measures from where ImGui put the item, not from the model's estimate.
    audit_.check(where_, std::string(label), width, right_ - ImGui::GetCursorScreenPos().x);
}

int toolbar_flow::lines_after(const std::vector<sized>& items) const {
    line_flow f = flow_;
    for (const sized& i : items) f.place(i.width, i.gap);
    return f.lines();
}

void toolbar_flow::begin_group(const char* id, float gap) {
    group_id_ = ImGui::GetID(id);
    next(ImGui::GetStateStorage()->GetFloat(group_id_, 0.f), id, gap);
    ImGui::BeginGroup();
}

void toolbar_flow::end_group() {
    ImGui::EndGroup();
    ImGui::GetStateStorage()->SetFloat(group_id_, ImGui::GetItemRectSize().x);
}

float toolbar_flow::text_width(std::string_view text) {
    return ImGui::CalcTextSize(text.data(), text.data() + text.size(), true).x;
}

float toolbar_flow::checkbox_width(const char* label) {
    const float w = text_width(label);
    return ImGui::GetFrameHeight() + (w > 0 ? ImGui::GetStyle().ItemInnerSpacing.x + w : 0);
}

float toolbar_flow::button_width(const char* label) { return text_width(label) + ImGui::GetStyle().FramePadding.x * 2; }

}   // namespace pipescope::viewer
