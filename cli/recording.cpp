// Running and recording a workload (recording.hpp).
#include "recording.hpp"

#include <pipescope/trace/drain_thread.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/vocabulary.hpp>
#include <pipescope/workloads/machine.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <thread>

namespace pipescope::cli {

namespace {

namespace vocab = pipescope::trace::vocab;

// The run's configuration and program structure, stored in the trace for the viewer and analysis
// (docs/tracing.md, "Metadata").
// What every run's metadata holds: the run, the machine, and the program's stages.
nlohmann::json common_metadata(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                               const ws::program_info& program, double reference_seconds) {
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t j = 0; j < program.stages.size(); ++j)
        stages.push_back({{"index", j}, {"name", program.stages[j].name}, {"kind", program.stages[j].kind},
                          {"note", program.stages[j].note}});
    const ws::machine_info machine = ws::describe_machine();
    return {{"format", "pipescope-run/1"},
            {"workload", workload.name()},
            {"policy", args.request.policy},
            {"workers", sched.workers()},
            {"size", ws::size_name(args.request.size)},
            {"seed", args.request.seed},
            // The serial reference's time (T_S): analysis and the compare view take speedups against it.
            {"reference_seconds", reference_seconds},
            {"params", args.params},
            // What the trace records of the nodes; under "auto" the runtime's decision is a
            // "trace detail" instant in the trace (docs/tracing.md, "Detail levels").
            {"trace", {{"detail", pipescope::trace::to_string(args.trace_detail)},
                       {"fold_below_ns", pipescope::trace::default_fold_below_ns},
                       {"counter_quantum_ns", args.counter_quantum_ns}}},
            {"program", {{"kind", program.kind}, {"shape", program.shape}, {"stages", stages}}},
            {"machine", {{"cpu", machine.cpu}, {"hardware_threads", machine.hardware_threads}, {"kernel", machine.kernel}}}};
}

// A stage graph adds its queues (docs/tracing.md, "Metadata"): who produces and consumes each, its
// shape, whether the policy bounds it, and the counter track of its packets in use.
std::string graph_metadata(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                           const ws::program_info& program, double reference_seconds) {
    nlohmann::json meta = common_metadata(sched, args, workload, program, reference_seconds);
    nlohmann::json queues = nlohmann::json::array();
    for (std::size_t q = 0; q < program.queues.size(); ++q) {
        const ws::queue_info& qi = program.queues[q];
        queues.push_back({{"index", q},
                          {"name", qi.name},
                          {"element_bytes", qi.element_bytes},
                          {"packet_elements", qi.packet_elements},
                          {"capacity_packets", qi.capacity_packets},
                          {"ordered", qi.ordered},
                          {"backward", qi.backward},
                          {"unbounded", qi.unbounded},
                          {"producers", qi.producers},
                          {"consumer", qi.consumer},
                          {"counter", qi.counter}});
    }
    meta["program"]["queues"] = queues;
    // Not recorded: readers derive "footprint packets" and "footprint bytes" as the sum of the queue
    // counters (bytes: each fill × element_bytes × packet_elements); docs/tracing.md, "Counters".
    meta["program"]["footprint"] = "sum of queue counters";
    return meta.dump();
}

std::string run_metadata(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                         double reference_seconds) {
    ws::param_set params = args.request.params;   // a copy: the workload takes its own later
    const pipescope::pipeline_options options = ws::pipeline_options_from(args.request, params);
    const ws::program_info program = workload.program(args.request);
    if (program.kind == vocab::graph_program) return graph_metadata(sched, args, workload, program, reference_seconds);
    nlohmann::json meta = common_metadata(sched, args, workload, program, reference_seconds);
    meta["program"]["K"] = pipescope::effective_throttle(options, sched.workers());
    meta["program"]["lazy_enabling"] = options.lazy_enabling;
    meta["program"]["dependency_folding"] = options.dependency_folding;
    if (vocab::classify_policy(options.policy) == vocab::policy_family::bound_threads) {
        // Its threads per parallel stage and Queue_size, defaults resolved. It has no throttle: the
        // queues bound what is in flight, so the DAG gets no throttling edges (no K).
        meta["program"].erase("K");
        meta["program"]["c"] = pipescope::effective_stage_threads(options, sched.workers());
        meta["program"]["queue"] = pipescope::effective_queue_size(options);
    }
    return meta.dump();
}

// Records a run into a Perfetto trace: a recorder attached to the scheduler, a thread draining
// full chunks into the writer while the run goes on (bounded memory), the rest at the end.
class trace_session {
public:
    trace_session(pipescope::scheduler& sched, const run_args& args, const ws::workload& workload)
        : sched_(sched), recorder_(sched.workers(), args.trace_buffer_mib << 20),
          writer_(std::filesystem::path(args.trace_path), {args.trace_compress, 1, args.counter_quantum_ns}),
          trace_path_(args.trace_path), buffer_mib_(args.trace_buffer_mib), args_(args), workload_(workload) {
        recorder_.set_detail(args.trace_detail);
    }
    ~trace_session() {
        if (drainer_) {   // the run failed: stop recording; the writer drops its temporary file
            sched_.attach_recorder(nullptr);
            drainer_.reset();
        }
    }

