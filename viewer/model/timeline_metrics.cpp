#include "timeline_metrics.hpp"

#include <cmath>

namespace pipescope::viewer {

timeline_metrics timeline_metrics_for(float font_px) {
    constexpr float designed_at = 15;   // the font size of UI scale 1
    const float s = font_px / designed_at;
    auto px = [s](float at_scale_1) { return std::round(at_scale_1 * s); };
    return {px(168), px(18), px(10), px(14), px(40), px(24), px(36), px(18), px(6), px(4)};
}

}   // namespace pipescope::viewer
