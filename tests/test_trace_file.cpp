// Opening trace files (trace_file.hpp) and reading files cut short (read_options::accept_cut_short):
// what is no regular file is refused at once, a huge file is looked at before it is loaded (bounded
// memory), a recording killed mid-write gives its complete packets and says what is missing, and
// damage elsewhere is still a decode error naming its offset.
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/trace_file.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>

using namespace pipescope::trace;
namespace fs = std::filesystem;

namespace {

const fs::path traces_dir = fs::path(__FILE__).parent_path().parent_path() / "traces";

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The process's peak resident memory so far, in bytes.
std::uint64_t peak_rss() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;
}

// What load_trace_file throws for `p` ("" if it loads).
std::string load_error(const fs::path& p) {
    try {
        (void)load_trace_file(p);
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

struct temp_dir {
    fs::path path = fs::temp_directory_path() / ("pipescope-trace-file-" + std::to_string(::getpid()));
    temp_dir() {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

// A sparse file of `size` bytes (no disk space used) whose first bytes are `head`.
void sparse_file(const fs::path& p, std::uint64_t size, const std::string& head) {
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
    REQUIRE(::pwrite(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
    ::close(fd);
}

// Where the top-level packets of `bytes` start.
std::vector<std::uint64_t> packet_starts(std::string_view bytes) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t at = 0; at < bytes.size();) {
        out.push_back(at);
        const std::uint64_t end = top_level_field_end(bytes, at);
        REQUIRE(end > at + 1);
        at = end;
    }
    return out;
}

read_options cut_short_ok() {
    read_options o;
    o.accept_cut_short = true;
    return o;
}

}   // namespace

TEST_CASE("trace files: a missing file, a directory, a device and a FIFO are refused at once", "[trace][file]") {
    temp_dir dir;
    CHECK(load_error(dir.path / "run.pftrace") ==
          "cannot open " + (dir.path / "run.pftrace").string() + ": no such file or directory");
    CHECK(load_error(dir.path) == dir.path.string() + ": is a directory (not a regular file)");
    // /dev/zero would never end: refused by its type, before a byte is read.
    if (fs::exists("/dev/zero")) CHECK(load_error("/dev/zero") == "/dev/zero: not a regular file (a character device)");

    // A FIFO with no writer: opening it for reading must not wait for one. The load runs on another
    // thread so that a reader that does block fails the test instead of hanging it: after a long
    // grace period the test opens the FIFO's write end and closes it, which ends any wait.
    const fs::path fifo = dir.path / "fifo.pftrace";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto loading = std::async(std::launch::async, [&] { return load_error(fifo); });
    const bool returned = loading.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    if (!returned) {
        const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (w >= 0) ::close(w);
    }
    const std::string error = loading.get();
    CHECK(returned);
    CHECK(error == fifo.string() + ": not a regular file (a FIFO)");
}

TEST_CASE("trace files: a 2 GiB file with a bad first byte is rejected without being read", "[trace][file]") {
    temp_dir dir;
    const fs::path big = dir.path / "big.pftrace";
    sparse_file(big, std::uint64_t{2} << 30, "x");
    const std::uint64_t before = peak_rss();
    const std::string error = load_error(big);
    CHECK(error.find(big.string() + ": not a Perfetto trace: a Perfetto trace starts with a packet (the byte 0x0A)") == 0);
    CHECK(peak_rss() - before < (std::uint64_t{64} << 20));   // a copy of the file would be 2 GiB
}

TEST_CASE("trace files: a 2 GiB file that starts like a trace is read in bounded memory up to its damage", "[trace][file]") {
    temp_dir dir;
    const fs::path big = dir.path / "big.pftrace";
    // One packet holding a timestamp (TracePacket.timestamp = 8: field 8 varint), then zeros: the
    // byte 0x00 is the tag of field 0, which is invalid.
    const std::string packet("\x0a\x02\x40\x07", 4);
    sparse_file(big, std::uint64_t{2} << 30, packet);
    const std::uint64_t before = peak_rss();
    const std::string error = load_error(big);
    CHECK(error == "byte 4: field number 0 is invalid");
    CHECK(peak_rss() - before < (std::uint64_t{64} << 20));
    // A packet declaring a length past the end of the file is a cut-short tail when that is accepted.
    sparse_file(big, std::uint64_t{2} << 30, packet + std::string("\x0a\xff\xff\xff\xff\x0f", 6));
    const trace_model m = load_trace_file(big, cut_short_ok());
    CHECK(m.packets == 1);
    CHECK(m.cut_short);
    CHECK(m.cut_short_at == 4);
    CHECK(m.file_bytes == std::uint64_t{2} << 30);
    CHECK(peak_rss() - before < (std::uint64_t{64} << 20));
}

TEST_CASE("trace files: a recording cut short anywhere gives its complete packets and says what is missing",
          "[trace][file][cut]") {
    const std::string bytes = read_bytes(traces_dir / "pipe-fib-256-piper-K2.pftrace");
    const trace_model whole = load_trace(bytes);
    REQUIRE(whole.runs.size() == 1);
    CHECK(whole.runs[0].summarized);
    CHECK(whole.runs[0].open_slices == 0);
    CHECK(incomplete_notes(whole, "k2.pftrace").empty());
    const std::vector<std::uint64_t> starts = packet_starts(bytes);
    REQUIRE(starts.size() > 20);
    // Cuts inside a packet's tag, inside its length, inside its payload, and on packet boundaries.
    const std::uint64_t mid = starts[starts.size() / 2], late = starts[starts.size() - 3];
    for (const std::uint64_t cut :
         {mid + 1, mid + 2, mid + 5, late + 1, late + 3, std::uint64_t(bytes.size() - 1), mid, late}) {
        CAPTURE(cut);
        const std::string_view prefix = std::string_view(bytes).substr(0, cut);
        const bool on_boundary = cut == mid || cut == late;
        // Without accept_cut_short a torn packet is malformed data, as before.
        if (!on_boundary) CHECK_THROWS_AS(load_trace(prefix), proto::decode_error);
        const trace_model m = load_trace(prefix, cut_short_ok());
        const std::uint64_t kept = on_boundary ? cut : *(std::upper_bound(starts.begin(), starts.end(), cut - 1) - 1);
        CHECK(m.cut_short == !on_boundary);
        CHECK(m.cut_short_at == (on_boundary ? 0 : kept));
        const trace_model complete = load_trace(prefix.substr(0, kept));
        CHECK(m.packets == complete.packets);
        CHECK(m.slices == complete.slices);
        CHECK(m.instants == complete.instants);
        REQUIRE(m.runs.size() == 1);
        CHECK_FALSE(m.runs[0].summarized);   // the summary is the last thing written
        CHECK(m.runs[0].open_slices == m.unterminated_slices);
        const std::vector<std::string> notes = incomplete_notes(m, "run.pftrace.3Xk9aa.tmp");
        REQUIRE(notes.size() == (on_boundary ? 1u : 2u));
        if (!on_boundary)
            CHECK(notes[0] == "run.pftrace.3Xk9aa.tmp: the recording was cut short at byte " + std::to_string(kept) +
                                  " of " + std::to_string(cut) + " (last packet incomplete: " + std::to_string(cut - kept) +
                                  " bytes not read)");
        CHECK(notes.back().find("run '" + m.runs[0].name + "' has no summary") == 0);
        // The streaming summary (validate) agrees.
        const perfetto_summary s = summarize_perfetto(prefix, cut_short_ok());
        CHECK(s.cut_short == m.cut_short);
        CHECK(s.cut_short_at == m.cut_short_at);
        CHECK(s.slices == summarize_perfetto(prefix.substr(0, kept)).slices);
        CHECK(s.run_summaries == 0);
    }
}

TEST_CASE("trace files: damage before the end is still a decode error naming its offset", "[trace][file][cut]") {
    std::string bytes = read_bytes(traces_dir / "pipe-fib-256-piper-K2.pftrace");
    const std::vector<std::uint64_t> starts = packet_starts(bytes);
    // The first byte of a packet in the middle, after its tag and length, becomes a field tag of 0.
    std::uint64_t at = starts[starts.size() / 2] + 1;
    while (static_cast<unsigned char>(bytes[at]) & 0x80) ++at;
    ++at;
    REQUIRE(at < starts[starts.size() / 2 + 1]);
    bytes[at] = '\0';
    try {
        (void)load_trace(bytes, cut_short_ok());
        FAIL("the damage was not reported");
    } catch (const proto::decode_error& e) {
        CHECK(e.offset() == at);
        CHECK(std::string(e.what()) == "byte " + std::to_string(at) + ": field number 0 is invalid");
    }
    CHECK_THROWS_AS(summarize_perfetto(bytes, cut_short_ok()), proto::decode_error);
}

TEST_CASE("trace files: top_level_field_end finds packet ends and cut-off framing", "[trace][file][cut]") {
    CHECK(top_level_field_end(std::string_view("\x0a\x02xy", 4), 0) == 4);
    CHECK(top_level_field_end(std::string_view("\x0a\x03xy", 4), 0) == 0);     // payload cut off
    CHECK(top_level_field_end(std::string_view("\x0a", 1), 0) == 0);           // length missing
    CHECK(top_level_field_end(std::string_view("\x0a\x80\x80", 3), 0) == 0);   // length cut off
    CHECK(top_level_field_end(std::string_view("\x08\x80", 2), 0) == 0);       // varint value cut off
    CHECK(top_level_field_end(std::string_view("\x0b\x00", 2), 0) == 1);       // wire type 3: malformed
    CHECK(top_level_field_end(std::string(12, '\xff'), 0) == 1);               // an 11-byte varint
}
