// The stage graph view's model: a run's program structure read from its metadata (stages, the edges
// between them with their bounded queues, the stages' buffers), a counter's value at a time and its
// peak, the run's indices for the view (counter tracks by name, nodes running per stage at a time,
// the replay's steps), and the layout of a graph of boxes joined by edges. Pure C++ (no ImGui, no GL),
// unit-tested in tests/viewer/test_stage_graph.cpp.
//
// The layout takes any list of stages and edges (from, to, queue counter, capacity): today's
// programs are linear chains, a general stage graph (fan-in / fan-out, feedback) only supplies more
// edges. Layers by longest path over the forward edges (feedback edges, those closing a cycle in a
// depth-first search from the stages in order, are left out of the layering and routed under the
// boxes); boxes of one layer stacked vertically; edges spanning more than one layer routed over the
// boxes; a queue is drawn on the longest horizontal segment of its edge (for an edge between
// neighbouring layers: the segment that enters the target).
#pragma once

#include "document.hpp"

#include <pipescope/analysis/metadata.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::viewer {

struct graph_stage {
    std::uint32_t entry = 0;   // position in program.stages
    std::uint64_t index = 0;   // the entry's "index"
    // The stage number of its node slices: parsed from the name ("stage 5 · output" -> 5,
    // "stage 2^40 + 1 · write" -> 2^40 + 1), else the index. "stage j ≥ N · …" gives N with
    // all_from set: the entry describes every stage from N on that no other entry names.
    std::uint64_t number = 0;
    bool all_from = false;
    // The name gives its stage numbers as a formula of the iteration ("stage 1 + w·i + r · …"):
    // `number` is then only the index, and no stage number maps to this entry.
    bool formula = false;
    std::string name, kind, note;
    // bind-to-stage: threads bound to the stage (the entry's "threads", else program.c for a parallel
    // stage and 1 for a serial one); unset for the other policies.
    std::optional<std::uint64_t> threads;
    // The counter of the stage's own buffer ("stage j reorder buffer" under bind-to-stage,
    // "stage j buffer" under tbb), "" if the policy has none; shown only where the run recorded it.
    std::string buffer_counter;
    colour_key colour = key_other;   // the timeline's colour for its node slices ("stage N")
};

struct graph_edge {
    std::uint32_t from = 0, to = 0;   // indices into the stage list
    std::string queue_counter;        // the counter of a bounded queue on the edge ("queue j fill"), or ""
    std::optional<double> capacity;   // that queue's capacity (program.queue)
    std::string queue_name;           // stage graphs: the queue's own name ("" for pipelines: "queue j")
    bool unbounded = false;           // stage graphs: the policy let this queue grow (no backpressure)
};

struct program_structure {
    bool valid = false;   // the metadata parsed and had a program.stages array
    bool graph = false;   // program.kind "graph": a stage graph, edges from program.queues
    std::string workload, policy;
    std::vector<graph_stage> stages;      // in metadata order
    std::vector<graph_edge> edges;        // a linear pipeline: stage k -> stage k+1
    std::optional<std::uint64_t> K;       // program.K: throttle (piper) or tokens N (tbb)
    std::optional<std::uint64_t> c;       // program.c: threads per parallel stage (bind-to-stage)
    std::optional<std::uint64_t> queue;   // program.queue: capacity of every queue (bind-to-stage)
    vocab::policy_family family() const { return vocab::classify_policy(policy); }
};

// Stage names and kinds are read with the analysis' metadata reader: analysis::stage_number_of_name,
// analysis::is_serial_kind (analysis/metadata.hpp).
// Names for the UI font, which has no "≥" / "≤": ">=" / "<=".
std::string plain_relations(std::string s);

// From the metadata JSON of a run (docs/tracing.md, "Metadata"); tolerant: missing fields stay unset,
// a string that is not a JSON object gives an invalid, empty structure.
program_structure read_program_structure(std::string_view metadata_json);
// Of a run: its metadata; if that names no stages, one serial-less stage per distinct stage number
// of its DAG (at most 64), joined in order.
program_structure program_structure_of(const tm::run& r);
// The stage (index into p.stages) whose box shows the nodes of stage number j, or no_index.
std::uint32_t stage_of_number(const program_structure& p, std::uint64_t j);
// The name of the run metadata's entry describing stage number j, as stage_of_number picks it ("≥"
// written ">=" for the UI font), or "". The entries are not indexed by stage number (x264's are
// stages 0, 2^40 and 2^40 + 1 and two formulas): never the entry at position j.
std::string stage_name_of_number(std::span<const tm::stage_info> stages, std::uint64_t j);