    // Starts recording: called right before the measured run (run_request::on_measured_start).
    void start(double reference_seconds) {
        // Attach first: attaching waits for every worker to pass a safe point (waking parked ones),
        // which can take milliseconds that belong to no run. The clock starts once it is done.
        sched_.attach_recorder(&recorder_);
        recorder_.restart_clock();
        started_ = true;
        writer_.begin_run({workload_.name() + " · " + args_.request.policy + " · P=" + std::to_string(sched_.workers()),
                           sched_.workers(), run_metadata(sched_, args_, workload_, reference_seconds),
                           workload_.program(args_.request).counters},
                          pipescope::trace::run_clock::calibrating(recorder_.start_clock()));
        drainer_.emplace(recorder_, writer_.sink());
    }

    // Writes the trace file; returns the line that describes it.
    std::string finish() {
        if (!started_)
            throw std::logic_error("workload " + workload_.name() + " never called on_measured_start: nothing was recorded");
        sched_.attach_recorder(nullptr);   // the workers stop recording
        drainer_->stop();                   // rethrows a failure of the writer (e.g. the disk is full)
        drainer_.reset();
        recorder_.flush(writer_.sink());
        writer_.end_run();
        writer_.finish();
        const auto& st = writer_.stats();
        char line[512];
        std::snprintf(line, sizeof line,
                      "  trace     %s: %llu slices, %llu flows, %llu counter values; %.1f MB, %.2f bytes per event\n",
                      trace_path_.c_str(), (unsigned long long)st.slices, (unsigned long long)st.flows,
                      (unsigned long long)st.counter_values, static_cast<double>(st.bytes) / 1e6,
                      st.records ? static_cast<double>(st.bytes) / static_cast<double>(st.records + 2 * (st.folded_nodes - st.folded_runs)) : 0.0);
        std::string out = line;
        if (st.folded_runs) {
            // Bytes per event above count a folded run as the 2 x nodes events it replaces.
            std::snprintf(line, sizeof line,
                          "  detail    %s: %llu folded runs hold %llu nodes; %.2f bytes per record written "
                          "(docs/tracing.md, \"Detail levels\")\n",
                          std::string(pipescope::trace::to_string(args_.trace_detail)).c_str(),
                          (unsigned long long)st.folded_runs, (unsigned long long)st.folded_nodes,
                          st.records ? static_cast<double>(st.bytes) / static_cast<double>(st.records) : 0.0);
            out += line;
        }
        // Perfetto's trace processor in a browser tab (WebAssembly, at most 4 GiB) needs about 600 bytes per
        // event: measured with the v52 build, 1.39 M slices took 0.79 GB and 5.03 M slices 3.1 GB, and
        // a file of 8 M slices ran out of memory (docs/tracing.md, "What the Perfetto UI can open").
        constexpr std::uint64_t ui_event_limit = 4'000'000;
        if (const std::uint64_t events = st.slices + st.instants + st.counter_values + st.flows; events > ui_event_limit) {
            std::snprintf(line, sizeof line,
                          "  WARNING   %.1f M events: the Perfetto UI in a browser is unlikely to load this file (about "
                          "%.0f M is its limit); record with --trace-detail folded, or a shorter run, or open it "
                          "with Perfetto's native trace_processor (trace_processor --httpd) or pipescope-viewer\n",
                          static_cast<double>(events) / 1e6, static_cast<double>(ui_event_limit) / 1e6);
            out += line;
        }
        if (const auto lost = recorder_.dropped_total()) {
            std::snprintf(line, sizeof line,
                          "  WARNING   %llu events were dropped: the writer fell behind the workers (the trace marks "
                          "where); a bigger --trace-buffer (now %zu MiB) holds more\n",
                          (unsigned long long)lost, buffer_mib_);
            out += line;
        }
        return out;
    }

private:
    pipescope::scheduler& sched_;
    pipescope::trace::recorder recorder_;
    pipescope::trace::perfetto_writer writer_;
    std::string trace_path_;
    std::size_t buffer_mib_;
    const run_args& args_;
    const ws::workload& workload_;
    bool started_ = false;
    std::optional<pipescope::trace::drain_thread> drainer_;   // while recording
};

void print_graph_stats(const pipescope::graph::run_stats& g) {
    std::printf("  graph     %llu instances, %llu resumptions, %llu preemptions, %llu blocked; peak footprint "
                "%zu packets, %zu bytes\n",
                (unsigned long long)g.instances, (unsigned long long)g.resumptions, (unsigned long long)g.preemptions,
                (unsigned long long)g.blocked, g.peak_packets, g.peak_bytes);
    for (const auto& q : g.queues)
        std::printf("  queue     %-24s peak %zu of %zu packets%s, %llu elements through\n", q.name.c_str(),
                    q.stats.peak_packets_in_use, q.capacity_packets, q.unbounded ? " (unbounded)" : "",
                    (unsigned long long)q.stats.elements_pushed);
}


}  // namespace

