// A recording started from the viewer's run panel: the `pipescope run` command as a child process
// (posix_spawn), its progress read from the JSON lines `--progress json` writes on stderr, cancelled
// with SIGTERM (the command finishes the loop early and leaves no temporary file), its errors kept.
//
// Why a child and not record_run in the viewer: the viewer must not link the workloads or the
// recording library (ctest layering.rooms, docs/architecture.md), and the child runs exactly the
// code `pipescope run` runs, on its own cores and memory, so a workload that throws or crashes
// cannot take the window with it. See docs/viewer.md, "Running a workload from the viewer".
#pragma once

#include <ctime>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <thread>
#include <utility>
#include <vector>

namespace pipescope::viewer {

// What the panel asks for: `pipescope run WORKLOAD --policy P --workers N --size S [--virtual]
// [--param k=v]...`.
struct run_choice {
    std::string workload, policy, size = "tiny";
    unsigned workers = 2;
    bool virtual_time = false;
    std::vector<std::pair<std::string, std::string>> params;   // only those that differ from the default
};

// The `pipescope` command: $PIPESCOPE_CLI, else next to the viewer in the build tree
// (build/viewer/pipescope-viewer → build/cli/pipescope) or in the install's bin directory; empty
// if none is there.
std::filesystem::path find_cli();
// Where the panel writes its traces: $PIPESCOPE_RUNS_DIR, else ~/pipescope-runs.
std::filesystem::path runs_dir();
// A new file in `dir` named after the run, e.g. "pipe-fib-piper-P2-K2-tiny-20261202-163500.pftrace";
// "-2", "-3" ... are added while the name is taken: a run never overwrites a file.
std::filesystem::path new_trace_path(const std::filesystem::path& dir, const run_choice& c, std::time_t now);
// The command line (argv[0] is `cli`).
std::vector<std::string> run_arguments(const std::filesystem::path& cli, const run_choice& c,
                                       const std::filesystem::path& trace);

// A command run to its end, its output captured (`pipescope list --json`).
struct captured_output {
    int exit_code = -1;   // -1: could not start; 128 + N: ended by signal N
    std::string out, err;
};
captured_output run_to_end(const std::vector<std::string>& argv);

// What the child said last about its progress (the JSON lines of `--progress json`).
struct run_progress {
    std::string phase;             // "", "reference", "measured", "writing", "done"
    double elapsed_s = 0;          // since the command started
    double measured_s = 0;         // since the measured run started
    double reference_s = 0;        // the serial reference's time: the measured run's rough length
    unsigned long long jobs = 0;   // jobs run so far by the workers
};
// A fraction for the progress bar: the phases in order, the measured run estimated against the
// serial reference's time (a guess: the bar stops at 95 % of that phase if the run takes longer).
float progress_fraction(const run_progress& p);
// Reads one stderr line; false if it is not a progress line (then it is a message to show).
bool read_progress_line(const std::string& line, run_progress& p);

class run_job {
public:
    enum class status { running, finished, failed, cancelled };
    struct snapshot {
        status state = status::running;
        run_progress progress;
        std::string messages;   // stderr lines that are not progress (an error says why)
        std::string output;     // stdout: the run's summary
        int exit_code = -1;
    };

    // Starts the child at once; `on_change` is called on the job's thread after each progress line
    // and at the end (the window wakes its idle wait with it).
    run_job(std::filesystem::path cli, run_choice choice, std::filesystem::path trace, std::function<void()> on_change);
    ~run_job();   // cancels a running child and waits for it
    run_job(const run_job&) = delete;
    run_job& operator=(const run_job&) = delete;

    void cancel();   // SIGTERM: the command stops its loop; the job then removes what it wrote
    snapshot get() const;
    bool running() const { return get().state == status::running; }
    const std::filesystem::path& trace() const { return trace_; }
    const run_choice& choice() const { return choice_; }

private:
    void read_until_exit(int out_fd, int err_fd);
    void finish(int wait_status);

    run_choice choice_;
    std::filesystem::path trace_;
    std::function<void()> on_change_;
    pid_t pid_ = -1;
    mutable std::mutex mutex_;
    snapshot snap_;
    bool cancel_requested_ = false;
    std::thread reader_;
};

const char* to_string(run_job::status s);

}   // namespace pipescope::viewer