// A counter as a step function: the value of the last sample at or before t (of several samples at
// one timestamp, the last); nullopt before the first sample. O(log n).
std::optional<double> counter_value_at(std::span<const tm::counter_sample> samples, std::uint64_t t);
struct counter_peak {
    bool any = false;       // the counter has samples
    double value = 0;       // the largest value
    std::uint64_t ts = 0;   // the first time it was reached
};
counter_peak peak_of(std::span<const tm::counter_sample> samples);

// The first time in `sorted` after t / the last one before t.
std::optional<std::uint64_t> next_time(std::span<const std::uint64_t> sorted, std::uint64_t t);
std::optional<std::uint64_t> prev_time(std::span<const std::uint64_t> sorted, std::uint64_t t);

// One run of the document as the stage graph shows it; built once per run (O(counter samples +
// nodes log nodes)), nothing per frame.
struct run_graph {
    std::uint32_t doc_run = tm::no_index;   // index into document::runs
    program_structure program;
    std::vector<std::uint32_t> edge_counter;   // per edge: its queue's counter track, or no_index
    std::vector<counter_peak> edge_peak;
    std::vector<std::uint32_t> buffer_counter;   // per stage: its buffer's counter track, or no_index
    std::vector<counter_peak> buffer_peak;
    std::uint32_t live = tm::no_index;        // "live iterations"
    std::uint32_t tokens = tm::no_index;      // "tokens in flight"
    std::uint32_t footprint = tm::no_index;   // stage graphs: "footprint packets"
    counter_peak live_peak, tokens_peak, footprint_peak;
    // Per stage: the DAG nodes it shows by start time (node_starts[s][k] is the start of DAG node
    // nodes_by_start[s][k]), their end times (sorted on their own), and how many distinct stage
    // numbers they had (a "stage j >= 1" entry stands for many).
    std::vector<std::vector<std::uint64_t>> node_starts, node_ends;
    std::vector<std::vector<std::uint32_t>> nodes_by_start;
    std::vector<std::uint64_t> stage_numbers;
    // Every sample time of the counters above and every node start / end (sorted, distinct, absolute
    // ns): the replay's previous / next event.
    std::vector<std::uint64_t> events;
};
run_graph build_run_graph(const document& d, std::uint32_t doc_run);
// Nodes of stage s running at t (start <= t < end). O(log n).
std::uint64_t running_at(const run_graph& g, std::uint32_t s, std::uint64_t t);
// The DAG node of stage s that started last at or before t (the latest started if several start at
// once), or no_index. O(log n).
std::uint32_t latest_node_at(const run_graph& g, std::uint32_t s, std::uint64_t t);
// Why clicking stage s at time t selects nothing ("" when latest_node_at finds a node): the stage
// has no node in the run, or its first node starts after t ("starts at +2.5 ms, after the cursor
// at +1.2 ms"). `off` is the display offset of the run (times are written on the display axis).
std::string nothing_started_note(const run_graph& g, std::uint32_t s, std::uint64_t t, double off,
                                 std::string_view stage_name);

// --- layout ----------------------------------------------------------------------------------------

struct layout_params {
    float box_w = 150, box_h = 84;
    float gap = 48;          // between two layers that no queued edge joins
    float queue_gap = 110;   // before a layer that a queued edge enters (room for its queue)
    float row_gap = 36;      // between boxes of one layer
    float below = 0;         // reserved under each box (the view draws the stage's buffer there)
    float queue_h = 16;      // height of a queue bar
    float queue_pad = 14;    // horizontal space between a queue bar and the boxes
    float channel = 14;      // spacing of the routed edges' horizontal channels
    float margin = 12;
    // > 0: box widths and gaps shrink in proportion (down to the minimums) so that the graph fits.
    float max_width = 0;
    float min_box_w = 96, min_gap = 28, min_queue_gap = 84;
};

struct layout_point {
    float x = 0, y = 0;
};
struct layout_box {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    std::uint32_t layer = 0, slot = 0;   // column, and position inside it (top to bottom)
};
struct layout_edge {
    std::vector<layout_point> points;   // a polyline from the source box to the target box (the arrow's tip last)
    bool feedback = false;              // closes a cycle: routed under the boxes, into the target's bottom
    bool has_queue = false;
    float qx0 = 0, qy0 = 0, qx1 = 0, qy1 = 0;   // the queue bar, on the edge's longest horizontal segment
};
struct graph_layout {
    std::vector<layout_box> boxes;    // per stage
    std::vector<layout_edge> edges;   // per edge
    float width = 0, height = 0;      // everything inside [0, width] x [0, height]
    layout_params used;               // the parameters after fitting max_width
};

// Edges naming a stage out of range are laid out as nothing (an empty polyline).
graph_layout layout_stage_graph(std::span<const graph_stage> stages, std::span<const graph_edge> edges,
                                const layout_params& params);

}   // namespace pipescope::viewer
