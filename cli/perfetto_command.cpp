// pipescope perfetto <trace> [--port N] [--ui URL] [--no-browser] [--timeout SECONDS]
//
// Opens a local trace in the Perfetto UI the way Perfetto's own `open_trace_in_ui` tool does: a
// tiny HTTP server on 127.0.0.1 serves the file, and the UI is opened at
// `<ui>/#!/?url=http://127.0.0.1:<port>/<name>`; the page then fetches the trace from this
// machine (the bytes never leave it). The public UI allows fetching from 127.0.0.1:9001 (the port
// Perfetto's tools use), hence the default port. The server listens on the loopback interface only,
// answers CORS for the UI's origin, and stops once it has sent the whole file, on Ctrl-C, or after
// --timeout seconds without a fetch. Without a display (or with --no-browser) it prints the URL.
#include "commands.hpp"
#include "interrupt.hpp"
#include "recording.hpp"

#include <pipescope/trace/trace_file.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace {

struct perfetto_args {
    std::filesystem::path trace;
    unsigned port = 9001;
    std::string ui = "https://ui.perfetto.dev";
    bool open_browser = true;
    std::optional<double> timeout_seconds;
};

[[noreturn]] void usage(const std::string& what) {
    throw pipescope::cli::usage_error(what);   // main prints it with this subcommand's usage line
}

unsigned long parse_number(const std::string& option, const std::string& text, unsigned long lo, unsigned long hi) {
    try {
        std::size_t used = 0;
        const unsigned long v = std::stoul(text, &used);
        if (used == text.size() && v >= lo && v <= hi) return v;
    } catch (const std::exception&) {
    }
    usage(option + " " + text + ": expected a whole number between " + std::to_string(lo) + " and " + std::to_string(hi));
}

perfetto_args parse(const std::vector<std::string>& args) {
    perfetto_args a;
    bool have_trace = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& s = args[i];
        const auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) usage("perfetto: " + s + " needs a value");
            return args[++i];
        };
        if (s == "--port") a.port = static_cast<unsigned>(parse_number(s, value(), 1, 65535));
        else if (s == "--ui") a.ui = value();
        else if (s == "--no-browser") a.open_browser = false;
        else if (s == "--timeout") a.timeout_seconds = static_cast<double>(parse_number(s, value(), 1, 86400));
        else if (!s.empty() && s[0] == '-') usage("perfetto: unknown option " + s);
        else if (have_trace) usage("perfetto: one trace at a time (got " + a.trace.string() + " and " + s + ")");
        else a.trace = s, have_trace = true;
    }
    if (!have_trace) usage("perfetto: which trace?");
    while (!a.ui.empty() && a.ui.back() == '/') a.ui.pop_back();
    if (a.ui.rfind("http://", 0) != 0 && a.ui.rfind("https://", 0) != 0)
        usage("perfetto: --ui " + a.ui + ": expected an http:// or https:// URL");
    return a;
}

// "https://ui.perfetto.dev/v52" -> "https://ui.perfetto.dev": what the browser sends as Origin.
std::string origin_of(const std::string& url) {
    const std::size_t host = url.find("://") + 3;
    const std::size_t path = url.find('/', host);
    return path == std::string::npos ? url : url.substr(0, path);
}

// Percent-encodes a file name for the URL path (unreserved characters stay as they are).
std::string url_encode(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

// A socket that closes itself.
class socket_fd {
public:
    explicit socket_fd(int fd = -1) : fd_(fd) {}
    socket_fd(socket_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    socket_fd& operator=(socket_fd&&) = delete;
    ~socket_fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const noexcept { return fd_; }

private:
    int fd_;
};

socket_fd listen_on_loopback(unsigned port) {
    socket_fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.get() < 0) throw std::runtime_error(std::string("perfetto: cannot create a socket: ") + std::strerror(errno));
    const int one = 1;
    ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);   // 127.0.0.1 only: the trace is not offered to the network
    if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int e = errno;
        throw std::runtime_error("perfetto: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(e) +
                                 (e == EADDRINUSE ? " (is trace_processor --httpd or another pipescope perfetto running? "
                                                    "stop it, or pass --port with a UI you serve yourself)"
                                                  : ""));
    }
    if (::listen(s.get(), 8) != 0) throw std::runtime_error(std::string("perfetto: listen failed: ") + std::strerror(errno));
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

