// The `pipescope` command.
//
//   pipescope run <workload> [--policy NAME] [--workers N] [--size tiny|small|large] [--param k=v]...
//   pipescope list
//
// `run` checks the workload's output against its serial reference and exits 1 if they differ,
// 2 on a usage error.
#include "commands.hpp"
#include "interrupt.hpp"

#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/workloads/machine.hpp>
#include <pipescope/workloads/workload.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ws = pipescope::workloads;

namespace {

constexpr const char* usage_text =
    "usage: pipescope run <workload> [--policy NAME] [--workers N] [--size tiny|small|large] [--seed N]\n"
    "                     [--param key=value]... [-o trace.pftrace [--no-trace] [--trace-buffer MiB]\n"
    "                     [--trace-plain]]\n"
    "       pipescope validate <trace.pftrace>\n"
    "       pipescope export-json <trace.pftrace> <out.json>\n"
    "       pipescope stats <trace.pftrace>... [--run NAME] [--json]\n"
    "       pipescope compare <a.pftrace> <b.pftrace>... [--json]\n"
    "       pipescope dedup-restore <archive> <out>\n"
    "       pipescope list [--json]\n"
    "       pipescope --help\n";

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct run_args {
    std::string workload;
    ws::run_request request;
    unsigned workers = 0;
    std::string trace_path;   // -o: record a Perfetto trace there
    std::size_t trace_buffer_mib = 64;   // --trace-buffer: the recorder's memory budget
    bool trace_compress = true;          // --trace-plain writes packets uncompressed
    bool trace = true;        // --no-trace turns recording off even with -o
    std::vector<std::string> params;   // as given, for the trace's metadata
};

unsigned parse_workers(const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long v = std::stoul(text, &used);
        if (used == text.size() && v >= 1 && v <= 1024) return static_cast<unsigned>(v);
    } catch (const std::exception&) {
    }
    throw usage_error("--workers " + text + ": expected a number of workers between 1 and 1024");
}

std::uint64_t parse_seed(const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long long v = std::stoull(text, &used);
        if (used == text.size() && !text.empty() && text[0] != '-') return v;
    } catch (const std::exception&) {
    }
    throw usage_error("--seed " + text + ": expected a non-negative integer");
}

std::size_t parse_mib(const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long v = std::stoul(text, &used);
        if (used == text.size() && v >= 1 && v <= 65536) return v;
    } catch (const std::exception&) {
    }
    throw usage_error("--trace-buffer " + text + ": expected a size in MiB between 1 and 65536");
}

run_args parse_run(const std::vector<std::string>& args) {
    run_args r;
    std::vector<std::string> params;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw usage_error(a + " needs a value");
            return args[++i];
        };
        if (a == "--policy") r.request.policy = value();
        else if (a == "--workers") r.workers = parse_workers(value());
        else if (a == "--size") r.request.size = ws::parse_size(value());
        else if (a == "--seed") r.request.seed = parse_seed(value());
        else if (a == "--param") params.push_back(value());
        else if (a == "-o" || a == "--output") r.trace_path = value();
        else if (a == "--no-trace") r.trace = false;
        else if (a == "--trace-buffer") r.trace_buffer_mib = parse_mib(value());
        else if (a == "--trace-plain") r.trace_compress = false;
        else if (!a.empty() && a[0] == '-') throw usage_error("unknown option " + a);
        else if (r.workload.empty()) r.workload = a;
        else throw usage_error("unexpected argument " + a + " (one workload per run)");
    }
    if (r.workload.empty()) throw usage_error("run: which workload? (see `pipescope list`)");
    r.request.params = ws::param_set::parse(params);
    r.params = params;
    return r;
}

