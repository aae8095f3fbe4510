// Diagonal hatching (the DAG view's folded blocks, docs/viewer.md "Folded traces"): lines x + y = k·step
// on one lattice of screen pixels, so that hatched rectangles side by side continue each other's
// stripes, drawn without anti-aliasing so that they keep one exact colour (the screenshot test counts it).
#pragma once

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace pipescope::viewer {

inline void hatch_rect(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float step = 6.f, float thickness = 1.f) {
    if (b.x <= a.x || b.y <= a.y) return;
    const ImDrawListFlags saved = dl->Flags;
    dl->Flags &= ~ImDrawListFlags_AntiAliasedLines;
    for (float c = std::ceil((a.x + a.y) / step) * step; c <= b.x + b.y; c += step) {
        // The part of x + y = c inside [a.x, b.x] x [a.y, b.y].
        const float x0 = std::max(a.x, c - b.y), x1 = std::min(b.x, c - a.y);
        if (x1 > x0) dl->AddLine(ImVec2(x0, c - x0), ImVec2(x1, c - x1), colour, thickness);
    }
    dl->Flags = saved;
}

}   // namespace pipescope::viewer
