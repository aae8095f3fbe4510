// Metadata of the runs a trace_session records on its own (run_metadata.hpp).
#include "run_metadata.hpp"

#include <pipescope/trace/run_metadata.hpp>
#include <pipescope/trace/vocabulary.hpp>
#include <pipescope/trace_session.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace pipescope::detail {

namespace {

namespace vocab = trace::vocab;

// The program's stages as the viewer and the analysis read them: "stage j · name" (or "stage j").
trace::run_stage stage_entry(std::size_t j, const std::string& name, const char* kind) {
    std::string label = vocab::numbered(vocab::stage_prefix, j);
    if (!name.empty()) label += std::string(vocab::stage_name_infix) + name;
    return {.index = j, .name = label, .kind = kind, .note = ""};
}

const char* kind_name(stage_kind k) {
    switch (k) {
        case stage_kind::serial_in_order: return "serial";
        case stage_kind::serial_out_of_order: return "serial out of order";
        case stage_kind::parallel: return "parallel";
    }
    return "parallel";
}

trace::run_metadata common(const std::string& policy, unsigned workers, const session_settings& s,
                           trace::run_program program) {
    trace::run_metadata m;
    m.workload = s.name;
    m.policy = policy;
    m.workers = workers;
    m.recorded_by = s.recorded_by;
    m.trace = trace::run_trace_settings{.detail = std::string(trace::to_string(s.detail)),
                                        .fold_below_ns = trace::default_fold_below_ns,
                                        .counter_quantum_ns = s.counter_quantum_ns};
    m.program = std::move(program);
    m.machine = trace::run_machine{.hardware_threads = std::thread::hardware_concurrency()};
    return m;
}

std::string run_name(const std::string& loop_name, const session_settings& s, const char* fallback,
                     const std::string& policy, unsigned workers) {
    const std::string& name = !loop_name.empty() ? loop_name : !s.name.empty() ? s.name : std::string(fallback);
    return name + " \u00b7 " + policy + " \u00b7 P=" + std::to_string(workers);
}

}   // namespace

trace::run_info pipeline_run(const pipeline_options& options, unsigned workers, const session_settings& s) {
    session_settings named = s;
    if (!options.name.empty()) named.name = options.name;
    if (named.name.empty()) named.name = "pipeline";
    trace::run_info run;
    run.name = run_name(options.name, s, "pipeline", options.policy, workers);
    run.workers = workers;
    run.stage_names = options.stage_names;
    run.metadata_json = trace::to_json(common(options.policy, workers, named, pipeline_program(options, workers)));
    return run;
}

trace::run_info graph_run(const graph::program& g, const graph::run_options& options, unsigned workers,
                          const session_settings& s) {
    session_settings named = s;
    if (named.name.empty()) named.name = "graph";
    trace::run_info run;
    for (const graph::stage_spec& st : g.stages()) run.stage_names.push_back(st.name);
    run.counters = graph::counter_names(g);
    trace::run_metadata meta = common(options.policy, workers, named, graph_program(g, options, workers));
    for (const auto& [key, value] : options.params) meta.params.push_back(key + "=" + value);
    meta.seed = options.seed;
    run.name = run_name({}, s, "graph", options.policy, workers);
    run.workers = workers;
    run.metadata_json = trace::to_json(meta);
    return run;
}

std::string with_virtual_time(const std::string& metadata_json, const scheduler_options& options) {
    std::optional<trace::run_metadata> m = trace::run_metadata_from_json(metadata_json);
    if (!m) throw std::invalid_argument("a run's metadata is not a JSON object: " + metadata_json);
    const virtual_costs& c = options.costs;
    // The caller's own entries (where the costs came from: `pipescope run` names its cost files and
    // its node cost source there) stay; the scheduler says what it charged.
    trace::run_virtual& v = m->virtual_run ? *m->virtual_run : m->virtual_run.emplace();
    v.workers = options.workers;
    const char* jobs =
        options.measure_jobs
            ? "measured time less a clock read (wall clock, or thread CPU clock if the thread lost its CPU), plus virtual_work"
            : "virtual_work only";
    v.job_costs = jobs;
    if (options.node_costs) {
        trace::node_costs_use& n = v.node_costs ? *v.node_costs : v.node_costs.emplace();
        n.charged = "each node from the cost source; the rest of its job: " + std::string(jobs);
    }
    trace::cost_table& costs = v.costs_ns.emplace();
    for (const virtual_cost_entry& e : virtual_cost_entries()) costs[e.name] = c.*e.field;
    return trace::to_json(*m);
}

