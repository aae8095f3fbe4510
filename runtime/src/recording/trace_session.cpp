// The recording session (pipescope/trace_session.hpp): a recorder attached to the scheduler while
// a run goes on, a drain thread feeding the streaming writer (bounded memory), the rest flushed at
// the run's end, and the file renamed into place when the session closes.
#include <pipescope/trace_session.hpp>

#include "../loop_listener.hpp"
#include "../scheduler_impl.hpp"
#include "run_metadata.hpp"
#include "signal_finish.hpp"
#include "thread_times.hpp"

#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/drain_thread.hpp>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iterator>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace pipescope {

namespace {

// What a discarded session (no writer any more) reports: nothing written.
const trace::perfetto_write_stats& stats_of(const std::optional<trace::perfetto_writer>& w) {
    static const trace::perfetto_write_stats none{};
    return w ? w->stats() : none;
}
unsigned runs_of(const std::optional<trace::perfetto_writer>& w) { return w ? w->runs() : 0; }

// A file's size in the unit that fits, as `ls -h` and the analysis (numbers::bytes) print it:
// "612 B", "26.1 KiB", "3.42 MiB", "1.25 GiB" — never "0.0 MB" for a small trace.
std::string file_size_text(std::uint64_t bytes) {
    constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024;
    const double b = static_cast<double>(bytes);
    if (b >= GiB) return fmt::format("{:.2f} GiB", b / GiB);
    if (b >= MiB) return fmt::format("{:.2f} MiB", b / MiB);
    if (b >= KiB) return fmt::format("{:.1f} KiB", b / KiB);
    return fmt::format("{} B", bytes);
}

}   // namespace

class trace_session::impl final : public detail::loop_listener, public detail::signal_client {
public:
    impl(scheduler& sched, std::filesystem::path path, const trace_session_options& options)
        : core_(sched.impl()),
          workers_(sched.workers()),
          options_(checked(options)),
          claim_(core_, *this),
          path_(std::move(path)),
          recorder_(workers_, options_.buffer_mib << 20) {
        writer_.emplace(path_, trace::writer_options{options_.compress, 1, options_.counter_quantum_ns});
        recorder_.set_detail(options_.detail);
        if (options_.finish_on_signal) detail::watch_signals(*this);
    }
    ~impl() {
        // First: a signal being handled finishes this session before it goes on.
        if (options_.finish_on_signal) detail::unwatch_signals(*this);
        // A write error already thrown to the caller (begin_run, end_run) is the one message the user
        // sees: closing would only say it again. The writer removes its temporary file.
        if (write_error_thrown_) return;
        try {
            close();
        } catch (const std::exception& e) {
            fmt::print(stderr, "pipescope: the trace {} could not be written: {}\n", path_.string(), e.what());
        }
    }

    // The public calls take the session's lock: a signal may finish the session from the watcher
    // thread (finish_for_signal) while the program runs. The loop callbacks come under the
    // scheduler's loops lock and take this one inside it; nothing here takes that lock while holding
    // this one (close() releases the claim first).
    void begin_run(trace::run_info run) {
        std::lock_guard lock(mutex_);
        begin_run_locked(std::move(run));
    }
    void end_run(std::string_view outcome) {
        std::lock_guard lock(mutex_);
        end_run_locked(outcome);
    }
    bool run_open() const {
        std::lock_guard lock(mutex_);
        return open_;
    }

    void close() {
        claim_.release();
        std::lock_guard lock(mutex_);
        if (closed_) {
            detach();   // finished by a signal while a loop ran: the loop has returned since
            return;
        }
        closed_ = true;
        // A tasks run ends here normally; a loop's run only if the session was closed under it.
        if (open_) end_run_locked(tasks_run_ ? "" : "the session was closed while the run was open");
        // A run that could not be ended leaves no file: the writer removes its temporary file. Its
        // error as it was ("cannot write PATH: no space left on device"), not a later symptom.
        if (failure_) {
            writer_.reset();
            std::rethrow_exception(failure_);
        }
        writer_->finish();
    }

    void discard() {
        claim_.release();
        std::lock_guard lock(mutex_);
        detach();
        if (closed_) return;
        closed_ = true;
        open_ = false;
        drainer_.reset();   // an error of the writer no longer matters: nothing is kept
        writer_.reset();    // unfinished: the temporary file is removed, path_ untouched
    }

