// Opening, checking and mapping trace files (trace_file.hpp).
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/trace_file.hpp>

#include "file_type.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace pipescope::trace {

namespace {

// Closes a descriptor on every path out of a function that may throw.
struct fd_guard {
    int fd = -1;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
    int release() { return std::exchange(fd, -1); }
};

}   // namespace

std::string os_reason(int err) {
    std::string s = std::strerror(err);
    // "No such file or directory" -> "no such file or directory"; an all-capitals word stays as is.
    if (s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) && std::islower(static_cast<unsigned char>(s[1])))
        s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
}

std::string cannot_open_message(const std::string& file, int err) { return "cannot open " + file + ": " + os_reason(err); }

std::string os_error_message(const std::string& file, const char* doing, int err) {
    return file + ": " + doing + ": " + os_reason(err);
}

int open_regular_file(const std::filesystem::path& path, std::uint64_t& size) {
    const std::string name = path.string();
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, possibly forever.
    fd_guard fd{::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    if (fd.fd < 0) throw std::runtime_error(cannot_open_message(name, errno));
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0) throw std::runtime_error(os_error_message(name, "cannot stat it", errno));
    if (S_ISDIR(st.st_mode)) throw std::runtime_error(name + ": is a directory (not a regular file)");
    if (!S_ISREG(st.st_mode))
        throw std::runtime_error(name + ": not a regular file (" + detail::file_type_name(st.st_mode) + ")");
    const int flags = ::fcntl(fd.fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd.fd, F_SETFL, flags & ~O_NONBLOCK);
    size = static_cast<std::uint64_t>(st.st_size);
    return fd.release();
}

mapped_file::mapped_file(const std::filesystem::path& path) : mapped_file(path, nullptr) {}

mapped_file::mapped_file(const std::filesystem::path& path, const trace_checks* checks) : path_(path.string()) {
    std::uint64_t size = 0;
    fd_guard fd{open_regular_file(path, size)};
    if (checks) {
        if (size > checks->max_bytes)
            throw std::runtime_error(path_ + ": " + std::to_string(size) + " bytes is larger than the limit of " +
                                     std::to_string(checks->max_bytes) + " bytes");
        // The first bytes decide (not_a_trace_reason looks at 256 at most): read them before mapping.
        char head[256];
        ssize_t got;
        do got = ::pread(fd.fd, head, sizeof head, 0);
        while (got < 0 && errno == EINTR);
        if (got < 0) throw std::runtime_error(os_error_message(path_, "cannot read it", errno));
        if (const std::string why = not_a_trace_reason(std::string_view(head, static_cast<std::size_t>(got))); !why.empty())
            throw std::runtime_error(path_ + ": not a Perfetto trace: " + why);
    }
    if (size > std::numeric_limits<std::size_t>::max())
        throw std::runtime_error(path_ + ": " + std::to_string(size) + " bytes cannot be mapped here");
    if (size == 0) return;
    void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd.fd, 0);
    if (p == MAP_FAILED) throw std::runtime_error(os_error_message(path_, "cannot map it", errno));
    // The decoder reads it front to back once: let the kernel read ahead and drop pages behind.
    ::madvise(p, static_cast<std::size_t>(size), MADV_SEQUENTIAL);
    data_ = static_cast<const char*>(p);
    size_ = static_cast<std::size_t>(size);
}

mapped_file::~mapped_file() { release(); }

mapped_file::mapped_file(mapped_file&& o) noexcept
    : path_(std::move(o.path_)), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

mapped_file& mapped_file::operator=(mapped_file&& o) noexcept {
    if (this != &o) {
        release();
        path_ = std::move(o.path_);
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
    }
    return *this;
}

void mapped_file::release() noexcept {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

mapped_file open_trace_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
    const mapped_file::trace_checks checks{max_bytes};
    return mapped_file(path, &checks);
}

}   // namespace pipescope::trace