std::string refusal_reason(const std::string& workload, const std::string& policy) {
    const ws::workload* w = ws::find_workload(workload);
    if (!w) throw usage_error("unknown workload '" + workload + "' (see `pipescope list`)");
    std::string known;
    bool policy_known = false;
    for (const std::string& p : ws::all_policy_names()) {
        policy_known = policy_known || p == policy;
        known += (known.empty() ? "" : ", ") + p;
    }
    if (!policy_known) throw usage_error("unknown policy '" + policy + "' (known: " + known + ")");
    return w->cannot_run_under(policy);
}

recorded_run record_run(const run_args& args, std::stop_token cancel) {
    if (const std::string why = refusal_reason(args.workload, args.request.policy); !why.empty())
        throw usage_error(args.workload + " cannot run under policy '" + args.request.policy + "': " + why);
    const ws::workload* w = ws::find_workload(args.workload);

    pipescope::scheduler sched({args.workers});
    ws::run_request request = args.request;
    const bool recording = !args.trace_path.empty() && args.trace;
    std::unique_ptr<trace_session> session;
    if (recording) {
        session = std::make_unique<trace_session>(sched, args, *w);
        request.on_measured_start = [&session](double reference_seconds) { session->start(reference_seconds); };
    }
    request.cancel = cancel;
    recorded_run r;
    r.report = w->run(sched, request);
    r.trace_line = session ? session->finish() : "";
    r.workload = w->name();
    r.policy = request.policy;
    r.workers = sched.workers();
    for (unsigned i = 0; i < sched.workers(); ++i) {
        const auto c = sched.counters(i);
        r.total.jobs_run += c.jobs_run;
        r.total.steals += c.steals;
        r.total.steal_attempts += c.steal_attempts;
        r.total.parks += c.parks;
    }
    return r;
}

void print_run(const recorded_run& r, ws::input_size size) {
    const auto& report = r.report;
    const auto& st = report.stats;
    std::printf("%s · %s · P=%u · size %s\n", r.workload.c_str(), r.policy.c_str(), r.workers, ws::size_name(size));
    if (st.cancelled)
        std::printf("  result    cancelled after %llu iterations: the output is incomplete, not compared\n",
                    (unsigned long long)st.iterations);
    else
        std::printf("  result    %s — %s\n", report.description.c_str(),
                    report.matches_reference ? "matches the serial reference" : "DIFFERS from the serial reference");
    std::printf("  time      %.4f s   (serial reference %.4f s, ratio %.2f)\n", report.seconds,
                report.reference_seconds, report.reference_seconds > 0 ? report.seconds / report.reference_seconds : 0.0);
    if (report.graph)   // a stage graph: its queues and footprint (seed 004 Table III)
        print_graph_stats(*report.graph);
    else if (vocab::classify_policy(r.policy) == vocab::policy_family::bound_threads)   // its stats count blocking on the queues (docs/runtime.md)
        std::printf("  pipeline  %llu iterations, peak %llu live, queues of %u; threads blocked %llu times, "
                    "%llu of them on a full queue\n",
                    (unsigned long long)st.iterations, (unsigned long long)st.peak_live, st.throttle,
                    (unsigned long long)st.suspensions, (unsigned long long)st.throttle_waits);
    else
        std::printf("  pipeline  %llu iterations, peak %llu live of K=%u, %llu suspensions, %llu throttle waits, "
                    "%llu tail swaps\n",
                    (unsigned long long)st.iterations, (unsigned long long)st.peak_live, st.throttle,
                    (unsigned long long)st.suspensions, (unsigned long long)st.throttle_waits,
                    (unsigned long long)st.tail_swaps);
    std::printf("  workers   %llu jobs, %llu steals of %llu attempts, %llu parks\n",
                (unsigned long long)r.total.jobs_run, (unsigned long long)r.total.steals,
                (unsigned long long)r.total.steal_attempts, (unsigned long long)r.total.parks);
    std::fputs(r.trace_line.c_str(), stdout);
}

}  // namespace pipescope::cli
