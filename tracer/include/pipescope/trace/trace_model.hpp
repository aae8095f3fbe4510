// The in-memory trace model: what the viewer, the analysis and `export-json` read.
//
//   pipescope::trace::trace_model m = pipescope::trace::load_trace_file("run.pftrace");
//   for (const auto& r : m.runs) ... r.workers, r.dag.nodes ...
//   const auto& t = m.tracks[r.workers[0]];   // t.slices sorted by begin: binary-search them
//
// Built from any Perfetto TrackEvent trace (decode_perfetto in perfetto_reader.hpp): tracks,
// slices, instants, counters and flows. Events of a track are sorted by (timestamp, file
// position) before BEGIN/END are matched, as Perfetto's importer does (an END@100 written before
// a BEGIN@100 makes two siblings). For pipescope's own traces it also recognizes the runs
// (process tracks), their workers and lines, the run metadata, and rebuilds the pipeline DAG.
//
// Tracks whose BEGIN/ENDs arrive in timestamp order (every track written by one sequence) are
// matched as they arrive, without a raw copy of their events; the others are buffered and sorted.
// The result is the same either way.
//
// Memory: strings are stored once (`strings`; events refer to them by index); annotations live in
// one pool (`args`) that events index by range; a slice is 32 bytes, an instant 24, a counter
// sample 16. No per-event map or string.
#pragma once

#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::trace {

using string_id = std::uint32_t;   // index into trace_model::strings; 0 is ""
inline constexpr std::uint32_t no_index = std::numeric_limits<std::uint32_t>::max();

// One debug annotation: 12 bytes (the pool holds more than one per event and is the largest part
// of a loaded trace). The 64-bit value is kept as two 32-bit halves so that the entry needs only
// 4-byte alignment (a packed uint64_t member would be misaligned, and binding a reference to it is
// undefined behaviour); read it with bits(). An annotation *name* is an interned id below
// max_arg_name_id; values of any kind fit in bits().
inline constexpr string_id max_arg_name_id = (string_id{1} << 24) - 1;
struct model_arg {
    std::uint32_t bits_lo = 0, bits_hi = 0;   // see decoded_arg: uint/int/bool value, double bits, or string_id
    string_id name : 24 = 0;
    arg_kind kind : 8 = arg_kind::uint_value;
    model_arg() = default;
    model_arg(string_id n, arg_kind k, std::uint64_t b)
        : bits_lo(static_cast<std::uint32_t>(b)), bits_hi(static_cast<std::uint32_t>(b >> 32)), name(n), kind(k) {}
    std::uint64_t bits() const { return (std::uint64_t{bits_hi} << 32) | bits_lo; }
};
static_assert(sizeof(model_arg) == 12 && alignof(model_arg) == 4, "model_arg takes 12 bytes");

// A range of trace_model::args.
struct arg_range {
    std::uint32_t first = 0;
    std::uint16_t count = 0;
};

// What a slice is (docs/tracing.md, "Names"), typed once at load from its name by the vocabulary's
// rule (vocab::classify_slice): no reader looks at a slice's name again to know what it is.
enum class slice_kind : std::uint8_t {
    node,        // "stage j" / "stage j · name" / "stage j–k": a pipeline node (or a folded run of them)
    task,        // "task": a fork-join task
    idle,        // "idle": looking for work
    parked,      // "parked": asleep
    blocked,     // "blocked…": a bind-to-stage thread blocked on a full/empty queue
    queue,       // "queue…", "push…", "pop…", "put…", "take…", "reserve…", "commit…": queue operations
    running,     // line: "running"
    waiting,     // line: "waiting at stage j" / "waiting to retire"
    throttled,   // control line: "throttled"
    other,       // anything else (on a worker track: counted as work)
};

