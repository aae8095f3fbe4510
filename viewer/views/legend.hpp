// The legends of the views' toolbars: colour swatches with labels and tooltips, and the stage
// palette entries a document uses (computed from its interned names, not from its slices).
#pragma once

#include "palette.hpp"
#include "toolbar_flow.hpp"

#include "../model/stage_graph.hpp"

#include <algorithm>
#include <string>
#include <vector>

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

// A legend's entry: a box (width in line heights) and a label, if any, with a tooltip.
struct legend_entry {
    ImU32 colour;
    std::string label, tip;
    float width = 1.f;   // in line heights
    float gap = -1.f;    // before it on its line (< 0: the style's item spacing)
};

// The width an entry takes on the toolbar and the gap before it (legend.cpp).
toolbar_flow::sized legend_entry_size(const legend_entry& e);
// Each entry is one item of the toolbar's flow, so that a legend wraps between entries, never
// inside one.
void draw_legend(toolbar_flow& flow, const std::vector<legend_entry>& entries);

// One entry per palette colour in use; stage indices that share a colour (beyond the palette's
// size) are listed in its tooltip. Compact: narrow swatches without labels (the tooltip says which stage).
std::vector<legend_entry> stage_entries(const document& doc, bool compact);
// "stage" and the stage entries; their sizes on the toolbar.
void stage_legend(toolbar_flow& flow, const document& doc, bool compact);
std::vector<toolbar_flow::sized> stage_legend_sizes(const document& doc, bool compact);

}   // namespace pipescope::viewer