// Reads a trace and says what it holds, or what is wrong with it and where. Exit 0 when it follows
// the importer's rules and every slice closes, 1 otherwise.
int validate_trace(const std::vector<std::string>& args) {
    if (args.size() != 1) throw usage_error("validate: give exactly one trace file");
    std::ifstream in(args[0], std::ios::binary);
    if (!in) {
        std::cerr << "pipescope: validate: cannot open " << args[0] << "\n";
        return 1;
    }
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    pipescope::trace::perfetto_summary s;
    try {
        s = pipescope::trace::summarize_perfetto(bytes);
    } catch (const pipescope::trace::proto::decode_error& e) {
        std::cerr << "pipescope: " << args[0] << ": malformed at " << e.what() << "\n";
        return 1;
    }
    std::printf("%s: %zu bytes, %llu packets, %llu tracks, %llu slices (%llu open, %llu unmatched ends), "
                "%llu instants, %llu flows, %llu counter values\n",
                args[0].c_str(), bytes.size(), (unsigned long long)s.packets, (unsigned long long)s.tracks,
                (unsigned long long)s.slices, (unsigned long long)s.open_slices, (unsigned long long)s.unmatched_ends,
                (unsigned long long)s.instants, (unsigned long long)s.flows, (unsigned long long)s.counter_values);
    for (const auto& p : s.problems) std::printf("  problem: %s\n", p.c_str());
    // A pipescope run begins with a "run" instant and ends with a "run summary": a recording that
    // was cut short (the process killed, a NAME.tmp left behind) has the first without the second.
    const std::uint64_t runs = s.runs, summaries = s.run_summaries;
    if (runs > summaries)
        std::printf("  PARTIAL: %llu of %llu recorded runs have no run summary: the recording was cut short "
                    "(slices still open were left unterminated)\n",
                    (unsigned long long)(runs - summaries), (unsigned long long)runs);
    if (s.packets == 0) std::printf("  EMPTY: the file holds no packets (a recording that never wrote anything)\n");
    const bool ok = s.problems.empty() && s.open_slices == 0 && s.unmatched_ends == 0 && runs == summaries &&
                    s.packets > 0;
    std::printf("%s\n", ok ? "ok" : runs > summaries || s.packets == 0 ? "NOT OK (partial)" : "NOT OK");
    return ok ? 0 : 1;
}

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
    meta["program"]["footprint_counters"] = {"footprint packets", "footprint bytes"};
    return meta.dump();
}

