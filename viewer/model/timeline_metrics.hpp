// The timeline's sizes, all derived from the font size so that they follow the UI scale: at the
// 15 px font of scale 1 they are the sizes the timeline was designed at (18 px slice rows, a 168 px
// label column, ...), at 30 px (scale 2) twice those. Pure C++.
#pragma once

namespace pipescope::viewer {

struct timeline_metrics {
    float label_w;     // the track-name column
    float row_h;       // a slice row of a worker track
    float instant_h;   // the instant lane under a track's slices
    float line_h;      // a slice row of a line track (an iteration's or the control's)
    float counter_h;   // a counter track
    float header_h;    // a run's header
    float ruler_h;     // the time ruler (two lines of text in the label column, ticks)
    float group_h;     // a collapsible group's bar ("lines (12)")
    float gap;         // between runs (twice this)
    float pad;         // text inset from a cell's edge
};

// Whole pixels, so that rows do not blur.
timeline_metrics timeline_metrics_for(float font_px);

}   // namespace pipescope::viewer
