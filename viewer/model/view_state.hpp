// What the views share besides the document: the time axis, the selection, the toggles.
// Pure C++ (no ImGui).
#pragma once

#include "area_selection.hpp"
#include "document.hpp"
#include "file_state.hpp"
#include "layout_audit.hpp"
#include "scaling.hpp"
#include "search.hpp"
#include "slice_stats.hpp"
#include "viewport.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pipescope::viewer {

struct selection {
    std::uint32_t file = tm::no_index;
    tm::event_ref ev;
    bool valid() const { return file != tm::no_index && ev.valid(); }
    bool operator==(const selection&) const = default;
};

// A flow touching an event: the flow, whether it leaves the event, and its other end.
struct flow_link {
    std::uint32_t flow = 0;
    bool outgoing = false;
    tm::event_ref other;
};
// O(flows): called when the selection changes, not per frame.
std::vector<flow_link> flows_of(const loaded_file& f, const tm::event_ref& e);

// Whether the document has event `e` of file `file` (a reference kept across files being closed).
bool holds(const document& d, std::uint32_t file, const tm::event_ref& e);

// The run (index into document::runs) that shows `track` of `file`, or no_index.
std::uint32_t run_of(const document& d, std::uint32_t file, std::uint32_t track);

// The slice of pipeline node (iteration, stage) in the first run (document order) whose DAG has
// it; an invalid selection if no run does. `run` (index into document::runs), if given, limits
// the search to that run. Used by --select and by tools that point at a node.
selection select_node(const document& d, std::uint64_t iteration, std::uint64_t stage, std::uint32_t run = tm::no_index);

// The display offset of a track's events: its run's (display_offset), or the document start for a
// track of no run. Display time = timestamp - offset.
double display_offset_of(const document& d, std::uint32_t file, std::uint32_t track, bool aligned);

// Display-time range of a selection (ns on the view's axis), if valid.
std::optional<std::pair<double, double>> selection_range(const document& d, const selection& s, bool aligned);

// What the DAG view showed in its last frame (the state dump's `dag`): its run (index into
// document::runs), the replay's range on the display axis and the node counts at the cursor.
struct dag_readout {
    std::uint32_t run = 0;
    double start = 0, end = 0;
    std::uint64_t done = 0, running = 0, suspended = 0, ready = 0, not_ready = 0, nodes = 0;
};

// Every run on the display axis: [0, the document's span], or [0, the longest run] with aligned runs.
std::pair<double, double> frame_all_range(const document& d, bool aligned);

struct view_state {
    viewport vp;
    selection sel;                      // clicked
    selection hover;                    // under the mouse this frame
    std::vector<flow_link> sel_flows;   // flows of `sel` (kept in sync by select())
    bool align_runs = false;            // each run at its own start (else absolute time)
    bool all_flows = false;             // draw every flow in view (else the selection's)
    bool show_details = true;
    bool show_help = false;
    bool show_lesson = false;                                 // the lesson panel (when a lesson is loaded: --lesson)
    std::vector<char> lines_open;                             // per document run: line tracks expanded
    std::optional<std::pair<double, double>> frame_request;   // display range to frame when laid out
    bool scroll_to_selection = false;
    std::string active_view = "timeline";
    // The time cursor shared by the views (display ns, like vp), unset until a view or --time sets it;
    // `playing`: a view advances it every frame (the frame loop then does not idle).
    std::optional<double> cursor;
    bool playing = false;
    search_state search;                      // the timeline's search box (/ or Ctrl+F)
    std::optional<area_selection> area;       // the marked time range over tracks (Shift+drag, M)
    area_stage_sort area_sort;                // how the area's stage table is sorted (its headers)
    layout_audit layout;                      // the labels laid out this frame and their room (cleared every frame)
    std::optional<sweep> scaling;             // a scaling sweep opened (DIR or DIR/scale.json): the scaling view's
    std::string view_request;                 // a view asks to show another (the shell switches after the frame)
    std::vector<plot_point> scaling_points;   // the scaling view's points as last drawn (window pixels)
    std::size_t scaling_hover = no_row;       // the row under the pointer there
    std::optional<dag_readout> dag_shown;     // set by the DAG view each frame it draws a run
    // What the user arranged, per document file (pins, hidden tracks, collapsed runs, bookmarks; kept
    // with the file, model/file_state.hpp), the timeline's track filter, and the bookmark whose note
    // takes the keyboard next / the one last jumped to (model/bookmarks.hpp).
    std::vector<file_arrangement> arranged;
    std::string track_filter;
    std::optional<bookmark_ref> bookmark_edit, bookmark_current;
    std::string clipboard;     // what Copy put on the clipboard last (views/clipboard.hpp)
    slice_stats_cache stats;   // the statistics view's settings and results (model/slice_stats.hpp)

    void select(const document& d, const selection& s);
    // What the timeline's ruler counts from: the marked area's start, else display time 0 (the
    // run's start; the first run's on the absolute axis).
    double ruler_base() const { return area ? area->t0 : 0; }
    // Shows a display range (a selection's) in the timeline and scrolls the tracks to it: a range
    // narrower than 3 px at this zoom is framed with twenty times its length around it; one wholly
    // in view stays where it is; else it is centred at the current zoom if it fits in 80 % of the
    // view, or framed.
    void bring_into_view(std::pair<double, double> range);
    // Frames [lo, hi] of the whole document on the display axis.
    void request_frame_all(const document& d);
};

}   // namespace pipescope::viewer
