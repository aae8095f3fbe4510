// The trace vocabulary: every track, slice, instant, annotation and counter name a pipescope trace
// uses, and the policy families its metadata names, in one place (docs/trace-format.md, "The
// vocabulary"). The writer (perfetto_writer.cpp) writes these names; the trace model, the analysis
// and the viewer read them through the constants and classifiers here, never through literals of
// their own. To add a name: a constant in its group, its kind in the group's enum and in the
// classifier (vocabulary.cpp), and the writer's use of it; tests/test_vocabulary.cpp checks that it
// classifies back.
//
// Names with a number ("stage 3", "worker 0", "line 7", "queue 2 fill") are a prefix, the number
// and for some a suffix: numbered() builds them, leading_number() / whole_number() read them back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pipescope::trace::vocab {

// ---------------------------------------------------------------------------------------------
// Numbered names

// prefix + n + suffix, e.g. numbered(stage_prefix, 3) == "stage 3".
std::string numbered(std::string_view prefix, std::uint64_t n, std::string_view suffix = {});
// The number right after `prefix` at the start of `name`; more text may follow ("stage 3 ×17" -> 3).
std::optional<std::uint64_t> leading_number(std::string_view name, std::string_view prefix);
// The number after `prefix` when it is all the rest of the name ("worker 12" -> 12, "worker 1x" -> none).
std::optional<std::uint64_t> whole_number(std::string_view name, std::string_view prefix);
constexpr bool starts_with(std::string_view name, std::string_view prefix) {
    return name.substr(0, prefix.size()) == prefix;
}

// ---------------------------------------------------------------------------------------------
// Tracks (the writer describes each; the model finds runs, workers and lines by them)

inline constexpr std::string_view worker_prefix = "worker ";   // thread track of scheduler worker w: "worker w"
inline constexpr std::string_view stage_thread_infix =
    " \u00b7 thread ";                                         // a stage thread: "stage j · thread t" (bind-to-stage)
inline constexpr std::string_view thread_prefix = "thread ";   // another recording thread: "thread w"
inline constexpr std::string_view lines_group = "lines";       // the group holding the line tracks and "control"
inline constexpr std::string_view line_prefix = "line ";       // in-flight iteration slot k: "line k"
inline constexpr std::string_view control_line = "control";    // the throttled loop's line (child of "lines")

enum class track_name : std::uint8_t { worker, stage_thread, thread, lines_group, line, control, other };
track_name classify_track(std::string_view name);

// ---------------------------------------------------------------------------------------------
// Slices (worker tracks: nodes and scheduler states; line tracks: an iteration's states)

inline constexpr std::string_view stage_prefix = "stage ";         // node slice of stage j: "stage j"
inline constexpr std::string_view stage_name_infix = " \u00b7 ";   // ... of a named stage: "stage j · decode"
inline constexpr std::string_view fold_times = " \u00d7";          // folded instances of one stage: "stage j ×n"
inline constexpr std::string_view fold_dash = "\u2013";            // folded stages of one iteration: "stage j–k"
inline constexpr std::string_view fold_suffix = " (folded)";       // folded, past the writer's bound of distinct names
inline constexpr std::string_view idle = "idle";                   // a worker looking for work
inline constexpr std::string_view parked = "parked";               // a worker asleep until woken
inline constexpr std::string_view task = "task";                   // a fork-join task (annotation `task`)
inline constexpr std::string_view blocked_prefix = "blocked";      // bind-to-stage: "blocked: queue j full"
inline constexpr std::string_view queue_full_prefix = "blocked: queue ";
inline constexpr std::string_view queue_full_suffix = " full";
inline constexpr std::string_view queue_empty_prefix = "waiting: queue ";   // bind-to-stage: "waiting: queue j empty"
inline constexpr std::string_view queue_empty_suffix = " empty";
inline constexpr std::string_view running = "running";          // line: the iteration runs
inline constexpr std::string_view waiting_prefix = "waiting";   // line states that wait, and "waiting: queue j empty"
inline constexpr std::string_view waiting_at_stage = "waiting at stage ";    // line: suspended at stage j's cross edge
inline constexpr std::string_view waiting_to_retire = "waiting to retire";   // line: done, waiting for i-1 to retire
inline constexpr std::string_view throttled = "throttled";   // control line: the loop stopped at K (also an instant)
// Queue operations drawn as slices by other tracers (pipescope writes them as instants).
inline constexpr std::string_view queue_operation_prefixes[] = {"queue", "push", "pop", "put", "take", "reserve", "commit"};