// What a string says when it names a slice, decoded once per distinct string at load.
struct name_meaning {
    slice_kind kind = slice_kind::other;
    std::int64_t stage = -1;   // "stage 3", "stage 3 · name", "waiting at stage 3" -> 3; -1: no stage number
};
// The rule itself (what load_trace applies to every string).
name_meaning meaning_of_name(std::string_view name);

struct slice {
    std::uint64_t begin = 0, end = 0;   // ns; an unterminated slice ends at its track's last timestamp
    string_id name = 0;
    std::uint32_t args_first = 0;
    std::uint16_t args_count = 0;
    std::uint16_t depth = 0;               // 0 = outermost
    bool unterminated = false;             // no END before the end of the trace (Perfetto: dur = -1)
    slice_kind kind = slice_kind::other;   // typed at load from its name (trace_model::names)
    std::uint64_t duration() const { return end - begin; }
};
static_assert(sizeof(slice) == 32, "a slice takes 32 bytes: its kind fits in the padding");

// What a node slice holds, decoded from its name and annotations by trace_model::node_of — the one
// decoder of a node's identity. A folded trace (docs/tracing.md, "Detail levels") records a run of
// consecutive nodes one worker ran as one slice ("stage 0–495", graphs "stage 2 ×17") with the
// annotations `nodes` (> 1), `last_stage` and `last_iteration`: a pipeline iteration's stages
// [stage, last_stage], one node each, or `nodes` instances of one graph stage. Each node of it is
// given an equal share of the slice's duration; counts count the nodes it holds.
struct node_extent {
    long stage = -1;                 // the (first) stage; -1: no stage (not a node)
    std::uint64_t last_stage = 0;    // == stage unless the slice folds several stages
    long long iteration = -1;        // -1: no iteration annotation
    long long last_iteration = -1;   // a folded slice's `last_iteration`; -1: none
    std::uint64_t nodes = 1;         // nodes it holds: > 1 for a folded run (at most 2^32 - 1)
    bool waited = false;             // its first node entered through stage_wait
    bool stage_annotated = false;    // the stage came from the `stage` annotation, not only the name
    bool folded() const { return nodes > 1; }
    // A pipeline block: one iteration's stages [stage, last_stage], one node each (a graph's folded
    // slice holds `nodes` instances of one stage instead).
    bool pipeline_block() const {
        return folded() && stage >= 0 && last_iteration == iteration &&
               last_stage - static_cast<std::uint64_t>(stage) + 1 == nodes;
    }
    // How many of its nodes are of stage j (pipelines: 1 per stage of the range; graphs: all of them).
    std::uint64_t nodes_of_stage(std::uint64_t j) const;
};

struct instant {
    std::uint64_t ts = 0;
    string_id name = 0;
    std::uint32_t args_first = 0;
    std::uint16_t args_count = 0;
    std::uint16_t depth = 0;   // number of slices open around it
};

struct counter_sample {
    std::uint64_t ts = 0;
    double value = 0;
};

enum class track_kind : std::uint8_t { process, thread, counter, line, other };

struct track {
    std::uint64_t uuid = 0, parent_uuid = 0;
    std::uint32_t parent = no_index;   // index of the parent track, if described
    track_kind kind = track_kind::other;
    std::string name;
    std::int64_t pid = 0, tid = 0;
    std::uint32_t run = no_index;           // the run (process) it belongs to
    int worker = -1;                        // "worker w" thread tracks of a run
    int line = -1;                          // "line k" tracks of a run
    bool described = true;                  // false: used by events but never described (or the global track 0)
    bool derived = false;                   // not in the file: built by the model from other tracks (a stage
                                            // graph's "footprint packets" / "footprint bytes", docs/tracing.md)
    std::vector<slice> slices;              // sorted by (begin, nesting): parents before children
    std::vector<instant> instants;          // sorted by ts
    std::vector<counter_sample> counters;   // sorted by ts
    std::uint64_t unmatched_ends = 0;       // SLICE_ENDs with no open slice (ignored, like the importer)
    std::uint16_t max_depth = 0;
    long stage = -1;   // bind-to-stage's "stage j · thread t" tracks: j
};

