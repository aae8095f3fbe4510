// The HTTP server behind `pipescope perfetto`: it hands one trace file to the Perfetto UI running in
// this machine's browser, and nothing else to anybody.
//
// What it guards against (docs/tracing.md, "Opening a trace in the Perfetto UI"):
//   - the file changing under it: the trace is opened once, before the server listens, and every
//     request is answered from that open file (its descriptor), never by reopening the path. A file
//     swapped for a symbolic link to another file, or replaced by a new one, does not change what is
//     served; one truncated or rewritten in place is detected and reported as a failed transfer.
//   - other files: only the trace's own path is served (404 otherwise), only GET and the UI's CORS
//     preflight are answered.
//   - other sites: only requests whose Host is 127.0.0.1 or localhost (with this port) are answered,
//     so a page that rebinds its DNS name to 127.0.0.1 cannot read the trace (403 otherwise); the
//     socket listens on 127.0.0.1 only.
//   - slow or idle clients: every connection has its own thread and a 5 s deadline for its request,
//     so one idle connection does not hold up the UI's fetch.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace pipescope::cli {

// A trace opened for serving: its descriptor and what fstat said when it was opened.
class served_file {
public:
    // Throws std::runtime_error "cannot open PATH: reason" (or "PATH: not a regular file (a FIFO)"),
    // as every reader does (trace_file.hpp).
    explicit served_file(const std::filesystem::path& path);
    ~served_file();
    served_file(const served_file&) = delete;
    served_file& operator=(const served_file&) = delete;

    const std::string& name() const noexcept { return name_; }
    std::uint64_t size() const noexcept { return size_; }
    int fd() const noexcept { return fd_; }
    // Empty if the file still has the size and modification time it had when opened; else what changed.
    std::string changed_since_open() const;

private:
    std::string name_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    std::int64_t mtime_ns_ = 0;
};

class trace_server {
public:
    enum class outcome { fetched, interrupted, timed_out, broken };

    // Listens on 127.0.0.1:port (throws with the reason, e.g. the port is taken). `url_path` is the
    // one path served ("/run.pftrace"); `origin` the UI's origin for the CORS headers.
    trace_server(const served_file& file, unsigned port, std::string url_path, std::string origin);
    ~trace_server();   // closes the connections still open and joins their threads
    trace_server(const trace_server&) = delete;
    trace_server& operator=(const trace_server&) = delete;

    // Serves until one client received the whole file (fetched), `stop` is requested (interrupted),
    // `timeout_seconds` pass without a complete fetch (timed_out), or the file changed on disk so
    // that it can no longer be served whole (broken; failure() says how).
    outcome run(std::stop_token stop, std::optional<double> timeout_seconds);
    const std::string& failure() const noexcept { return failure_; }

private:
    void serve_connection(int client);
    bool host_allowed(const std::string& host) const;
    bool send_trace(int client);

    const served_file& file_;
    unsigned port_;
    std::string url_path_, origin_;
    int listener_ = -1;

    std::atomic<bool> fetched_{false};
    std::atomic<bool> broken_{false};
    std::mutex mutex_;           // guards clients_, failure_
    std::vector<int> clients_;   // connections being served (shut down on exit to end their threads)
    std::string failure_;
    struct connection {
        std::jthread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::vector<connection> connections_;   // joined once done (reaped by run) or in the destructor
};

}   // namespace pipescope::cli
