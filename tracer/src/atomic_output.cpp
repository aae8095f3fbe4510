// Output files written whole or not at all (pipescope/trace/atomic_output.hpp).
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/trace_file.hpp>   // os_reason: one wording of the OS reasons

#include "file_type.hpp"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace pipescope::trace {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const fs::path& path, std::string_view why) {
    throw output_path_error("cannot write " + path.string() + ": " + std::string(why));
}

// The directory a path's file lives in ("." for a bare name).
fs::path directory_of(const fs::path& path) {
    const fs::path parent = path.parent_path();
    return parent.empty() ? fs::path(".") : parent;
}

// The test seam (testing::fail_nth_write): the countdown of write calls, and the errno to fail with.
std::atomic<unsigned> writes_until_failure{0};
std::atomic<int> injected_errno{0};

// True when this write call is the one the test seam fails.
bool injected_failure() noexcept {
    unsigned n = writes_until_failure.load(std::memory_order_relaxed);
    while (n != 0)
        if (writes_until_failure.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) return n == 1;
    return false;
}

void fsync_directory(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;   // the rename is done; a directory we cannot open cannot be synced either
    // Some file systems cannot sync a directory (EINVAL): the rename stands, as without fsync.
    (void)::fsync(fd);
    ::close(fd);
}

}   // namespace

// umask(2) can only be read by setting it, which would race with other threads creating files:
// Linux shows it in /proc/self/status since 4.7.
unsigned current_umask() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("Umask:", 0) == 0) return static_cast<unsigned>(std::strtoul(line.c_str() + 6, nullptr, 8));
    const mode_t m = ::umask(022);   // an older kernel: read it the racy way
    ::umask(m);
    return m;
}

output_error::output_error(const fs::path& file, int errno_value, std::string_view detail)
    : std::system_error(errno_value, std::generic_category()),
      message_("cannot write " + file.string() + ": " + os_reason(errno_value)) {
    if (!detail.empty()) message_ += " (" + std::string(detail) + ")";
}

void check_output_path(const fs::path& path) {
    if (path.empty()) throw output_path_error("cannot write \"\": the output path is empty");
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            // Following it would let whoever planted it choose the file that gets replaced.
            std::error_code ec;
            const fs::path to = fs::read_symlink(path, ec);
            refuse(path, "is a symbolic link (to " + (ec ? std::string("?") : to.string()) + "); write to " +
                             (ec ? std::string("its target") : to.string()) + " itself");
        }
        if (!S_ISREG(st.st_mode)) refuse(path, std::string("is ") + detail::file_type_name(st.st_mode));
    } else if (errno == ENOENT || errno == ENOTDIR) {
        const fs::path dir = directory_of(path);
        struct stat ds {};
        const int dir_errno = ::stat(dir.c_str(), &ds) == 0 ? 0 : errno;
        if (dir_errno == ENOENT) refuse(path, "the directory " + dir.string() + " does not exist");
        if (dir_errno == ENOTDIR || (dir_errno == 0 && !S_ISDIR(ds.st_mode)))
            refuse(path, dir.string() + " is not a directory");
        if (dir_errno != 0) refuse(path, os_reason(dir_errno) + " (" + dir.string() + ")");
    } else {
        refuse(path, os_reason(errno));
    }
    // The temporary file is created next to the target: the directory must take new files.
    const fs::path dir = directory_of(path);
    if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0)
        refuse(path, os_reason(errno) + " (the directory " + dir.string() + ")");
}

