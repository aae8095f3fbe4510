// Running `pipescope run` from the viewer (run_job.hpp): spawning, reading, cancelling.
#include "run_job.hpp"

#include "new_file.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace pipescope::viewer {

fs::path find_cli() {
    if (const char* p = std::getenv("PIPESCOPE_CLI"); p && *p) return p;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    for (const fs::path& candidate : {exe.parent_path() / "../cli/pipescope", exe.parent_path() / "pipescope"})
        if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0)
            return fs::weakly_canonical(candidate, ec);
    return {};
}

fs::path runs_dir() {
    if (const char* d = std::getenv("PIPESCOPE_RUNS_DIR"); d && *d) return d;
    if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / "pipescope-runs";
    return fs::current_path() / "pipescope-runs";
}

namespace {

// Letters, digits, '.', '_' and '-' stay; anything else (a space, '/', '=') becomes '-'.
std::string file_safe(const std::string& s) {
    std::string out = s;
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
    return out;
}

}   // namespace

fs::path new_trace_path(const fs::path& dir, const run_choice& c, std::time_t now) {
    std::string stem = c.workload + "-" + c.policy + "-P" + std::to_string(c.workers) + (c.virtual_time ? "v" : "");
    for (const auto& [k, v] : c.params) stem += "-" + k + v;
    stem = file_safe(stem + "-" + c.size + "-" + local_stamp(now));
    std::error_code ec;
    fs::path p = dir / (stem + ".pftrace");
    for (int n = 2; fs::exists(p, ec); ++n) p = dir / (stem + "-" + std::to_string(n) + ".pftrace");
    return p;
}

std::vector<std::string> run_arguments(const fs::path& cli, const run_choice& c, const fs::path& trace) {
    std::vector<std::string> a{
        cli.string(), "run",  c.workload, "--policy",     c.policy,     "--workers", std::to_string(c.workers),
        "--size",     c.size, "-o",       trace.string(), "--progress", "json"};
    if (c.virtual_time) a.emplace_back("--virtual");
    for (const auto& [k, v] : c.params) {
        a.emplace_back("--param");
        a.push_back(k + "=" + v);
    }
    return a;
}

namespace {

// The child with its stdout and stderr on pipes (stdin /dev/null), in a process group of its own
// so that a Ctrl-C typed at the viewer's terminal is not also the child's. -1 if it did not start.
pid_t spawn(const std::vector<std::string>& argv, int& out_fd, int& err_fd) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) return -1;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(out[0]), close(out[1]);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);   // the viewer's threads may block signals; the child must not
    posix_spawnattr_setsigdefault(&attr, &all);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(out[1]), close(err[1]);
    if (pid < 0) {
        close(out[0]), close(err[0]);
        return -1;
    }
    out_fd = out[0], err_fd = err[0];
    return pid;
}

// Reads both pipes until both are closed, handing each chunk to `on_out` / `on_err`.
template <class Out, class Err>
void drain(int out_fd, int err_fd, Out on_out, Err on_err) {
    std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
    std::array<char, 4096> buf{};
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        if (poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            const ssize_t n = read(fds[i].fd, buf.data(), buf.size());
            if (n > 0) {
                const std::string chunk(buf.data(), static_cast<std::size_t>(n));
                i == 0 ? on_out(chunk) : on_err(chunk);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
            }
        }
    }
}

int exit_code_of(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return -1;
}

}   // namespace

captured_output run_to_end(const std::vector<std::string>& argv) {
    captured_output r;
    int out_fd = -1, err_fd = -1;
    const pid_t pid = spawn(argv, out_fd, err_fd);
    if (pid < 0) {
        r.err = "cannot start " + (argv.empty() ? std::string("(nothing)") : argv[0]);
        return r;
    }
    drain(
        out_fd, err_fd, [&](const std::string& s) { r.out += s; }, [&](const std::string& s) { r.err += s; });
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    r.exit_code = exit_code_of(st);
    return r;
}

float progress_fraction(const run_progress& p) {
    if (p.phase == "done") return 1.f;
    if (p.phase == "writing") return 0.97f;
    if (p.phase == "measured") {
        const double estimate = std::max(p.reference_s, 1e-3);
        return 0.3f + 0.65f * static_cast<float>(std::min(0.95, p.measured_s / estimate));
    }
    if (p.phase == "reference") return 0.1f;
    return 0.f;
}

