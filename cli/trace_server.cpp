// trace_server: one trace, from its open descriptor, to the Perfetto UI on this machine (trace_server.hpp).
#include "trace_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pipescope/trace/trace_file.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace pipescope::cli {

namespace {

constexpr std::size_t max_connections = 32;   // more at once get a 503: the UI makes one or two
constexpr auto request_deadline = std::chrono::seconds(5);

std::int64_t mtime_ns(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool send_all(int fd, const char* data, std::size_t n) {
    while (n > 0) {
        const ssize_t k = ::send(fd, data, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        data += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool send_all(int fd, const std::string& s) { return send_all(fd, s.data(), s.size()); }

// The request line and headers (up to the blank line), or nothing if the client sent no complete
// request before the deadline (or closed the connection).
std::optional<std::string> read_request(int fd) {
    std::string request;
    char buf[2048];
    const auto deadline = std::chrono::steady_clock::now() + request_deadline;
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return std::nullopt;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
        const ssize_t k = ::recv(fd, buf, sizeof buf, 0);
        if (k <= 0) return std::nullopt;
        request.append(buf, static_cast<std::size_t>(k));
    }
    return request;
}

// The value of header `name` (lower case) in `request`, without surrounding blanks; nullopt if absent.
std::optional<std::string> header(const std::string& request, const std::string& name) {
    std::size_t line = request.find("\r\n");
    while (line != std::string::npos && line + 2 < request.size()) {
        const std::size_t begin = line + 2, end = request.find("\r\n", begin);
        const std::size_t colon = request.find(':', begin);
        if (end == std::string::npos || end == begin) break;
        if (colon != std::string::npos && colon < end && lower(request.substr(begin, colon - begin)) == name) {
            std::string v = request.substr(colon + 1, end - colon - 1);
            v.erase(0, v.find_first_not_of(" \t"));
            v.erase(v.find_last_not_of(" \t") + 1);
            return v;
        }
        line = end;
    }
    return std::nullopt;
}

std::string response_head(const std::string& status, const std::string& origin, std::uint64_t length,
                          const std::string& content_type) {
    return fmt::format("HTTP/1.1 {}\r\nAccess-Control-Allow-Origin: {}\r\nAccess-Control-Allow-Methods: GET, OPTIONS\r\n"
                       "Access-Control-Allow-Headers: *\r\nCache-Control: no-cache\r\nContent-Type: {}\r\n"
                       "Content-Length: {}\r\nConnection: close\r\n\r\n",
                       status, origin, content_type, length);
}

void send_text(int fd, const std::string& status, const std::string& origin, const std::string& body) {
    send_all(fd, response_head(status, origin, body.size(), "text/plain") + body);
}

int listen_on_loopback(unsigned port) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) throw std::runtime_error(fmt::format("perfetto: cannot create a socket: {}", std::strerror(errno)));
    const int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);   // 127.0.0.1 only: the trace is not offered to the network
    if (::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s, 16) != 0) {
        const int e = errno;
        ::close(s);
        throw std::runtime_error(fmt::format("perfetto: cannot listen on 127.0.0.1:{}: {}{}", port, std::strerror(e),
                                             e == EADDRINUSE ? " (is trace_processor --httpd or another pipescope "
                                                               "perfetto running? stop it, or pass --port with a UI "
                                                               "you serve yourself)"
                                                             : ""));
    }
    return s;
}

}   // namespace

served_file::served_file(const std::filesystem::path& path) : name_(path.string()) {
    // Opened as every reader opens a file (one message for a missing file, a FIFO never blocks, only
    // a regular file is taken): trace_file.hpp. Not checked as a trace: the UI also reads JSON.
    fd_ = trace::open_regular_file(path, size_);
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        const int e = errno;
        ::close(fd_);
        throw std::runtime_error(trace::os_error_message(name_, "fstat", e));
    }
    mtime_ns_ = mtime_ns(st);
}

served_file::~served_file() { ::close(fd_); }

std::string served_file::changed_since_open() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return trace::os_reason(errno);
    if (static_cast<std::uint64_t>(st.st_size) != size_)
        return fmt::format("its size went from {} to {} bytes", size_, st.st_size);
    if (mtime_ns(st) != mtime_ns_) return "it was rewritten in place";
    return {};
}

trace_server::trace_server(const served_file& file, unsigned port, std::string url_path, std::string origin)
    : file_(file),
      port_(port),
      url_path_(std::move(url_path)),
      origin_(std::move(origin)),
      listener_(listen_on_loopback(port)) {}