atomic_output::atomic_output(fs::path target) : target_(std::move(target)) {
    check_output_path(target_);
    // "<target>.XXXXXX.tmp": mkostemps opens it O_CREAT|O_EXCL, so an existing name (a planted link
    // included) is never opened, and a process killed on the way leaves a name ending in ".tmp".
    std::string name = target_.string() + ".XXXXXX.tmp";
    const int fd = ::mkostemps(name.data(), 4, O_CLOEXEC);
    if (fd < 0) throw output_error(target_, errno, "creating its temporary file " + name);
    fd_ = fd;
    temporary_ = name;
    // The mode (and, where allowed, the owner) the file has now, else what a new file would get:
    // mkostemps creates 0600, and a re-recorded file must not change who may read it.
    struct stat st {};
    mode_t mode = 0;
    if (::stat(target_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        if (st.st_uid != ::geteuid() || st.st_gid != ::getegid()) (void)::fchown(fd_, st.st_uid, st.st_gid);
        mode = st.st_mode & 07777;
    } else {
        mode = 0666 & ~current_umask();
    }
    if (::fchmod(fd_, mode) != 0) {
        const int e = errno;
        abandon();
        throw output_error(target_, e, "setting the mode of " + name);
    }
}

atomic_output::~atomic_output() {
    if (!committed_) abandon();
}

void atomic_output::abandon() noexcept {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (!committed_ && !temporary_.empty()) {
        ::unlink(temporary_.c_str());
        temporary_.clear();
    }
}

void atomic_output::fail(int errno_value, std::string_view detail) {
    error_ = errno_value;
    throw output_error(target_, errno_value, detail);
}

void atomic_output::write(std::initializer_list<output_bytes> pieces) {
    if (error_) fail(error_);
    if (fd_ < 0) throw std::logic_error("atomic_output: write after commit or abandon (" + target_.string() + ")");
    constexpr std::size_t max_pieces = 8;
    if (pieces.size() > max_pieces) throw std::invalid_argument("atomic_output: at most 8 pieces per write");
    iovec iov[max_pieces];
    int count = 0;
    for (const output_bytes& p : pieces)
        if (p.size) iov[count++] = {const_cast<void*>(p.data), p.size};
    iovec* next = iov;
    while (count > 0) {
        if (injected_failure()) fail(injected_errno.load(std::memory_order_relaxed));
        const ssize_t n = ::writev(fd_, next, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(errno);
        }
        if (n == 0) fail(EIO);
        bytes_ += static_cast<std::uint64_t>(n);
        // A short write: skip what went out and go on with the rest.
        auto left = static_cast<std::size_t>(n);
        while (count > 0 && left >= next->iov_len) {
            left -= next->iov_len;
            ++next;
            --count;
        }
        if (count > 0) {
            next->iov_base = static_cast<char*>(next->iov_base) + left;
            next->iov_len -= left;
        }
    }
}

void atomic_output::commit() {
    if (committed_) return;
    if (error_) {
        const int e = error_;
        abandon();
        throw output_error(target_, e);
    }
    if (fd_ < 0) throw std::logic_error("atomic_output: commit after abandon (" + target_.string() + ")");
    auto failed = [&](std::string_view detail) {
        const int e = errno;
        abandon();
        error_ = e;
        throw output_error(target_, e, detail);
    };
    // The data reaches the disk before the name points at it: a crash after the rename cannot
    // leave an empty or partial file under the target's name.
    if (::fsync(fd_) != 0) failed({});
    if (::close(fd_) != 0) {
        fd_ = -1;
        failed({});
    }
    fd_ = -1;
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) failed("renaming " + temporary_.string() + " onto it");
    committed_ = true;
    fsync_directory(directory_of(target_));   // the rename itself survives a crash
}

// The stream's buffer: 64 KiB at a time to the atomic_output; an error is kept for commit().
class atomic_ostream::buffer : public std::streambuf {
public:
    explicit buffer(const fs::path& target) : out_(target), data_(1 << 16) {
        setp(data_.data(), data_.data() + data_.size());
    }

    // Writes what is buffered; throws the error of any write that failed.
    void drain_or_throw() {
        if (!drain()) std::rethrow_exception(error_);
    }
    atomic_output& output() noexcept { return out_; }

protected:
    int_type overflow(int_type c) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    bool drain() {
        if (error_) return false;
        try {
            out_.write(pbase(), static_cast<std::size_t>(pptr() - pbase()));
        } catch (...) {
            error_ = std::current_exception();
            return false;
        }
        setp(data_.data(), data_.data() + data_.size());
        return true;
    }

    atomic_output out_;
    std::vector<char> data_;
    std::exception_ptr error_;
};

atomic_ostream::atomic_ostream(const fs::path& target) : std::ostream(nullptr), buffer_(std::make_unique<buffer>(target)) {
    rdbuf(buffer_.get());
}

atomic_ostream::~atomic_ostream() = default;

void atomic_ostream::commit() {
    buffer_->drain_or_throw();
    if (!*this) throw output_error(buffer_->output().target(), EIO, "the stream failed");
    buffer_->output().commit();
}

const atomic_output& atomic_ostream::output() const noexcept { return buffer_->output(); }

void write_file_atomically(const fs::path& path, const void* bytes, std::size_t size) {
    atomic_output out(path);
    out.write(bytes, size);
    out.commit();
}

namespace testing {
void fail_nth_write(unsigned nth, int errno_value) noexcept {
    injected_errno.store(errno_value, std::memory_order_relaxed);
    writes_until_failure.store(nth, std::memory_order_relaxed);
}
}   // namespace testing

}   // namespace pipescope::trace