bool read_progress_line(const std::string& line, run_progress& p) {
    if (line.rfind("{\"pipescope_progress\"", 0) != 0) return false;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j["pipescope_progress"].is_string()) return false;
    p.phase = j["pipescope_progress"].get<std::string>();
    p.elapsed_s = j.value("elapsed_s", p.elapsed_s);
    p.measured_s = j.value("measured_s", p.measured_s);
    p.reference_s = j.value("reference_s", p.reference_s);
    p.jobs = j.value("jobs", p.jobs);
    return true;
}

const char* to_string(run_job::status s) {
    switch (s) {
        case run_job::status::running: return "running";
        case run_job::status::finished: return "finished";
        case run_job::status::failed: return "failed";
        case run_job::status::cancelled: return "cancelled";
    }
    return "?";
}

run_job::run_job(fs::path cli, run_choice choice, fs::path trace, std::function<void()> on_change)
    : choice_(std::move(choice)), trace_(std::move(trace)), on_change_(std::move(on_change)) {
    int out_fd = -1, err_fd = -1;
    pid_ = spawn(run_arguments(cli, choice_, trace_), out_fd, err_fd);
    if (pid_ < 0) {
        snap_.state = status::failed;
        snap_.messages = "cannot start " + cli.string() + " (set PIPESCOPE_CLI to the pipescope command)";
        return;
    }
    reader_ = std::thread([this, out_fd, err_fd] { read_until_exit(out_fd, err_fd); });
}

run_job::~run_job() {
    cancel();
    if (reader_.joinable()) reader_.join();
}

void run_job::cancel() {
    std::lock_guard lock(mutex_);
    if (snap_.state != status::running || pid_ < 0 || cancel_requested_) return;
    cancel_requested_ = true;
    kill(pid_, SIGTERM);   // once: a second signal would end the command at once, leaving its .tmp
}

run_job::snapshot run_job::get() const {
    std::lock_guard lock(mutex_);
    return snap_;
}

void run_job::read_until_exit(int out_fd, int err_fd) {
    std::string pending;   // stderr up to its last newline
    auto on_err = [&](const std::string& chunk) {
        pending += chunk;
        bool changed = false;
        for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
            const std::string line = pending.substr(0, nl);
            std::lock_guard lock(mutex_);
            if (!read_progress_line(line, snap_.progress)) snap_.messages += line + "\n";
            changed = true;
        }
        if (changed && on_change_) on_change_();
    };
    auto on_out = [&](const std::string& chunk) {
        std::lock_guard lock(mutex_);
        snap_.output += chunk;
    };
    drain(out_fd, err_fd, on_out, on_err);
    // Waited for without reaping first: until the status is set, cancel() may still signal the pid.
    siginfo_t info{};
    while (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    int st = 0;
    {
        std::lock_guard lock(mutex_);
        if (!pending.empty()) snap_.messages += pending;
        while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
        finish(st);
    }
    if (on_change_) on_change_();
}

// The job's end (mutex held): a cancelled run's file and any temporary file it left are removed.
void run_job::finish(int wait_status) {
    snap_.exit_code = exit_code_of(wait_status);
    std::error_code ec;
    if (cancel_requested_) {
        snap_.state = status::cancelled;
        fs::remove(trace_, ec);
        const std::string prefix = trace_.filename().string() + ".";
        for (const auto& e : fs::directory_iterator(trace_.parent_path(), ec))
            if (const std::string n = e.path().filename().string(); n.starts_with(prefix) && n.ends_with(".tmp"))
                fs::remove(e.path(), ec);
    } else if (snap_.exit_code == 0 && fs::is_regular_file(trace_, ec)) {
        snap_.state = status::finished;
        snap_.progress.phase = "done";
    } else {
        snap_.state = status::failed;
        if (snap_.messages.empty())
            snap_.messages = "pipescope run ended with status " + std::to_string(snap_.exit_code) + " and no trace";
    }
}

}   // namespace pipescope::viewer
