// Running and recording a workload (recording.hpp).
#include <pipescope/recording/recording.hpp>
#include <pipescope/recording/suggest.hpp>

#include "progress_json.hpp"
#include "progress_line.hpp"
#include "virtual_setup.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/run_metadata.hpp>
#include <pipescope/trace_session.hpp>
#include <pipescope/trace/vocabulary.hpp>
#include <pipescope/workloads/machine.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <exception>
#include <filesystem>
#include <optional>

namespace pipescope::recording {

namespace {

namespace vocab = pipescope::trace::vocab;
namespace num = pipescope::analysis::numbers;

// The run's configuration and program structure, stored in the trace for the viewer and analysis
// (pipescope-run/1: docs/tracing.md, "Metadata"; trace/run_metadata.hpp).
// What every run's metadata holds: the run, the machine, and the program's stages.
trace::run_metadata common_metadata(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                                    const ws::program_info& program, double reference_seconds) {
    trace::run_program p{.kind = program.kind, .shape = program.shape, .stages = std::vector<trace::run_stage>{}};
    for (std::size_t j = 0; j < program.stages.size(); ++j)
        p.stages->push_back(
            {.index = j, .name = program.stages[j].name, .kind = program.stages[j].kind, .note = program.stages[j].note});
    const ws::machine_info machine = ws::describe_machine();
    trace::run_metadata m;
    m.workload = workload.name();
    m.policy = args.request.policy;
    m.workers = sched.workers();
    m.size = ws::size_name(args.request.size);
    m.seed = args.request.seed;
    m.recorded_by = "pipescope run";   // the analysis phrases its advice as command-line options
    // The serial reference's time (T_S): analysis and the compare view take speedups against it.
    m.reference_seconds = reference_seconds;
    m.params = args.params;
    // What the trace records of the nodes; under "auto" the runtime's decision is a "trace detail"
    // instant in the trace (docs/tracing.md, "Detail levels").
    m.trace = trace::run_trace_settings{.detail = std::string(trace::to_string(args.trace_detail)),
                                        .fold_below_ns = trace::default_fold_below_ns,
                                        .counter_quantum_ns = args.counter_quantum_ns};
    m.program = std::move(p);
    m.machine =
        trace::run_machine{.cpu = machine.cpu, .hardware_threads = machine.hardware_threads, .kernel = machine.kernel};
    return m;
}

// A stage graph's program is the runtime's description of it (graph_program_json, as a
// trace_session writes it: stages, queues, footprint; docs/tracing.md, "Metadata") in the workload's
// words: its shape and stage notes.
trace::run_program graph_program_of(const ws::program_info& program) {
    std::optional<trace::run_program> graph = trace::run_program_from_json(program.graph_json);
    if (!graph) throw std::logic_error("the workload's graph_json is not a JSON object");
    graph->shape = program.shape;
    if (graph->stages)
        for (std::size_t j = 0; j < program.stages.size() && j < graph->stages->size(); ++j)
            (*graph->stages)[j].note = program.stages[j].note;
    return *graph;
}

// The program as this run sizes it: rules that depend on the worker count (DANBI's queue
// capacities) take the scheduler's, virtual workers included.
ws::program_info program_of(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload) {
    ws::run_request request = args.request;
    request.workers = sched.workers();
    return workload.program(request);
}

trace::run_metadata metadata_of(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                                double reference_seconds) {
    ws::param_set params = args.request.params;   // a copy: the workload takes its own later
    const pipescope::pipeline_options options = ws::pipeline_options_from(args.request, params);
    const ws::program_info program = program_of(sched, args, workload);
    trace::run_metadata meta = common_metadata(sched, args, workload, program, reference_seconds);
    if (program.kind == vocab::graph_program) {
        meta.program = graph_program_of(program);
        return meta;
    }
    // How the loop is scheduled, as the runtime's sessions describe any pipe_while (K, lazy enabling,
    // dependency folding; bind-to-stage's c and Queue_size instead of K); the stages stay the workload's.
    const trace::run_program loop = pipescope::pipeline_program(options, sched.workers());
    meta.program->K = loop.K;
    meta.program->lazy_enabling = loop.lazy_enabling;
    meta.program->dependency_folding = loop.dependency_folding;
    meta.program->c = loop.c;
    meta.program->queue = loop.queue;
    return meta;
}

}   // namespace

std::string run_metadata(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                         double reference_seconds) {
    return trace::to_json(metadata_of(sched, args, workload, reference_seconds));
}

namespace {

// The run `pipescope run -o` records: the measured run only (the serial reference and warm-ups are
// not), described by the workload (docs/tracing.md, "Metadata").
pipescope::trace::run_info measured_run(const pipescope::scheduler& sched, const run_args& args,
                                        const ws::workload& workload, double reference_seconds,
                                        const virtual_setup* virtual_costs) {
    const ws::program_info program = program_of(sched, args, workload);
    pipescope::trace::run_info run;
    run.name = fmt::format("{} · {} · P={}", workload.name(), args.request.policy, sched.workers());
    // With node costs from a recording, the serial reference's time is that recording's too: the
    // file then depends on nothing measured now (docs/virtual.md, "Determinism").
    if (virtual_costs && virtual_costs->node_costs) reference_seconds = virtual_costs->node_costs->reference_seconds();
    trace::run_metadata meta = metadata_of(sched, args, workload, reference_seconds);
    if (virtual_costs) meta.virtual_run = virtual_costs->origin;   // the session adds what the scheduler charged
    run.metadata_json = trace::to_json(meta);
    run.counters = program.counters;
    // The workloads name their stages "stage j · what it does": the slices get the "what".
    for (std::size_t j = 0; j < program.stages.size(); ++j) {
        std::string name = program.stages[j].name;
        const std::string prefix = vocab::numbered(vocab::stage_prefix, j) + std::string(vocab::stage_name_infix);
        if (vocab::starts_with(name, prefix)) name.erase(0, prefix.size());
        run.stage_names.push_back(std::move(name));
    }
    return run;
}

pipescope::trace_session_options session_options(const run_args& args, const ws::workload& workload) {
    pipescope::trace_session_options o;
    o.name = workload.name();
    o.detail = args.trace_detail;
    o.buffer_mib = args.trace_buffer_mib;
    o.compress = args.trace_compress;
    o.counter_quantum_ns = args.counter_quantum_ns;
    o.loops_are_runs = false;   // the measured run is the run, whatever loops it holds
    return o;
}

void print_graph_stats(const pipescope::graph::run_stats& g) {
    fmt::print("  graph     {} instances, {} resumptions, {} preemptions, {} blocked; peak footprint {} packets, {} "
               "bytes\n",
               num::count(g.instances), num::count(g.resumptions), num::count(g.preemptions), num::count(g.blocked),
               num::count(g.peak_packets), num::count(g.peak_bytes));
    for (const auto& q : g.queues)
        fmt::print("  queue     {:<24} peak {} of {} packets{}, {} elements through\n", q.name,
                   num::count(q.stats.peak_packets_in_use), num::count(q.capacity_packets),
                   q.unbounded ? " (unbounded)" : "", num::count(q.stats.elements_pushed));
    // A pinning policy's placement (static): a split stage lists its replicas' workers in turn order.
    for (const auto& p : g.placement) {
        std::string workers;
        for (unsigned w : p.workers) workers += (workers.empty() ? "" : ",") + std::to_string(w);
        const bool split = p.workers.size() > 1;
        fmt::print("  placement {:<24} {} {}{}\n", p.stage, split ? "workers" : "worker", workers,
                   split ? fmt::format(" (split: instance i on the (i mod {})-th)", p.workers.size()) : "");
    }
}

// "1,204,331 jobs, 412 steals" so far.
std::string work_done(const pipescope::scheduler& sched) {
    const work_so_far w = work_counts(sched);
    return fmt::format("{} jobs, {} steals (Ctrl-C stops the run)", num::count(w.jobs), num::count(w.steals));
}

double cpu_seconds(clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}   // namespace

std::string refusal_reason(const std::string& workload, const std::string& policy) {
    const ws::workload* w = ws::find_workload(workload);
    if (!w) {
        std::vector<std::string> names;
        for (const ws::workload* known : ws::all_workloads()) names.push_back(std::string(known->name()));
        const std::string hint = did_you_mean(workload, names);
        throw usage_error("unknown workload '" + workload + "'" + (hint.empty() ? " (see `pipescope list`)" : hint));
    }
    const std::vector<std::string> policies = ws::all_policy_names();
    if (std::find(policies.begin(), policies.end(), policy) == policies.end()) {
        const std::string hint = did_you_mean(policy, policies);
        std::string known;
        for (const std::string& p : policies) known += (known.empty() ? "" : ", ") + p;
        throw usage_error("unknown policy '" + policy + "'" + (hint.empty() ? " (known: " + known + ")" : hint));
    }
    return w->cannot_run_under(policy);
}

namespace {

// The workload to run, after refusing what cannot run: an unknown or refused workload and policy,
// and a trace path that cannot be a file (refused before the workload runs, not after).
const ws::workload& checked_workload(const run_args& args) {
    if (const std::string why = refusal_reason(args.workload, args.request.policy); !why.empty())
        throw usage_error(args.workload + " cannot run under policy '" + args.request.policy + "': " + why);
    if (args.trace && !args.trace_path.empty()) pipescope::trace::check_output_path(args.trace_path);
    return *ws::find_workload(args.workload);
}

pipescope::scheduler_options scheduler_options_of(const run_args& args, const virtual_setup* virt) {
    return {.workers = args.workers,
            .virtual_time = args.virtual_time,
            .measure_jobs = !(virt && virt->node_costs),   // fixed costs: nothing measured
            .costs = virt ? virt->costs : pipescope::virtual_costs{},
            .node_costs = virt ? virt->node_costs.get() : nullptr};
}

// The measured run as the workload marks it (on_measured_start, on_measured_end): its trace,
// opened at its start so that a run refused before it (a bad parameter) leaves no file, and the
// CPU clocks at both ends.
struct measured_window {
    std::optional<pipescope::trace_session> session;
    double cpu_at_start = 0, process_cpu_at_start = 0;
    std::optional<double> cpu_at_end, process_cpu_at_end;   // the measured run's end, if the workload says
};

// Sets the request's hooks that open the window's trace and read its clocks.
void watch_measured_run(ws::run_request& request, measured_window& w, pipescope::scheduler& sched, const run_args& args,
                        const ws::workload& workload, const virtual_setup* virt, std::stop_token cancel,
                        progress_json& progress) {
    request.on_measured_start = [&w, &sched, &args, &workload, virt, cancel, &progress](double reference_seconds) {
        // A Ctrl-C during the set-up that no check of the workload's caught: nothing is recorded.
        ws::throw_if_cancelled(cancel);
        if (!args.trace_path.empty() && args.trace) {
            w.session.emplace(sched, args.trace_path, session_options(args, workload));
            w.session->begin_run(measured_run(sched, args, workload, reference_seconds, virt));
        }
        progress.measured_start(reference_seconds);
        w.cpu_at_start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
        w.process_cpu_at_start = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    };
    request.on_measured_end = [&w] {
        w.cpu_at_end = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
        w.process_cpu_at_end = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    };
    request.cancel = cancel;
}

// Whether a cancelled run did nothing: no iteration (or a graph's stage instance, or element
// pushed). Its trace would hold nothing but a "cancelled" marker.
bool nothing_done(const ws::run_report& report) {
    bool nothing = report.stats.iterations == 0;
    if (const auto& g = report.graph) {
        nothing = g->instances == 0 && g->resumptions == 0;
        for (const auto& q : g->queues) nothing = nothing && q.stats.elements_pushed == 0;
    }
    return nothing;
}

// Ends the trace of a finished run: removed if nodes the costs recording did not have cost nothing
// (the run is not the one asked for: throws), discarded if the run was cancelled before doing
// anything (a trace the user has stays), else closed.
void finish_trace(recorded_run& r, measured_window& w, const run_args& args, const ws::workload& workload,
                  const virtual_setup* virt) {
    if (const std::string missing = virt && virt->node_costs ? virt->node_costs->missing_error() : ""; !missing.empty()) {
        if (w.session) {
            if (w.session->run_open()) w.session->end_run("node costs missing");
            w.session->close();
            std::filesystem::remove(args.trace_path);   // a file whose times are wrong is no trace of this run
        }
        throw std::runtime_error(missing);
    }
    if (r.report.stats.cancelled && nothing_done(r.report)) {
        r.nothing_recorded = true;
        if (w.session) w.session->discard();
    } else if (!args.trace_path.empty() && args.trace) {
        if (!w.session)
            throw std::logic_error("workload " + workload.name() + " never called on_measured_start: nothing was recorded");
        w.session->end_run(r.report.stats.cancelled ? "cancelled" : "");
        w.session->close();
        r.trace_line = w.session->report("  trace     ");
    }
}

// The CPU time of the measured run, up to its end as the workload marked it, else until now.
void read_cpu_times(recorded_run& r, const measured_window& w) {
    r.measured_cpu_seconds = w.cpu_at_end.value_or(cpu_seconds(CLOCK_THREAD_CPUTIME_ID)) - w.cpu_at_start;
    r.measured_process_cpu_seconds =
        w.process_cpu_at_end.value_or(cpu_seconds(CLOCK_PROCESS_CPUTIME_ID)) - w.process_cpu_at_start;
}

// What `pipescope run` prints of the run besides the workload's report: the workers' counters, the
// virtual span and where its costs came from.
void describe_run(recorded_run& r, const pipescope::scheduler& sched, const run_args& args, const virtual_setup* virt) {
    r.virtual_time = args.virtual_time;
    if (virt) r.virtual_lines = virt->lines;
    if (args.virtual_time) {
        const auto span = sched.last_virtual_span();
        r.virtual_makespan_ns = span.end_ns - span.begin_ns;
    }
    r.workers = sched.workers();
    for (unsigned i = 0; i < sched.workers(); ++i) {
        const auto c = sched.counters(i);
        r.total.jobs_run += c.jobs_run;
        r.total.steals += c.steals;
        r.total.steal_attempts += c.steal_attempts;
        r.total.parks += c.parks;
    }
}

}   // namespace

recorded_run record_run(const run_args& args, std::stop_token cancel) {
    const ws::workload& w = checked_workload(args);
    std::optional<virtual_setup> virt;
    if (args.virtual_time) virt.emplace(prepare_virtual(args));
    const virtual_setup* v = virt ? &*virt : nullptr;
    pipescope::scheduler sched(scheduler_options_of(args, v));
    ws::run_request request = args.request;
    measured_window window;
    progress_json progress(args.progress_json, sched);   // --progress json: lines for a program
    watch_measured_run(request, window, sched, args, w, v, cancel, progress);
    recorded_run r;
    try {
        // On a terminal, a run longer than two seconds says how far it got (the workers' own counters).
        const progress_line progress(fmt::format("{} · {} · P={}", w.name(), request.policy, sched.workers()),
                                     [&sched] { return work_done(sched); });
        r.report = w.run(sched, request);
    } catch (const std::exception& e) {
        // The run failed (a stage threw): the trace still ends whole, its summary says how.
        if (window.session && window.session->run_open()) window.session->end_run(std::string("exception: ") + e.what());
        throw;
    }
    read_cpu_times(r, window);
    progress.phase("writing");
    finish_trace(r, window, args, w, v);
    progress.done(r.trace_line.empty() ? std::string() : args.trace_path);
    r.workload = w.name();
    r.policy = request.policy;
    describe_run(r, sched, args, v);
    return r;
}

void print_run(const recorded_run& r, ws::input_size size) {
    const auto& report = r.report;
    const auto& st = report.stats;
    fmt::print("{} · {} · P={} · size {}\n", r.workload, r.policy, r.workers, ws::size_name(size));
    if (st.cancelled)
        fmt::print("  result    cancelled after {} iterations: the output is incomplete, not compared\n",
                   num::count(st.iterations));
    else
        fmt::print("  result    {} — {}\n", report.description,
                   report.matches_reference ? "matches the serial reference" : "DIFFERS from the serial reference");
    fmt::print("  time      {} s   (serial reference {} s, ratio {})\n", num::fixed(report.seconds, 4),
               num::fixed(report.reference_seconds, 4),
               num::fixed(report.reference_seconds > 0 ? report.seconds / report.reference_seconds : 0.0, 2));
    if (report.graph)   // a stage graph: its queues and footprint (seed 004 Table III)
        print_graph_stats(*report.graph);
    else if (vocab::classify_policy(r.policy) ==
             vocab::policy_family::bound_threads)   // its stats count blocking on the queues (docs/runtime.md)
        fmt::print("  pipeline  {} iterations, peak {} live, queues of {}; threads blocked {} times, {} of them on a "
                   "full queue\n",
                   num::count(st.iterations), num::count(st.peak_live), st.throttle, num::count(st.suspensions),
                   num::count(st.throttle_waits));
    else
        fmt::print("  pipeline  {} iterations, peak {} live of K={}, {} suspensions, {} throttle waits, {} tail "
                   "swaps\n",
                   num::count(st.iterations), num::count(st.peak_live), st.throttle, num::count(st.suspensions),
                   num::count(st.throttle_waits), num::count(st.tail_swaps));
    if (r.virtual_time) {
        fmt::print("  virtual   {} s on {} virtual workers (the measured loop in virtual time; the time above is "
                   "real)\n",
                   num::fixed(static_cast<double>(r.virtual_makespan_ns) * 1e-9, 4), r.workers);
        for (const std::string& line : r.virtual_lines) fmt::print("            {}\n", line);
    }
    fmt::print("  workers   {} jobs, {} steals of {} attempts, {} parks\n", num::count(r.total.jobs_run),
               num::count(r.total.steals), num::count(r.total.steal_attempts), num::count(r.total.parks));
    fmt::print("{}", r.trace_line);
}

}   // namespace pipescope::recording