std::string used_stage_kinds_json(const stage_use& use) {
    using json = nlohmann::json;   // the run summary's metadata, not pipescope-run/1
    if (!use.noted || (use.waited | use.free) == 0) return {};
    json stages = json::array();
    // Stage 0 is entered by starting an iteration, in order (seed 001 §2): serial by construction.
    stages.push_back({{"index", 0}, {"kind", "serial"}});
    for (unsigned j = 1; j < 64; ++j) {
        const std::uint64_t bit = std::uint64_t{1} << j;
        const bool waited = use.waited & bit, free = use.free & bit;
        if (!waited && !free) continue;
        json e = {{"index", j}, {"kind", waited && free ? "mixed" : waited ? "serial" : "parallel"}};
        if (j == 63) e["and_later"] = true;
        stages.push_back(std::move(e));
    }
    return stages.dump();
}

trace::run_info tasks_run(unsigned workers, const session_settings& s) {
    session_settings named = s;
    if (named.name.empty()) named.name = "tasks";
    trace::run_program program{.kind = std::string(vocab::tasks_program),
                               .shape = "fork-join task groups spawned from outside the pool while no loop ran",
                               .stages = std::vector<trace::run_stage>{}};
    trace::run_info run;
    run.name = run_name({}, s, "tasks", "tasks", workers);
    run.workers = workers;
    run.metadata_json = trace::to_json(common("tasks", workers, named, std::move(program)));
    return run;
}

}   // namespace pipescope::detail

namespace pipescope {

trace::run_program pipeline_program(const pipeline_options& options, unsigned workers) {
    const std::size_t count = std::max(options.declared_stages.size(), options.stage_names.size());
    std::vector<trace::run_stage> stages;
    for (std::size_t j = 0; j < count; ++j) {
        const std::string name = j < options.stage_names.size() ? options.stage_names[j] : std::string();
        // Undeclared, stage 0 is still serial (the loop condition and the start of each iteration run
        // there in order, seed 001 §2); whether a later one waits is each iteration's choice.
        const char* kind = j < options.declared_stages.size() ? detail::kind_name(options.declared_stages[j])
                           : j == 0                           ? "serial"
                                                              : "on the fly";
        stages.push_back(detail::stage_entry(j, name, kind));
    }
    trace::run_program program{.kind = "pipeline",
                               .shape = options.declared_stages.empty()
                                            ? "stages decided on the fly by each iteration (pipe_while)"
                                            : "declared stages (construct and run)",
                               .stages = std::move(stages),
                               .lazy_enabling = options.lazy_enabling,
                               .dependency_folding = options.dependency_folding};
    if (trace::vocab::classify_policy(options.policy) == trace::vocab::policy_family::bound_threads) {
        // Threads per parallel stage and Queue_size; no throttle (the queues bound what is in flight).
        program.c = effective_stage_threads(options, workers);
        program.queue = effective_queue_size(options);
    } else {
        program.K = effective_throttle(options, workers);
    }
    return program;
}

trace::run_program graph_program(const graph::program& g, const graph::run_options& options, unsigned workers) {
    std::vector<trace::run_stage> stages;
    for (std::size_t j = 0; j < g.stages().size(); ++j) {
        const graph::stage_spec& st = g.stages()[j];
        stages.push_back(
            {.index = j, .name = st.name, .kind = st.kind == graph::stage_kind::serial ? "serial" : "parallel"});
    }
    const std::vector<std::string> counters = graph::counter_names(g);
    const std::vector<bool> unbounded = graph::unbounded_queues(g, options, workers);
    std::vector<trace::run_queue> queues;
    for (graph::queue_id q = 0; q < g.queues().size(); ++q) {
        const graph::queue_spec& spec = g.queues()[q];
        trace::run_queue e{.index = q,
                           .name = spec.name,
                           .element_bytes = spec.element_size,
                           .packet_elements = spec.shape.packet_elements,
                           .capacity_packets = spec.shape.capacity_packets,
                           .ordered = spec.shape.ordered,
                           .backward = g.backward(q),
                           .unbounded = q < unbounded.size() && unbounded[q],
                           .consumer = g.consumer(q),
                           .counter = counters[q]};
        for (graph::stage_id p : g.producers(q)) e.producers.push_back(p);
        queues.push_back(std::move(e));
    }
    return {.kind = std::string(trace::vocab::graph_program),
            .shape = "a stage graph of " + std::to_string(g.stages().size()) + " stages and " +
                     std::to_string(g.queues().size()) + " queues",
            .stages = std::move(stages),
            .queues = std::move(queues),
            // Not recorded: readers derive "footprint packets" and "footprint bytes" as the sum of
            // the queue counters (bytes: each fill × element_bytes × packet_elements); docs/tracing.md,
            // "Counters".
            .footprint = "sum of queue counters"};
}

std::string pipeline_program_json(const pipeline_options& options, unsigned workers) {
    return trace::to_json(pipeline_program(options, workers));
}

std::string graph_program_json(const graph::program& g, const graph::run_options& options, unsigned workers) {
    return trace::to_json(graph_program(g, options, workers));
}

}   // namespace pipescope