// A slice or an instant of a track.
struct event_ref {
    std::uint32_t track = no_index;
    std::uint32_t index = no_index;
    bool is_instant = false;
    bool valid() const { return track != no_index; }
    bool operator==(const event_ref&) const = default;
};

// An arrow (Perfetto flow semantics: the first event carrying an id begins it, each later one
// steps it, a terminating id ends it; ordered by timestamp).
struct flow {
    std::uint64_t id = 0;
    event_ref from, to;
};

// ---------------------------------------------------------------------------------------------
// The pipeline DAG of a run (Cilk-P's picture): nodes (i, j), stage edges down an iteration,
// cross edges between iterations, throttling edges K iterations apart.
//
// A folded trace (trace_detail::folded, docs/tracing.md) records a run of consecutive nodes of one
// iteration as one slice; the DAG keeps it as one *block* node holding stages [stage, last_stage]
// (`nodes` of them, one per stage), each node taking an equal share of the block's time. Edges
// between blocks stand for the edges of the nodes they hold: the cross edge into a folded block comes
// from the block of i-1 holding its last stage (the latest node of i-1 any of its nodes can wait
// for), so the span over blocks is an upper bound of the span over nodes (pipeline_dag::folded_blocks
// says whether that approximation is in play).

struct dag_node {
    std::uint64_t iteration = 0;
    std::uint64_t stage = 0;        // the (first) stage
    std::uint64_t last_stage = 0;   // == stage unless a folded block
    std::uint64_t start = 0, end = 0;
    std::uint32_t nodes = 1;   // nodes it stands for: > 1 for a folded block
    int worker = -1;
    bool waited = false;   // entered through stage_wait: it has a cross edge
    event_ref slice;       // its node slice
    bool folded() const { return nodes > 1; }
    bool holds(std::uint64_t s) const { return s >= stage && s <= last_stage; }
};

enum class dag_edge_kind : std::uint8_t {
    stage,      // (i, j) -> (i, j') consecutive nodes of one iteration
    cross,      // last node of i-1 with stage <= j -> waited node (i, j)
    retire,     // the implicit final stage: last node of i-1 -> last node of i (iterations retire in order)
    throttle,   // last node of i-K -> first node of i
};

struct dag_edge {
    std::uint32_t from = 0, to = 0;   // indices into pipeline_dag::nodes
    dag_edge_kind kind = dag_edge_kind::stage;
};

struct pipeline_dag {
    std::vector<dag_node> nodes;       // sorted by (iteration, stage)
    std::vector<dag_edge> edges;       // grouped by target node
    std::uint64_t K = 0;               // throttle (program.K of the metadata); 0 = unknown
    std::uint64_t iterations = 0;      // distinct iterations with nodes
    std::uint64_t node_count = 0;      // nodes, those inside folded blocks included
    std::uint64_t folded_blocks = 0;   // dag_nodes that are folded blocks (0: every node is its own)
    // The node (i, j) or the folded block holding it, or no_index.
    std::uint32_t find(std::uint64_t iteration, std::uint64_t stage) const;
};

struct stage_info {
    std::uint64_t index = 0;
    std::string name, kind;
};

// How the program used a stage, as the runtime saw it while the run went on (the "stages" of the
// "metadata" of the run's "run summary"; docs/tracing.md, "Run summary"): "serial" (every
// iteration entered it through stage_wait), "parallel" (through stage), "mixed" (both).
struct used_stage {
    std::uint64_t index = 0;
    bool and_later = false;   // the kind of every stage from `index` on (the runtime counts 63 apart)
    std::string kind;
};

// What one worker thread got from the machine's scheduler during the run (the "workers" of the
// run summary's metadata; docs/tracing.md, "Run summary"): time on a CPU, time runnable but waiting
// for one (descheduled), and how many times it was put on one.
struct worker_time {
    std::uint64_t worker = 0;
    std::uint64_t cpu_ns = 0, descheduled_ns = 0, timeslices = 0;
};