trace_server::~trace_server() {
    {
        const std::lock_guard lock(mutex_);
        for (const int c : clients_) ::shutdown(c, SHUT_RDWR);   // ends a send or poll in progress
    }
    connections_.clear();   // joins
    ::close(listener_);
}

trace_server::outcome trace_server::run(std::stop_token stop, std::optional<double> timeout_seconds) {
    const auto started = std::chrono::steady_clock::now();
    for (;;) {
        if (fetched_) return outcome::fetched;
        if (broken_) return outcome::broken;
        if (stop.stop_requested()) return outcome::interrupted;
        if (timeout_seconds &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > *timeout_seconds)
            return outcome::timed_out;
        std::erase_if(connections_, [](const connection& c) { return c.done->load(); });   // joins the finished
        pollfd p{listener_, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) continue;
        if (connections_.size() >= max_connections) {
            send_text(client, "503 Service Unavailable", origin_, "too many connections\n");
            ::close(client);
            continue;
        }
        {
            const std::lock_guard lock(mutex_);
            clients_.push_back(client);
        }
        auto done = std::make_shared<std::atomic<bool>>(false);
        connections_.push_back({std::jthread([this, client, done] {
                                    serve_connection(client);
                                    {
                                        const std::lock_guard lock(mutex_);
                                        std::erase(clients_, client);
                                    }
                                    ::close(client);
                                    done->store(true);
                                }),
                                done});
    }
}

// Host as a browser sends it for http://127.0.0.1:PORT/ or http://localhost:PORT/. Anything else
// is a page that reached this port under another name (DNS rebinding) or a client that lies.
bool trace_server::host_allowed(const std::string& host) const {
    const std::string h = lower(host);
    for (const char* name : {"127.0.0.1", "localhost"})
        if (h == name || h == fmt::format("{}:{}", name, port_)) return true;
    return false;
}

void trace_server::serve_connection(int client) {
    const std::optional<std::string> request = read_request(client);
    if (!request) return;
    const std::size_t sp1 = request->find(' '), sp2 = request->find(' ', sp1 + 1);
    const std::string method = request->substr(0, sp1);
    const std::string target = sp1 == std::string::npos ? "" : request->substr(sp1 + 1, sp2 - sp1 - 1);
    const std::optional<std::string> host = header(*request, "host");
    if (!host || !host_allowed(*host)) {
        send_text(client, "403 Forbidden", origin_,
                  fmt::format("this server answers requests for 127.0.0.1:{} or localhost:{} only, not Host: {}\n", port_,
                              port_, host.value_or("(none)")));
        return;
    }
    if (method == "OPTIONS") {   // the UI's CORS preflight
        send_all(client, response_head("204 No Content", origin_, 0, "text/plain"));
        return;
    }
    if (method != "GET") return send_text(client, "405 Method Not Allowed", origin_, "only GET is served\n");
    if (target != url_path_)
        return send_text(client, "404 Not Found", origin_, fmt::format("not found: this server serves {}\n", url_path_));
    if (send_trace(client)) fetched_ = true;
}

// The file's bytes from its descriptor, then a check that they are still the bytes it had when
// opened: a file truncated or rewritten in place meanwhile was not served whole.
bool trace_server::send_trace(int client) {
    const auto fail = [this](std::string why) {
        const std::lock_guard lock(mutex_);
        if (failure_.empty()) failure_ = std::move(why);
        broken_ = true;
        return false;
    };
    if (const std::string changed = file_.changed_since_open(); !changed.empty()) {
        send_text(client, "409 Conflict", origin_, "the trace changed on disk since it was opened\n");
        return fail(
            fmt::format("{} changed on disk after pipescope perfetto opened it ({}); run it again", file_.name(), changed));
    }
    if (!send_all(client, response_head("200 OK", origin_, file_.size(), "application/octet-stream"))) return false;
    std::vector<char> buf(1 << 20);
    std::uint64_t sent = 0;
    while (sent < file_.size()) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), file_.size() - sent));
        const ssize_t k = ::pread(file_.fd(), buf.data(), want, static_cast<off_t>(sent));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return fail(fmt::format("{} shrank while it was being served: sent {} of {} bytes{}", file_.name(), sent,
                                    file_.size(), k < 0 ? fmt::format(" ({})", trace::os_reason(errno)) : ""));
        if (!send_all(client, buf.data(), static_cast<std::size_t>(k))) return false;   // the client left: may retry
        sent += static_cast<std::uint64_t>(k);
    }
    if (const std::string changed = file_.changed_since_open(); !changed.empty())
        return fail(fmt::format("{} changed on disk while it was being served ({}): the UI got a mixed copy", file_.name(),
                                changed));
    return true;
}

}   // namespace pipescope::cli
