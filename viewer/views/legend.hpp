// The legends of the views' toolbars: colour swatches with labels and tooltips, and the stage
// palette entries a document uses (computed from its interned names, not from its slices).
#pragma once

#include "palette.hpp"

#include "../model/stage_graph.hpp"

#include <algorithm>
#include <string>

namespace pipescope::viewer {

// The highest stage index any loaded file names, or -1.
inline int max_stage_key(const document& doc) {
    int max_stage = -1;
    for (const auto& f : doc.files)
        for (colour_key k : f->key_of_string)
            if (is_stage(k)) max_stage = std::max<int>(max_stage, k);
    return max_stage;
}

// The program's name for stage k from the run metadata (the entry naming stage k, not the k-th
// entry: stage_graph.hpp), or "".
inline std::string legend_stage_name(const document& d, colour_key k) {
    for (const auto& rr : d.runs) {
        if (rr.run == tm::no_index) continue;
        std::string name = stage_name_of_number(d.files[rr.file]->model.runs[rr.run].stages, k);
        if (!name.empty()) return name;
    }
    return {};
}

// A swatch on the toolbar's line: a box (width in line heights), then the label if any.
inline void legend_swatch(ImU32 colour, const std::string& label, const std::string& tip = {}, float width = 1.f,
                          float gap = 0.f) {
    ImGui::SameLine(0, gap > 0 ? gap : -1.f);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + h * width, p.y + 1 + h), colour, 2);
    ImGui::Dummy(ImVec2(h * width, h));
    if (!tip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip.c_str());
    if (label.empty()) return;
    ImGui::SameLine(0, 4);
    ImGui::TextUnformatted(label.c_str());
    if (!tip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip.c_str());
}

// "stage" and one swatch per palette colour in use; stage indices that share a colour (beyond
// the palette's size) are listed in its tooltip. Compact: narrow swatches without labels.
inline void stage_legend(const document& doc, bool compact) {
    const int max_stage = max_stage_key(doc);
    if (max_stage < 0) return;
    ImGui::SameLine();
    ImGui::TextUnformatted("stage");
    const int shown = std::min(max_stage + 1, stage_palette_size);
    for (int k = 0; k < shown; ++k) {
        std::string tip = legend_stage_name(doc, static_cast<colour_key>(k));
        if (tip.empty()) tip = "stage " + std::to_string(k);
        for (int j = k + stage_palette_size; j <= max_stage; j += stage_palette_size) tip += ", stage " + std::to_string(j);
        std::string label;
        if (!compact) label = std::to_string(k) + (max_stage >= stage_palette_size ? "+" : "");
        legend_swatch(key_colour(static_cast<colour_key>(k)), label, tip, compact ? 0.7f : 1.f, compact ? 3.f : 0.f);
    }
}

}  // namespace pipescope::viewer
