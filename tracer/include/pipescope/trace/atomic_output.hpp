// The one way pipescope writes an output file (traces, JSON exports, calibrations, restored dedup
// archives, lesson and sweep files): whole or not at all, never through a planted link, never over
// a device, FIFO or directory. docs/tracing.md, "Output files", tells the rules.
//
//   check_output_path(path)   refuses what cannot be a regular output file, before any work
//   atomic_output out(path);  a fresh temporary "<path>.XXXXXX.tmp" next to it (O_CREAT|O_EXCL,
//                             so no link is followed), with the mode the file has or will get
//   out.write(...);           write(2) loops; each call's bytes go out in one writev(2) call
//   out.commit();             fsync, rename over `path`, fsync the directory
// Destroyed without commit() (an error, an exception), it removes its temporary file: `path` keeps
// its old content. Two writers of one path each have their own temporary; the last rename wins and
// the file is always one writer's complete output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace pipescope::trace {

// A path that cannot be written as an output file (empty, a directory, a device, a FIFO, a socket,
// a symbolic link, a missing directory): found before anything is written. The CLI treats it as a
// usage error (exit 2).
class output_path_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// An operating-system error while writing an output: what() is "cannot write FILE: REASON[ (detail)]"
// with REASON the strerror text in lower case ("no space left on device"); code() holds the errno.
class output_error : public std::system_error {
public:
    output_error(const std::filesystem::path& file, int errno_value, std::string_view detail = {});
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

// Throws output_path_error when `path` cannot be an output file: an empty path; a directory, a
// character or block device, a FIFO or a socket there; a symbolic link there (it is not followed:
// the message names its target, to be given instead); a directory part that is missing or is not
// a directory, or that this process cannot create files in. A missing or regular file passes.
void check_output_path(const std::filesystem::path& path);

// The process's umask, read without changing it (from /proc/self/status): a new output file gets
// 0666 & ~umask, as open(2) would give it.
unsigned current_umask();

// One piece of a write: `size` bytes at `data`.
struct output_bytes {
    const void* data;
    std::size_t size;
};

class atomic_output {
public:
    // Checks `target` (check_output_path) and creates its temporary file. Throws output_path_error
    // or output_error.
    explicit atomic_output(std::filesystem::path target);
    ~atomic_output();   // without commit(): removes the temporary file
    atomic_output(const atomic_output&) = delete;
    atomic_output& operator=(const atomic_output&) = delete;

    // Appends the pieces with one writev(2) call (more only if the kernel takes part of them):
    // a writer that passes whole packets per call leaves whole packets in the temporary file if the
    // process is killed. Throws output_error; after an error every later write or commit throws it
    // again.
    void write(std::initializer_list<output_bytes> pieces);
    void write(const void* data, std::size_t size) { write({output_bytes{data, size}}); }
    void write(std::string_view text) { write(text.data(), text.size()); }

    // fsync, rename onto the target, fsync the target's directory. Throws output_error (the
    // temporary file is then removed and the target left as it was).
    void commit();
    // Removes the temporary file now (what the destructor does without commit()).
    void abandon() noexcept;

    const std::filesystem::path& target() const noexcept { return target_; }
    const std::filesystem::path& temporary() const noexcept { return temporary_; }
    std::uint64_t bytes_written() const noexcept { return bytes_; }
    bool committed() const noexcept { return committed_; }

private:
    [[noreturn]] void fail(int errno_value, std::string_view detail = {});

    std::filesystem::path target_, temporary_;
    int fd_ = -1;
    int error_ = 0;   // the errno of the first failed write: later calls fail with it too
    bool committed_ = false;
    std::uint64_t bytes_ = 0;
};

// An std::ostream whose bytes go to an atomic_output (for writers that produce a stream).
// commit() flushes and commits, throwing the OS error of any write that failed on the way.
class atomic_ostream : public std::ostream {
public:
    explicit atomic_ostream(const std::filesystem::path& target);
    ~atomic_ostream() override;
    void commit();
    const atomic_output& output() const noexcept;

private:
    class buffer;
    std::unique_ptr<buffer> buffer_;
};

// The whole of `bytes` as `path`, through an atomic_output.
void write_file_atomically(const std::filesystem::path& path, const void* bytes, std::size_t size);
inline void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
    write_file_atomically(path, bytes.data(), bytes.size());
}

namespace testing {
// Test seam: the `nth` write(2)/writev(2) call from now on (1 = the next) of any atomic_output in the
// process fails with `errno_value` instead of writing (e.g. ENOSPC, to test a full disk without
// one). nth = 0 disarms it.
void fail_nth_write(unsigned nth, int errno_value) noexcept;
}   // namespace testing

}   // namespace pipescope::trace
