// Opening a file to read it as a trace (docs/trace-format.md, "Reading a file").
//
// A file is opened once, without blocking (a FIFO with no writer must not hang the reader), and
// fstat()ed: anything but a regular file (a FIFO, a device such as /dev/zero, a directory, a socket)
// is refused at once. Its first bytes are checked before the rest is looked at (a protobuf trace
// starts with the byte 0x0A: not_a_trace_reason), and the file is then mapped read-only instead of
// being copied into memory: the decoder walks the mapping (the kernel's page cache, not the heap),
// so a huge file with a bad first byte costs nothing and a valid one costs its model only.
//
// Every error is a std::runtime_error naming the file and, for the system's refusals, the OS reason:
//   "cannot open run.pftrace: no such file or directory"
//   "/dev/zero: not a regular file (a character device)", "traces: is a directory (not a regular file)"
//   "notes.txt: not a Perfetto trace: a Perfetto trace starts with a packet (the byte 0x0A); ..."
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

namespace pipescope::trace {

// "cannot open FILE: REASON" for the errno value `err` (strerror's text, first letter lower-case).
std::string cannot_open_message(const std::string& file, int err);
// "FILE: REASON" for an OS error while reading an open file.
std::string os_error_message(const std::string& file, const char* doing, int err);
// strerror's text with its first letter lower-case ("no such file or directory").
std::string os_reason(int err);

// Opens `path` for reading: a regular file, or the error above. Returns the open descriptor
// (O_CLOEXEC, blocking mode restored); `size` gets its size. The caller closes it.
int open_regular_file(const std::filesystem::path& path, std::uint64_t& size);

// A regular file mapped read-only (an empty file maps to an empty view).
class mapped_file {
public:
    mapped_file() = default;
    // Opens and maps `path`; throws std::runtime_error as described above.
    explicit mapped_file(const std::filesystem::path& path);
    ~mapped_file();
    mapped_file(mapped_file&& o) noexcept;
    mapped_file& operator=(mapped_file&& o) noexcept;
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;

    std::string_view bytes() const { return {data_, size_}; }
    std::uint64_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    friend mapped_file open_trace_file(const std::filesystem::path&, std::uint64_t);
    struct trace_checks {
        std::uint64_t max_bytes;
    };
    mapped_file(const std::filesystem::path& path, const trace_checks* checks);
    void release() noexcept;
    std::string path_;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
};

// Opens a file that should hold a Perfetto trace: mapped_file, then refused if it is larger than
// `max_bytes` ("FILE: N bytes is larger than the limit of M bytes") or does not start like a trace
// ("FILE: not a Perfetto trace: REASON"). The first bytes are read before anything is mapped.
mapped_file open_trace_file(const std::filesystem::path& path,
                            std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max());

}   // namespace pipescope::trace