// What a slice name means, by the rules the analysis and the viewer share: a node is "stage "
// and a number; blocked / queue operations / waiting go by prefix (so a foreign trace's
// "blocked on x" is blocked too); the rest by the whole name.
enum class slice_class : std::uint8_t {
    node,
    task,
    idle,
    parked,
    blocked,
    queue_operation,
    running,
    waiting,
    throttled,
    other
};
slice_class classify_slice(std::string_view name);
// A node slice named as a folded run ("stage j ×n", "stage j–k"; a "stage j (folded)" slice says
// it by its `nodes` annotation only).
bool is_folded_node(std::string_view name);

// ---------------------------------------------------------------------------------------------
// Instants

inline constexpr std::string_view run = "run";                    // process track: run start (name, workers, metadata)
inline constexpr std::string_view run_summary = "run summary";    // process track: what the writer wrote for the run
inline constexpr std::string_view steal = "steal";                // thief: a successful steal (annotation victim)
inline constexpr std::string_view stolen = "stolen";              // victim: its job was stolen (annotation thief)
inline constexpr std::string_view wake_prefix = "wake worker ";   // a worker woke worker w: "wake worker w"
inline constexpr std::string_view woken = "woken";                // a parked worker was woken (the wake flow ends here)
inline constexpr std::string_view suspend = "suspend";            // an iteration suspended at a cross edge or to retire
inline constexpr std::string_view resume = "resume";              // an iteration was resumed
// `throttled` above: the loop reached K (an instant on the worker, a slice on the control line)
inline constexpr std::string_view throttle_resume = "throttle resume";     // the throttled loop went on
inline constexpr std::string_view stage_wait_check = "stage_wait check";   // a cross edge checked (value: satisfied)
inline constexpr std::string_view events_lost = "events lost";             // the recorder dropped events here
inline constexpr std::string_view parked_in_buffer = "parked in buffer";   // tbb: an item waits in a serial filter's buffer
inline constexpr std::string_view taken_from_buffer = "taken from buffer";   // tbb: an item left that buffer
inline constexpr std::string_view resume_earliest =
    "resume earliest";   // piper-earliest resumed its earliest suspended iteration
inline constexpr std::string_view stage_exception = "exception in a stage";   // a stage threw: the loop stops
inline constexpr std::string_view cancelled = "cancelled";                    // the caller's stop token stopped the loop
inline constexpr std::string_view reserve_push = "reserve push";              // stage graphs: queue window operations
inline constexpr std::string_view reserve_pop = "reserve pop";
inline constexpr std::string_view commit_push = "commit push";
inline constexpr std::string_view commit_pop = "commit pop";
inline constexpr std::string_view stage_blocked = "stage blocked";   // stage graphs: a stage cannot run (why unknown)
inline constexpr std::string_view stage_blocked_full = "stage blocked: queue full";
inline constexpr std::string_view stage_blocked_empty = "stage blocked: queue empty";
inline constexpr std::string_view stage_blocked_order = "stage blocked: commit order";
inline constexpr std::string_view preempted = "preempted";                  // stage graphs: a serial stage was preempted
inline constexpr std::string_view stage_done = "stage done";                // stage graphs: a stage finished for good
inline constexpr std::string_view detail_folded = "trace detail: folded";   // trace_detail::automatic folds from here on
inline constexpr std::string_view detail_nodes = "trace detail: nodes";     // ... or keeps node slices