    // signal_client: on the watcher thread, after SIGINT or SIGTERM (signal_finish.hpp).
    void finish_for_signal(int sig) noexcept override {
        std::lock_guard lock(mutex_);
        if (closed_) return;
        closed_ = true;
        const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
        try {
            if (open_) {
                open_ = false;
                // The loop may still run and its workers record on: nothing waits for them (a worker
                // inside a long stage would hold the signal up). What they recorded until now goes
                // to the writer, each worker's records in order; the recorder stays attached until
                // the loop returns (loop_finished) or the session closes.
                struct joined {
                    std::optional<trace::drain_thread>& d;
                    ~joined() { d.reset(); }
                } drainer{drainer_};
                workers_at_end_ = worker_times();
                drainer_->stop();
                recorder_.drain_recorded(writer_->sink());
                writer_->end_run(std::string("interrupted by ") + name, end_metadata());
            }
            writer_->finish();
            fmt::print(stderr, "pipescope: {}: {}", name, report_locked("trace "));
        } catch (const std::exception& e) {
            writer_.reset();
            fmt::print(stderr, "pipescope: {}: the trace {} could not be finished: {}\n", name, path_.string(), e.what());
        }
    }

    // loop_listener: each loop started from outside the pool is a run.
    void loop_started(const detail::loop_start& loop) override {
        if (!options_.loops_are_runs) return;
        std::lock_guard lock(mutex_);
        if (closed_) return;   // finished by a signal: the program goes on unrecorded
        const detail::session_settings s{options_.name, options_.detail, options_.counter_quantum_ns, options_.recorded_by};
        begin_run_locked(loop.pipeline ? detail::pipeline_run(*loop.pipeline, workers_, s)
                         : loop.graph  ? detail::graph_run(*loop.graph, *loop.graph_options, workers_, s)
                                       : detail::tasks_run(workers_, s));
        tasks_run_ = !loop.pipeline && !loop.graph;
    }
    void loop_finished(const detail::loop_finish& end) noexcept override {
        std::lock_guard lock(mutex_);
        if (!options_.loops_are_runs) {   // a run the caller ends: its loops' stages go into its summary
            if (open_) note_stages(end.stages);
            return;
        }
        if (closed_) {
            detach();   // the loop a signal interrupted has returned: its workers stop recording
            return;
        }
        try {
            if (open_) {
                note_stages(end.stages);
                end_run_locked(end.outcome);
            }
        } catch (const std::exception&) {
            // The loop's own result must reach its caller; the trace is lost, and close() says so.
            failure_ = std::current_exception();
            write_error_thrown_ = false;   // not thrown to anyone yet: close() and the destructor say it
        }
    }

    std::string report_locked(std::string_view indent) const;

    // The stages the run's loops used (every loop of a run the caller begins and ends).
    void note_stages(const detail::stage_use& u) noexcept {
        if (!u.noted) return;
        run_stages_.waited |= u.waited;
        run_stages_.free |= u.free;
        run_stages_.noted = true;
    }
    // Each worker thread's CPU and run-queue time so far (none on virtual workers, whose time is not
    // the machine's): read from /proc at the run's start and end, off the workers' path.
    std::vector<std::optional<detail::thread_times>> worker_times() const {
        std::vector<std::optional<detail::thread_times>> out(workers_);
        if (core_.virtual_time()) return out;
        for (unsigned w = 0; w < workers_; ++w) out[w] = detail::read_thread_times(core_.at(w).os_thread_id());
        return out;
    }
    // The run summary's metadata (docs/tracing.md, "Run summary"): the stage kinds the loops used,
    // what the machine gave each worker.
    std::string end_metadata() const {
        std::string out;
        if (const std::string stages = detail::used_stage_kinds_json(run_stages_); !stages.empty())
            out += R"("stages":)" + stages;
        std::string workers;
        for (unsigned w = 0; w < workers_ && w < workers_at_start_.size() && w < workers_at_end_.size(); ++w)
            if (const auto t = detail::times_between(workers_at_start_[w], workers_at_end_[w]))
                workers += fmt::format(R"({}{{"worker":{},"cpu_ns":{},"descheduled_ns":{},"timeslices":{}}})",
                                       workers.empty() ? "" : ",", w, t->cpu_ns, t->runnable_ns, t->timeslices);
        if (!workers.empty()) out += (out.empty() ? "" : ",") + std::string(R"("workers":[)") + workers + "]";
        return out.empty() ? out : "{" + out + "}";
    }
    std::string report(std::string_view indent) const {
        std::lock_guard lock(mutex_);
        return report_locked(indent);
    }