std::string run_metadata(const pipescope::scheduler& sched, const run_args& args, const ws::workload& workload,
                         double reference_seconds) {
    ws::param_set params = args.request.params;   // a copy: the workload takes its own later
    const pipescope::pipeline_options options = ws::pipeline_options_from(args.request, params);
    const ws::program_info program = workload.program(args.request);
    if (program.kind == "graph") return graph_metadata(sched, args, workload, program, reference_seconds);
    nlohmann::json meta = common_metadata(sched, args, workload, program, reference_seconds);
    meta["program"]["K"] = pipescope::effective_throttle(options, sched.workers());
    meta["program"]["lazy_enabling"] = options.lazy_enabling;
    meta["program"]["dependency_folding"] = options.dependency_folding;
    if (options.policy == "bind-to-stage") {
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
          writer_(std::filesystem::path(args.trace_path), {args.trace_compress, 1}),
          trace_path_(args.trace_path), buffer_mib_(args.trace_buffer_mib), args_(args), workload_(workload) {
    }
    ~trace_session() {
        if (drainer_.joinable()) stop_drainer();   // the run failed: the writer drops its temporary file
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
        drainer_ = std::thread([this] {
            try {
                while (!stop_.load(std::memory_order_acquire)) {
                    if (recorder_.drain(writer_.sink()) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
            } catch (...) {   // e.g. the disk is full: the run goes on, finish() reports it
                drain_error_ = std::current_exception();
            }
        });
    }

    // Writes the trace file; returns the line that describes it.
    std::string finish() {
        if (!started_)
            throw std::logic_error("workload " + workload_.name() + " never called on_measured_start: nothing was recorded");
        stop_drainer();
        if (drain_error_) std::rethrow_exception(drain_error_);
        recorder_.flush(writer_.sink());
        writer_.end_run();
        writer_.finish();
        const auto& st = writer_.stats();
        char line[512];
        std::snprintf(line, sizeof line,
                      "  trace     %s: %llu slices, %llu flows, %llu counter values; %.1f MB, %.1f bytes per event\n",
                      trace_path_.c_str(), (unsigned long long)st.slices, (unsigned long long)st.flows,
                      (unsigned long long)st.counter_values, static_cast<double>(st.bytes) / 1e6,
                      st.records ? static_cast<double>(st.bytes) / static_cast<double>(st.records) : 0.0);
        std::string out = line;
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
    void stop_drainer() {
        sched_.attach_recorder(nullptr);
        stop_.store(true, std::memory_order_release);
        if (drainer_.joinable()) drainer_.join();
    }

    pipescope::scheduler& sched_;
    pipescope::trace::recorder recorder_;
    pipescope::trace::perfetto_writer writer_;
    std::string trace_path_;
    std::atomic<bool> stop_{false};
    std::exception_ptr drain_error_;
    std::size_t buffer_mib_;
    const run_args& args_;
    const ws::workload& workload_;
    bool started_ = false;
    std::thread drainer_;
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

int run_workload(const run_args& args) {
    const ws::workload* w = ws::find_workload(args.workload);
    if (!w) throw usage_error("unknown workload '" + args.workload + "' (see `pipescope list`)");
    std::string known;
    bool policy_known = false;
    for (const std::string& p : ws::all_policy_names()) {
        policy_known = policy_known || p == args.request.policy;
        known += (known.empty() ? "" : ", ") + p;
    }
    if (!policy_known) throw usage_error("unknown policy '" + args.request.policy + "' (known: " + known + ")");
    if (const std::string why = w->cannot_run_under(args.request.policy); !why.empty())
        throw usage_error(w->name() + " cannot run under policy '" + args.request.policy + "': " + why);

    pipescope::scheduler sched({args.workers});
    ws::run_request request = args.request;
    const bool recording = !args.trace_path.empty() && args.trace;
    std::unique_ptr<trace_session> session;
    if (recording) {
        session = std::make_unique<trace_session>(sched, args, *w);
        request.on_measured_start = [&session](double reference_seconds) { session->start(reference_seconds); };
    }
    pipescope::cli::interrupt_guard interrupt;   // Ctrl-C cancels the measured loop (interrupt.hpp)
    request.cancel = interrupt.token();
    const ws::run_report report = w->run(sched, request);
    const std::string trace_line = session ? session->finish() : "";
    const bool cancelled = report.stats.cancelled;

    const auto& st = report.stats;
    std::printf("%s · %s · P=%u · size %s\n", w->name().c_str(), request.policy.c_str(), sched.workers(),
                ws::size_name(request.size));
    if (cancelled)
        std::printf("  result    cancelled after %llu iterations: the output is incomplete, not compared\n",
                    (unsigned long long)report.stats.iterations);
    else
        std::printf("  result    %s — %s\n", report.description.c_str(),
                    report.matches_reference ? "matches the serial reference" : "DIFFERS from the serial reference");
    std::printf("  time      %.4f s   (serial reference %.4f s, ratio %.2f)\n", report.seconds,
                report.reference_seconds, report.reference_seconds > 0 ? report.seconds / report.reference_seconds : 0.0);
    if (report.graph)   // a stage graph: its queues and footprint (seed 004 Table III)
        print_graph_stats(*report.graph);
    else if (request.policy == "bind-to-stage")   // its stats count blocking on the queues (docs/runtime.md)
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
    pipescope::worker_counters total;
    for (unsigned i = 0; i < sched.workers(); ++i) {
        const auto c = sched.counters(i);
        total.jobs_run += c.jobs_run;
        total.steals += c.steals;
        total.steal_attempts += c.steal_attempts;
        total.parks += c.parks;
    }
    std::printf("  workers   %llu jobs, %llu steals of %llu attempts, %llu parks\n",
                (unsigned long long)total.jobs_run, (unsigned long long)total.steals,
                (unsigned long long)total.steal_attempts, (unsigned long long)total.parks);
    std::fputs(trace_line.c_str(), stdout);
    if (cancelled || interrupt.interrupted()) return 128 + (interrupt.signal_number() ? interrupt.signal_number() : SIGINT);
    return report.matches_reference ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
            std::cout << usage_text;
            return args.empty() ? 2 : 0;
        }
        if (args[0] == "list") return list_command({args.begin() + 1, args.end()});
        if (args[0] == "validate") return validate_trace({args.begin() + 1, args.end()});
        if (args[0] == "export-json") return export_json_command({args.begin() + 1, args.end()});
        if (args[0] == "stats") return stats_command({args.begin() + 1, args.end()});
        if (args[0] == "compare") return compare_command({args.begin() + 1, args.end()});
        if (args[0] == "dedup-restore") return dedup_restore_command({args.begin() + 1, args.end()});
        if (args[0] == "run") return run_workload(parse_run({args.begin() + 1, args.end()}));
        throw usage_error("unknown command '" + args[0] + "'");
    } catch (const usage_error& e) {
        std::cerr << "pipescope: " << e.what() << "\n" << usage_text;
        return 2;
    } catch (const std::invalid_argument& e) {
        std::cerr << "pipescope: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "pipescope: error: " << e.what() << "\n";
        return 3;
    }
}