enum class instant_name : std::uint8_t {
    run,
    run_summary,
    steal,
    stolen,
    wake,
    woken,
    suspend,
    resume,
    throttled,
    throttle_resume,
    stage_wait_check,
    events_lost,
    parked_in_buffer,
    taken_from_buffer,
    resume_earliest,
    stage_exception,
    cancelled,
    reserve_push,
    reserve_pop,
    commit_push,
    commit_pop,
    stage_blocked,
    stage_blocked_full,
    stage_blocked_empty,
    stage_blocked_order,
    preempted,
    stage_done,
    detail_folded,
    detail_nodes,
    other
};
instant_name classify_instant(std::string_view name);

// The values of resume_earliest's `resumed_at` (event_kind earliest_point order), and for others.
inline constexpr std::string_view earliest_points[] = {"retire", "suspend", "steal found nothing"};
inline constexpr std::string_view earliest_point_unknown = "unknown";

// ---------------------------------------------------------------------------------------------
// Annotations (debug annotation names; the writer interns them per sequence)

enum class arg_key : std::uint8_t {
    iteration,          // node / line state / instant: the iteration (graphs: the instance)
    stage,              // the stage
    waited,             // node: entered through stage_wait (1)
    victim,             // steal: the worker stolen from
    thief,              // stolen: the worker that stole
    worker,             // wake worker: the worker woken
    waiting_on,         // suspend: the iteration waited for
    failed_steals,      // end of idle: failed steal attempts while idle
    live,               // throttled / throttle resume / cancelled: live iterations
    K,                  // throttled / throttle resume: the throttle
    dropped,            // events lost: how many
    workers,            // run: the run's workers
    name,               // run: the run's name
    metadata,           // run: configuration and program as JSON
    slices,             // run summary: slices written
    instants,           // run summary: instants written
    flows,              // run summary: flows written
    counter_values,     // run summary: counter values written
    dropped_events,     // run summary: events lost
    value,              // stage_wait check: satisfied; buffer instants: fill; trace detail: mean node ns
    task,               // task slice: the task id
    resumed_at,         // resume earliest: which of earliest_points
    suspended,          // resume earliest: suspended iterations
    queue,              // graph instants: the queue
    packets,            // reserve / preempted: packets
    elements,           // commit: elements
    granted,            // reserve: the window was granted (1)
    published,          // commit: the data was published now (1)
    nodes,              // folded node slice / trace detail: nodes
    last_iteration,     // folded node slice: its last iteration
    last_stage,         // folded node slice: its last stage
    outcome,            // run summary: how a run that did not complete ended ("cancelled", "exception: ...")
    annotations_lost,   // a slice's user annotations past the writer's bound (docs/tracing.md, "User annotations")
    parent,             // task slice: the id of the task that spawned it (0: spawned outside any task)
    spawn_delay,        // task slice: ns from its spawn to its begin (absent: the spawn was not recorded)
    count_
};
inline constexpr std::string_view arg_names[] = {
    "iteration",
    "stage",
    "waited",
    "victim",
    "thief",
    "worker",
    "waiting_on",
    "failed_steals",
    "live",
    "K",
    "dropped",
    "workers",
    "name",
    "metadata",
    "slices",
    "instants",
    "flows",
    "counter_values",
    "dropped_events",
    "value",
    "task",
    "resumed_at",
    "suspended",
    "queue",
    "packets",
    "elements",
    "granted",
    "published",
    "nodes",
    "last_iteration",
    "last_stage",
    "outcome",
    "annotations_lost",
    "parent",
    "spawn_delay",
};
static_assert(std::size(arg_names) == static_cast<std::size_t>(arg_key::count_));
constexpr std::string_view key(arg_key k) { return arg_names[static_cast<std::size_t>(k)]; }
std::optional<arg_key> classify_arg(std::string_view name);

