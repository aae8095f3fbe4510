// Colours shared by the views: a palette by stage index and the scheduler/line states.
#pragma once

#include "../model/document.hpp"

#include <imgui.h>

namespace pipescope::viewer {

inline constexpr ImU32 rgb(unsigned hex, unsigned a = 255) {
    return IM_COL32((hex >> 16) & 0xFF, (hex >> 8) & 0xFF, hex & 0xFF, a);
}
inline constexpr unsigned stage_palette[] = {0x4E79A7, 0xF28E2B, 0x59A14F, 0xB07AA1, 0xE15759,
                                             0x76B7B2, 0xEDC948, 0xFF9DA7, 0x9C755F, 0x8CD17D};
inline constexpr int stage_palette_size = sizeof(stage_palette) / sizeof(stage_palette[0]);

// The shared time cursor (DAG replay) where the timeline draws it: a colour no slice or instant uses.
inline constexpr ImU32 col_time_cursor = rgb(0xD4FF3A);

inline ImU32 key_colour(colour_key k) {
    if (is_stage(k)) return rgb(stage_palette[k % stage_palette_size]);
    switch (k) {
        case key_idle: return rgb(0xC8C8C8);
        case key_parked: return rgb(0x5E5E5E);
        case key_task: return rgb(0x4FA3A5);
        case key_running: return rgb(0x7FA7C9);
        case key_waiting: return rgb(0xE8B96A);
        case key_throttled: return rgb(0xC0567A);
        default: return rgb(0x9A8FB8);
    }
}
inline ImU32 text_colour_on(ImU32 bg) {
    const float r = (bg & 0xFF) / 255.f, g = ((bg >> 8) & 0xFF) / 255.f, b = ((bg >> 16) & 0xFF) / 255.f;
    return 0.299f * r + 0.587f * g + 0.114f * b > 0.55f ? IM_COL32(20, 20, 20, 255) : IM_COL32(250, 250, 250, 255);
}
inline constexpr ImU32 col_events_lost = IM_COL32(235, 40, 40, 255);
inline constexpr ImU32 col_background = IM_COL32(30, 31, 36, 255);
inline constexpr ImU32 col_track_bg_a = IM_COL32(38, 40, 46, 255);
inline constexpr ImU32 col_track_bg_b = IM_COL32(34, 36, 41, 255);

inline ImU32 instant_colour(instant_kind k) {
    switch (k) {
        case instant_kind::events_lost: return col_events_lost;
        case instant_kind::steal:
        case instant_kind::stolen: return rgb(0x5FD3F3);
        case instant_kind::wake:
        case instant_kind::woken: return rgb(0xF5E663);
        case instant_kind::suspend:
        case instant_kind::resume: return rgb(0xE58AE5);
        case instant_kind::throttle: return rgb(0xC0567A);
        default: return rgb(0xDDDDDD);
    }
}
inline ImU32 flow_colour(instant_kind from) {
    switch (from) {
        case instant_kind::stolen:
        case instant_kind::steal: return rgb(0x5FD3F3);
        case instant_kind::wake: return rgb(0xF5E663);
        case instant_kind::resume: return rgb(0xE58AE5);
        default: return rgb(0xFFFFFF);
    }
}

}   // namespace pipescope::viewer