// The request line and headers (up to the blank line), or nothing if the client sent no complete
// request within a few seconds.
std::optional<std::string> read_request(int fd) {
    std::string request;
    char buf[2048];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
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

std::string response_head(const std::string& status, const std::string& origin, std::uint64_t length,
                          const std::string& content_type) {
    return "HTTP/1.1 " + status + "\r\n" + "Access-Control-Allow-Origin: " + origin + "\r\n" +
           "Access-Control-Allow-Methods: GET, OPTIONS\r\n" + "Access-Control-Allow-Headers: *\r\n" +
           "Cache-Control: no-cache\r\n" + "Content-Type: " + content_type + "\r\n" +
           "Content-Length: " + std::to_string(length) + "\r\n" + "Connection: close\r\n\r\n";
}

// Sends the file's bytes as they are on disk (mapped, not copied), in pieces (a trace may be large).
bool send_file(int fd, std::string_view bytes) {
    constexpr std::size_t piece = std::size_t{1} << 20;
    for (std::size_t at = 0; at < bytes.size(); at += piece)
        if (!send_all(fd, bytes.data() + at, std::min(piece, bytes.size() - at))) return false;
    return true;
}

bool have_display() {
    const char* x = std::getenv("DISPLAY");
    const char* w = std::getenv("WAYLAND_DISPLAY");
    return (x && *x) || (w && *w);
}

// Starts the desktop's browser on `url` without waiting for it; false if none could be started.
bool start_browser(const std::string& url) {
    pid_t pid = 0;
    const char* argv[] = {"xdg-open", url.c_str(), nullptr};
    if (::posix_spawnp(&pid, "xdg-open", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0) return false;
    int status = 0;
    // xdg-open returns once it has handed the URL over; give up waiting after a few seconds.
    for (int i = 0; i < 50; ++i) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        ::usleep(100000);
    }
    return true;
}

}   // namespace

int perfetto_command(const std::vector<std::string>& args) {
    const perfetto_args a = parse(args);
    // The file is opened as every reader does (trace_file.hpp), once: what is served is the mapping
    // opened here. Its contents are not checked: the UI also reads JSON and other traces.
    pipescope::trace::mapped_file file;
    try {
        file = pipescope::trace::mapped_file(a.trace);
    } catch (const std::runtime_error& e) {
        std::cerr << "pipescope: " << e.what() << "\n";
        return 1;
    }
    const std::uint64_t size = file.size();
    const std::string name = a.trace.filename().string();
    const std::string path = fmt::format("/{}", url_encode(name));
    const std::string origin = origin_of(a.ui);
    pipescope::cli::interrupt_guard interrupt("stopping the server");   // Ctrl-C: exit 130
    const socket_fd server = listen_on_loopback(a.port);

    const std::string trace_url = "http://127.0.0.1:" + std::to_string(a.port) + path;
    const std::string ui_url = a.ui + "/#!/?url=" + trace_url + "&referrer=pipescope";
    const bool opened = a.open_browser && have_display() && start_browser(ui_url);
    std::cout << "serving " << a.trace.string() << " (" << size << " bytes) at " << trace_url << " on 127.0.0.1 only\n"
              << (opened ? "opened the Perfetto UI: " : "open this in a browser: ") << ui_url << "\n"
              << "waiting for the UI to fetch it (Ctrl-C stops)" << std::endl;

    const auto started = std::chrono::steady_clock::now();
    for (;;) {
        if (interrupt.interrupted()) {
            std::cout << "stopped before the trace was fetched\n";
            return 130;
        }
        if (a.timeout_seconds &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > *a.timeout_seconds) {
            std::cerr << "pipescope: perfetto: nobody fetched " << trace_url << " within " << *a.timeout_seconds << " s\n";
            return 1;
        }
        pollfd p{server.get(), POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0) continue;
        const socket_fd client(::accept4(server.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (client.get() < 0) continue;
        const std::optional<std::string> request = read_request(client.get());
        if (!request) continue;
        const std::size_t sp1 = request->find(' '), sp2 = request->find(' ', sp1 + 1);
        const std::string method = request->substr(0, sp1);
        const std::string target = sp1 == std::string::npos ? "" : request->substr(sp1 + 1, sp2 - sp1 - 1);
        if (method == "OPTIONS") {   // a CORS preflight
            const std::string head = response_head("204 No Content", origin, 0, "text/plain");
            send_all(client.get(), head.data(), head.size());
            continue;
        }
        if (method != "GET" || target != path) {
            const std::string body =
                method != "GET" ? "only GET is served\n" : "not found: this server serves " + path + "\n";
            const std::string head = response_head(method != "GET" ? "405 Method Not Allowed" : "404 Not Found", origin,
                                                   body.size(), "text/plain");
            send_all(client.get(), (head + body).data(), head.size() + body.size());
            continue;
        }
        const std::string head = response_head("200 OK", origin, size, "application/octet-stream");
        if (send_all(client.get(), head.data(), head.size()) && send_file(client.get(), file.bytes())) {
            std::cout << "the UI fetched the trace (" << size << " bytes); done\n";
            return 0;
        }
        std::cout << "a fetch of the trace broke off; still waiting\n";
    }
}
