// An arrow's head, shared by the DAG view's edges and the stage graph's arrows.
#pragma once

#include <imgui.h>

#include <cmath>

namespace pipescope::viewer {

// A filled triangle `size` px long with its tip at b, pointing along a -> b; none when a and b are
// less than `min_len` px apart.
inline void arrow_head(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c, float size, float min_len) {
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
    if (len < min_len) return;
    const float ux = dx / len, uy = dy / len;
    dl->AddTriangleFilled(b, ImVec2(b.x - ux * size - uy * size * 0.5f, b.y - uy * size + ux * size * 0.5f),
                          ImVec2(b.x - ux * size + uy * size * 0.5f, b.y - uy * size - ux * size * 0.5f), c);
}

}   // namespace pipescope::viewer