    // The scheduler's one session, from before the file is opened (a refused session must not touch
    // the file of the one that has it) until close().
    class claim {
    public:
        claim(detail::scheduler_impl& core, impl& session) : core_(&core) { core.set_loop_listener(&session); }
        ~claim() { release(); }
        void release() noexcept {
            if (core_) core_->set_loop_listener(nullptr);
            core_ = nullptr;
        }

    private:
        detail::scheduler_impl* core_;
    };

    detail::scheduler_impl& core_;
    unsigned workers_;
    trace_session_options options_;
    claim claim_;
    std::filesystem::path path_;
    trace::recorder recorder_;
    std::optional<trace::perfetto_writer> writer_;   // reset: discarded (its temporary file removed)
    std::optional<trace::drain_thread> drainer_;     // while a run is open
    mutable std::mutex mutex_;
    bool open_ = false, closed_ = false;
    bool attached_ = false;             // the recorder is attached to the scheduler
    bool tasks_run_ = false;            // the open run holds task groups spawned from outside the pool
    bool write_error_thrown_ = false;   // begin_run/end_run threw the writer's error (e.g. the disk is full)
    std::exception_ptr failure_;        // a run that could not be ended from loop_finished
    detail::stage_use run_stages_;      // how the open run's loops entered their stages
    std::vector<std::optional<detail::thread_times>> workers_at_start_, workers_at_end_;   // of the open run

private:
    void begin_run_locked(trace::run_info run) {
        if (closed_) throw std::logic_error("trace_session: begin_run after close (" + path_.string() + ")");
        if (open_) throw std::logic_error("trace_session: begin_run while a run is open (" + path_.string() + ")");
        run.workers = workers_;
        run_stages_ = {};
        // Attach first: attaching waits for every worker to pass a safe point (waking parked ones),
        // which can take milliseconds that belong to no run. The clock starts once it is done.
        recorder_.set_ticks_are_ns(core_.virtual_time() != nullptr);   // automatic detail measures nodes
        core_.attach_recorder(&recorder_);
        attached_ = true;
        recorder_.restart_clock();
        try {
            if (core_.virtual_time()) {   // the workers stamp events with their virtual clocks, in ns
                run.metadata_json = detail::with_virtual_time(run.metadata_json, core_.options());
                writer_->begin_run(std::move(run),
                                   trace::run_clock::fixed(trace::tick_converter::identity(), core_.virtual_now()));
            } else {
                writer_->begin_run(std::move(run), trace::run_clock::calibrating(recorder_.start_clock()));
            }
        } catch (const trace::output_error&) {   // e.g. the disk was full for the run's first packets
            detach();
            write_error_thrown_ = true;   // the writer is done; the caller has its error
            throw;
        } catch (...) {
            detach();
            throw;
        }
        open_ = true;
        workers_at_start_ = worker_times();
        // Virtual time: no once-a-second catch-up, whose timing would decide where packets begin and
        // the same replay must write the same file (docs/virtual.md, "Determinism").
        const auto staleness = core_.virtual_time() ? std::chrono::milliseconds(0) : std::chrono::milliseconds(1000);
        drainer_.emplace(recorder_, writer_->sink(), staleness);
    }

    void end_run_locked(std::string_view outcome) {
        if (!open_) throw std::logic_error("trace_session: end_run without an open run (" + path_.string() + ")");
        open_ = false;
        detach();         // the workers stop recording
        struct joined {   // the drain thread is gone however stop() ends
            std::optional<trace::drain_thread>& d;
            ~joined() { d.reset(); }
        } drainer{drainer_};
        workers_at_end_ = worker_times();
        try {
            drainer_->stop();   // rethrows a failure of the writer (e.g. the disk is full)
            recorder_.flush(writer_->sink());
            writer_->end_run(outcome, end_metadata());
        } catch (...) {
            write_error_thrown_ = true;
            throw;
        }
        run_stages_ = {};
    }