// User annotations (pipescope::annotate) are written under the user's key, except a key that is
// one of the names above or already starts with user_arg_prefix: it gets the prefix, so that no
// user annotation is read as one of the runtime's ("stage" -> "user_stage"; not "user.", because
// Perfetto's importer shows a "." in a name as "_", "." being its nesting separator). Their values
// are int, uint or double annotations; a key annotated several times in one slice (a folded run)
// holds an array, which readers flatten to "key[0]", "key[1]", ...
inline constexpr std::string_view user_arg_prefix = "user_";
std::string user_arg_name(std::string_view key);
// The user's key of an annotation name, or nullopt for a name of the vocabulary
// (user_key("bytes") == "bytes", user_key("user_stage") == "stage", user_key("stage") == nullopt).
std::optional<std::string_view> user_key(std::string_view name);

// ---------------------------------------------------------------------------------------------
// Counter tracks (process track children; a run's own counters come from run_info::counters)

inline constexpr std::string_view live_iterations = "live iterations";     // pipelines: iterations in flight (vs K)
inline constexpr std::string_view tokens_in_flight = "tokens in flight";   // tbb: tokens in flight (vs N)
inline constexpr std::string_view buffer_suffix = " buffer";               // tbb: "stage j buffer", a serial filter's input
inline constexpr std::string_view queue_prefix = "queue ";   // bind-to-stage "queue j fill", graphs "queue q packets"
inline constexpr std::string_view fill_suffix = " fill";     // bind-to-stage: items in the queue before stage j
inline constexpr std::string_view reorder_buffer_suffix = " reorder buffer";       // bind-to-stage: "stage j reorder buffer"
inline constexpr std::string_view suspended_iterations = "suspended iterations";   // piper-earliest: its suspended list
inline constexpr std::string_view packets_suffix = " packets";   // graphs: "queue <name> packets" (the runtime names them)
inline constexpr std::string_view queue_word = "queue";      // any counter with it measures a queue (its capacity applies)
inline constexpr std::string_view footprint = "footprint";   // graphs: any counter with it measures the footprint
inline constexpr std::string_view footprint_packets = "footprint packets";   // graphs: packets held by all queues
inline constexpr std::string_view footprint_bytes = "footprint bytes";       // graphs: bytes held by all queues

enum class counter_name : std::uint8_t {
    live_iterations,
    tokens_in_flight,
    stage_buffer,
    queue_fill,
    reorder_buffer,
    suspended_iterations,
    queue_packets,
    footprint_packets,
    footprint_bytes,
    other
};
counter_name classify_counter(std::string_view name);
// The counter track of a graph queue named `queue`: "queue <queue> packets".
std::string queue_packets(std::string_view queue);

// ---------------------------------------------------------------------------------------------
// Policies and programs (the metadata's "policy" and "program.kind"; the runtime names them)

inline constexpr std::string_view piper = "piper";
inline constexpr std::string_view piper_earliest = "piper-earliest";
inline constexpr std::string_view tbb = "tbb";
inline constexpr std::string_view bind_to_stage = "bind-to-stage";
inline constexpr std::string_view serial = "serial";
inline constexpr std::string_view graph_policies[] = {"gramps",        "danbi",  "task-stealing",
                                                      "breadth-first", "static", "graph-serial"};

// How a policy schedules, which decides what its trace holds and how the analysis reads it.
enum class policy_family : std::uint8_t {
    work_stealing,   // piper, piper-earliest: on-the-fly pipelines on the work-stealing core
    tokens,          // tbb: construct-and-run with N tokens and serial-filter buffers
    bound_threads,   // bind-to-stage: threads bound to stages, bounded queues between them
    serial,          // the serial elision
    stage_graph,     // a stage-graph scheduler (gramps, danbi, …)
    unknown
};
policy_family classify_policy(std::string_view policy);

inline constexpr std::string_view pipeline_program = "pipeline";   // program.kind of a pipe_while loop
inline constexpr std::string_view graph_program = "graph";         // program.kind of a stage graph
inline constexpr std::string_view tasks_program = "tasks";         // program.kind of task groups outside loops

}   // namespace pipescope::trace::vocab