// A run: one process track (pipescope writes one process per run, "workload · policy · P=n").
struct run {
    std::uint32_t track = no_index;   // the process track
    std::int64_t pid = 0;
    std::string name;
    std::uint64_t declared_workers = 0;   // the "workers" annotation of the "run" instant
    std::string metadata_json;            // the "metadata" annotation, verbatim
    bool metadata_valid = false;          // it parsed as a JSON object
    std::string workload, policy, program_kind;
    std::vector<stage_info> stages;          // program.stages
    std::string end_metadata_json;           // the "metadata" annotation of the "run summary", verbatim
    std::vector<used_stage> used_stages;     // its "stages"
    std::vector<worker_time> worker_times;   // its "workers" (none: not recorded)
    std::vector<std::uint32_t> workers;      // thread tracks "worker w", indexed by w (no_index if missing), then the
                                             // run's other thread tracks (bind-to-stage's stage threads) in tid order
    std::vector<std::uint32_t> lines;        // "line k" tracks, by k (no_index if missing)
    std::vector<std::uint32_t> tracks;       // every track of the run (the process track first)
    pipeline_dag dag;
    // Its "run summary" instant was read: the recording of the run was finished. A run without one
    // was cut short (the recording killed, the file's tail lost): its counts are lower bounds and
    // the slices still open (`open_slices`, on its tracks) end at their track's last event.
    bool summarized = false;
    std::uint64_t open_slices = 0;
};

struct trace_model {
    std::vector<std::string> strings;   // strings[0] == ""
    std::vector<model_arg> args;        // the annotation pool
    std::vector<track> tracks;          // in order of first description/use
    std::vector<flow> flows;
    std::vector<run> runs;
    std::vector<std::string> problems;   // each names a byte offset (or, for the DAG, the nodes)
    // Read with read_options::stop_at_damage: the decode error that ended the reading early ("byte N:
    // ..."), where it is, where the packet holding it starts (the model holds every packet before
    // that) and the file's size. Empty: the file was read to its end.
    std::string damage;
    std::uint64_t damage_offset = 0, damage_intact_bytes = 0, damage_file_bytes = 0;
    // Read with read_options::accept_cut_short: `cut_short` when the file ends inside the packet
    // starting at cut_short_at (a recording killed mid-write); the model holds every packet before
    // it. file_bytes: the size of what was read.
    bool cut_short = false;
    std::uint64_t cut_short_at = 0, file_bytes = 0;
    std::uint64_t packets = 0, events = 0, slices = 0, instants = 0, counter_values = 0;
    std::uint64_t unterminated_slices = 0, unmatched_ends = 0;
    std::uint64_t first_ts = 0, last_ts = 0;   // over all events (0, 0 if none)

    // Per string id, typed at load: what the string means as a slice name (slice::kind is its kind).
    std::vector<name_meaning> names;
    // The string ids of the annotations a node slice carries (no_index: not in the trace), found at load.
    struct node_arg_ids {
        string_id iteration = no_index, stage = no_index, last_stage = no_index, last_iteration = no_index, nodes = no_index,
                  waited = no_index;
    } node_args;