    void detach() {
        if (!attached_) return;
        core_.attach_recorder(nullptr);
        attached_ = false;
    }

    static const trace_session_options& checked(const trace_session_options& o) {
        if (o.buffer_mib == 0 || o.buffer_mib > (std::size_t{1} << 20))
            throw std::invalid_argument("trace_session: buffer_mib must be 1..1048576, not " + std::to_string(o.buffer_mib));
        if (const std::string why = trace::budget_problem(o.buffer_mib); !why.empty())
            throw std::invalid_argument("trace_session: buffer_mib " + std::to_string(o.buffer_mib) + " MiB" + why);
        return o;
    }
};

std::string trace_session::impl::report_locked(std::string_view indent) const {
    const trace::perfetto_write_stats& st = stats_of(writer_);
    std::string out;
    auto line = std::back_inserter(out);
    // Bytes per event count a folded run as the 2 x nodes events it replaces.
    const double events = static_cast<double>(st.records + 2 * (st.folded_nodes - st.folded_runs));
    fmt::format_to(line, "{}{}: {} run{}, {} slices, {} flows, {} counter values; {}, {:.2f} bytes per event\n", indent,
                   path_.string(), runs_of(writer_), runs_of(writer_) == 1 ? "" : "s", st.slices, st.flows,
                   st.counter_values, file_size_text(st.bytes), st.records ? static_cast<double>(st.bytes) / events : 0.0);
    if (st.folded_runs)
        fmt::format_to(line,
                       "{}detail: {} folded runs hold {} nodes; {:.2f} bytes per record written (docs/tracing.md, "
                       "\"Detail levels\")\n",
                       indent, st.folded_runs, st.folded_nodes,
                       st.records ? static_cast<double>(st.bytes) / static_cast<double>(st.records) : 0.0);
    // Perfetto's trace processor in a browser tab (WebAssembly, at most 4 GiB) needs about 600 bytes per
    // event: measured with the v52 build, 1.39 M slices took 0.79 GB and 5.03 M slices 3.1 GB, and a
    // file of 8 M slices ran out of memory (docs/tracing.md, "What the Perfetto UI can open").
    constexpr std::uint64_t ui_event_limit = 4'000'000;
    if (const std::uint64_t n = st.slices + st.instants + st.counter_values + st.flows; n > ui_event_limit)
        fmt::format_to(line,
                       "{}WARNING: {:.1f} M events: the Perfetto UI in a browser is unlikely to load this file (about "
                       "{:.0f} M is its limit); record with trace detail \"folded\", or a shorter run, or open it with "
                       "Perfetto's native trace_processor (trace_processor --httpd) or pipescope-viewer\n",
                       indent, static_cast<double>(n) / 1e6, static_cast<double>(ui_event_limit) / 1e6);
    if (st.dropped_events)
        fmt::format_to(line,
                       "{}WARNING: {} events were dropped: the writer fell behind the workers (the trace marks where); "
                       "a bigger trace buffer (now {} MiB) holds more\n",
                       indent, st.dropped_events, options_.buffer_mib);
    return out;
}

trace_session::trace_session(scheduler& sched, std::filesystem::path path, trace_session_options options)
    : impl_(std::make_unique<impl>(sched, std::move(path), options)) {}
trace_session::~trace_session() = default;

void trace_session::begin_run(trace::run_info run) { impl_->begin_run(std::move(run)); }
void trace_session::end_run(std::string_view outcome) { impl_->end_run(outcome); }
bool trace_session::run_open() const noexcept { return impl_->run_open(); }
void trace_session::close() { impl_->close(); }
void trace_session::discard() { impl_->discard(); }
const std::filesystem::path& trace_session::path() const noexcept { return impl_->path_; }
unsigned trace_session::runs() const noexcept { return runs_of(impl_->writer_); }
const trace::perfetto_write_stats& trace_session::stats() const noexcept { return stats_of(impl_->writer_); }
std::uint64_t trace_session::dropped_events() const noexcept { return stats_of(impl_->writer_).dropped_events; }
std::size_t trace_session::buffer_mib() const noexcept { return impl_->options_.buffer_mib; }
std::string trace_session::report(std::string_view indent) const { return impl_->report(indent); }

}   // namespace pipescope
