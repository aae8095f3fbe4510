#include "legend.hpp"

namespace pipescope::viewer {

namespace {
constexpr float label_gap = 4;   // between a box and its label
float gap_of(const legend_entry& e) { return e.gap < 0 ? ImGui::GetStyle().ItemSpacing.x : e.gap; }
float item_width(const legend_entry& e) {
    return ImGui::GetTextLineHeight() * e.width + (e.label.empty() ? 0 : label_gap + toolbar_flow::text_width(e.label));
}
}   // namespace

toolbar_flow::sized legend_entry_size(const legend_entry& e) { return {item_width(e), gap_of(e)}; }

void draw_legend(toolbar_flow& flow, const std::vector<legend_entry>& entries) {
    const float h = ImGui::GetTextLineHeight();
    for (const legend_entry& e : entries) {
        flow.next(item_width(e), e.label, gap_of(e));
        const ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + h * e.width, p.y + 1 + h), e.colour, 2);
        ImGui::Dummy(ImVec2(h * e.width, h));
        if (!e.tip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", e.tip.c_str());
        if (e.label.empty()) continue;
        ImGui::SameLine(0, label_gap);
        ImGui::TextUnformatted(e.label.c_str());
        if (!e.tip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", e.tip.c_str());
    }
}

std::vector<legend_entry> stage_entries(const document& doc, bool compact) {
    std::vector<legend_entry> out;
    const int max_stage = max_stage_key(doc);
    const int shown = std::min(max_stage + 1, stage_palette_size);
    for (int k = 0; k < shown; ++k) {
        std::string tip = legend_stage_name(doc, static_cast<colour_key>(k));
        if (tip.empty()) tip = "stage " + std::to_string(k);
        for (int j = k + stage_palette_size; j <= max_stage; j += stage_palette_size) tip += ", stage " + std::to_string(j);
        std::string label;
        if (!compact) label = std::to_string(k) + (max_stage >= stage_palette_size ? "+" : "");
        out.push_back({key_colour(static_cast<colour_key>(k)), label, tip, compact ? 0.7f : 1.f, compact ? 3.f : -1.f});
    }
    return out;
}

void stage_legend(toolbar_flow& flow, const document& doc, bool compact) {
    if (max_stage_key(doc) < 0) return;
    flow.next(toolbar_flow::text_width("stage"), "stage");
    ImGui::TextUnformatted("stage");
    draw_legend(flow, stage_entries(doc, compact));
}

std::vector<toolbar_flow::sized> stage_legend_sizes(const document& doc, bool compact) {
    std::vector<toolbar_flow::sized> out;
    if (max_stage_key(doc) < 0) return out;
    out.push_back({toolbar_flow::text_width("stage"), ImGui::GetStyle().ItemSpacing.x});
    for (const legend_entry& e : stage_entries(doc, compact)) out.push_back(legend_entry_size(e));
    return out;
}

}   // namespace pipescope::viewer