    const std::string& str(string_id s) const { return strings[s]; }
    // The stage number a name carries ("stage 3 · load", "waiting at stage 3"), or -1.
    long stage_of(string_id s) const { return static_cast<long>(names[s].stage); }
    // What node slice s holds (s.kind == slice_kind::node; for any other slice, stage == -1): its stage
    // from the `stage` annotation, else from its name; the folded range as written, when it fits.
    node_extent node_of(const slice& s) const;
    std::uint32_t find_track(std::uint64_t uuid) const;   // no_index if absent
    const model_arg* args_begin(const slice& s) const { return args.data() + s.args_first; }
    const model_arg* args_end(const slice& s) const { return args.data() + s.args_first + s.args_count; }
    const model_arg* args_begin(const instant& i) const { return args.data() + i.args_first; }
    const model_arg* args_end(const instant& i) const { return args.data() + i.args_first + i.args_count; }
    // The value of a uint/int/bool annotation by name, if the event has it.
    std::optional<std::uint64_t> uint_arg(const slice& s, std::string_view name) const;
    std::optional<std::uint64_t> uint_arg(const instant& i, std::string_view name) const;
    std::optional<std::string_view> string_arg(const instant& i, std::string_view name) const;
    // The same for an annotation of the trace vocabulary.
    std::optional<std::uint64_t> uint_arg(const slice& s, vocab::arg_key k) const { return uint_arg(s, vocab::key(k)); }
    std::optional<std::uint64_t> uint_arg(const instant& i, vocab::arg_key k) const { return uint_arg(i, vocab::key(k)); }
    std::optional<std::string_view> string_arg(const instant& i, vocab::arg_key k) const {
        return string_arg(i, vocab::key(k));
    }
    // An annotation value as text (numbers in decimal, strings verbatim).
    std::string arg_text(const model_arg& a) const;
};

trace_model load_trace(std::string_view bytes, const read_options& options = {});

// Reads a file (opened and mapped by open_trace_file, trace_file.hpp: never copied whole into
// memory); throws std::runtime_error naming the file if it cannot be opened ("cannot open FILE:
// REASON"), is no regular file, is larger than max_bytes or than the machine's memory, or is not a
// Perfetto trace at all ("FILE: not a Perfetto trace: REASON", not_a_trace_reason in
// perfetto_reader.hpp), proto::decode_error for malformed contents (unless options.stop_at_damage:
// see trace_model::damage; or options.accept_cut_short for a torn last packet: cut_short_at).
inline constexpr std::uint64_t default_max_trace_file = std::uint64_t{16} << 30;
trace_model load_trace_file(const std::filesystem::path& path, const read_options& options = {},
                            std::uint64_t max_bytes = default_max_trace_file);

// What a reader says about a trace that was cut short or holds unfinished runs, one line each
// (empty when there is nothing to say):
//   "run.pftrace.3Xk9aa.tmp: the recording was cut short at byte 123456 (last packet incomplete)"
//   "run 'pipe-fib · piper · P=2' has no summary: its 3 slices still open were closed at their last event"
std::vector<std::string> incomplete_notes(const trace_model& m, const std::string& file);

// The machine's physical memory in bytes (0 if unknown).
std::uint64_t physical_memory_bytes();

// Types a model's slices once its strings are final: fills m.names, m.node_args, every slice's
// kind and every track's stage (slice_meaning.cpp). load_trace does it; a model built by hand (as
// tests do) calls it before reading kinds or nodes, and before build_pipeline_dag.
void type_slices(trace_model& m);

// Builds (or rebuilds) the DAG of a run from its worker tracks; called by load_trace.
pipeline_dag build_pipeline_dag(const trace_model& m, const run& r, std::vector<std::string>* problems = nullptr);

// Stage j's kind as the run's summary recorded it ("serial", "parallel", "mixed"), or "" for a run
// without it (traces of older versions, construct-and-run policies, whose stages are declared).
std::string recorded_stage_kind(const run& r, std::uint64_t j);
// Stage j's kind as the run's DAG shows it: "serial" for stage 0, and for a stage of at least two
// nodes (folded blocks say nothing) of which every one but at most the first waited on its cross
// edge and none overlaps the node of the previous iteration; "parallel" when nodes of consecutive
// iterations overlap or more than one entered without waiting; "" when the DAG cannot tell.
std::string inferred_stage_kind(const run& r, std::uint64_t j);

const char* to_string(dag_edge_kind k);
const char* to_string(track_kind k);

}   // namespace pipescope::trace
