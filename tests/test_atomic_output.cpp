// atomic_output: every output file is written whole or not at all, through a temporary file of its
// own that no planted link can redirect; what cannot be an output file (a directory, a device, a
// FIFO, a link) is refused before anything is written, and a write error names the file and the
// OS reason (pipescope issue 32).
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/chrome_json.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/trace_model.hpp>

#include "support/test_traces.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace pipescope;
namespace fs = std::filesystem;
using pipescope::testing::temporaries_of;
using trace::event_kind;
using trace::event_record;

namespace {

// A fresh directory of its own per test case.
struct scratch_dir {
    fs::path path;
    explicit scratch_dir(const std::string& name)
        : path(fs::temp_directory_path() / ("pipescope-atomic-" + name + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put_file(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
}

mode_t mode_of(const fs::path& p) {
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st.st_mode;
}

// What a message of a refused path or failed write says.
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

trace::run_clock identity_clock() { return trace::run_clock::fixed(trace::tick_converter({0, 0}, {1000, 1000}), 0); }

// A small complete trace written by a perfetto_writer to `path`, `chunks` chunks of idle slices.
void write_trace(const fs::path& path, const std::string& run_name, int chunks) {
    trace::perfetto_writer out(path);
    out.begin_run({run_name, 1, "{}", {}}, identity_clock());
    for (int c = 0; c < chunks; ++c) {
        const auto t = static_cast<std::uint64_t>(c) * 100;
        const event_record r[2] = {event_record{t + 10, 0, 0, 0, event_kind::idle_begin, 0, 0},
                                   event_record{t + 50, 0, 0, 0, event_kind::idle_end, 0, 0}};
        out.add_chunk(0, r, 2);
    }
    out.end_run();
    out.finish();
}

// The bytes write_trace would write, made in memory.
std::string trace_bytes(const std::string& run_name, int chunks) {
    const fs::path p = fs::temp_directory_path() / ("pipescope-atomic-ref-" + std::to_string(::getpid()) + ".pftrace");
    write_trace(p, run_name, chunks);
    std::string bytes = read_file(p);
    fs::remove(p);
    return bytes;
}

// Restores the umask a test case sets.
struct umask_guard {
    mode_t saved;
    explicit umask_guard(mode_t m) : saved(::umask(m)) {}
    ~umask_guard() { ::umask(saved); }
};

// The test seam, disarmed however the test case ends.
struct injected_write_failure {
    injected_write_failure(unsigned nth, int errno_value) { trace::testing::fail_nth_write(nth, errno_value); }
    ~injected_write_failure() { trace::testing::fail_nth_write(0, 0); }
};

}   // namespace

TEST_CASE("atomic output: written whole, renamed into place, no temporary left", "[atomic-output]") {
    scratch_dir d("basic");
    const fs::path target = d.path / "out.bin";
    {
        trace::atomic_output out(target);
        // The temporary is "<target>.XXXXXX.tmp" next to the target; the target does not exist yet.
        const std::string tmp = out.temporary().filename().string();
        CHECK(tmp.starts_with("out.bin."));
        CHECK(tmp.ends_with(".tmp"));
        CHECK(tmp.size() == std::string("out.bin.XXXXXX.tmp").size());
        CHECK(out.temporary().parent_path() == target.parent_path());
        out.write("hello ");
        out.write({{"wor", 3}, {"ld", 2}});
        CHECK_FALSE(fs::exists(target));
        CHECK(out.bytes_written() == 11);
        out.commit();
    }
    CHECK(read_file(target) == "hello world");
    CHECK(temporaries_of(target).empty());
    {
        trace::atomic_output abandoned(target);
        abandoned.write("not this");
    }   // no commit: the temporary goes, the target stays
    CHECK(read_file(target) == "hello world");
    CHECK(temporaries_of(target).empty());
}

TEST_CASE("atomic output: a link planted at a temporary name cannot redirect the write", "[atomic-output]") {
    scratch_dir d("planted");
    const fs::path victim = d.path / "victim";   // stands for a file the writer must never touch
    put_file(victim, "precious");
    const fs::path target = d.path / "run.pftrace";
    // The names a writer could predict: the old fixed "<target>.tmp", the test support's
    // "<target>.tmp.<pid>", and the JSON export's and lesson's fixed names.
    for (const std::string& suffix : {std::string(".tmp"), ".tmp." + std::to_string(::getpid())})
        fs::create_symlink(victim, target.string() + suffix);
    fs::create_symlink(victim, d.path / "out.json.tmp");

    write_trace(target, "planted", 3);
    trace::write_chrome_json(trace::load_trace_file(target.string()), d.path / "out.json");
    trace::write_file_atomically(target, std::string("plain bytes"));

    CHECK(read_file(victim) == "precious");
    CHECK(fs::is_symlink(target.string() + ".tmp"));   // the links are neither followed nor replaced
    CHECK(fs::is_symlink(d.path / "out.json.tmp"));
    CHECK(read_file(target) == "plain bytes");
    CHECK(fs::is_regular_file(fs::symlink_status(d.path / "out.json")));
}

TEST_CASE("atomic output: a symbolic link at the target is refused, its target untouched", "[atomic-output]") {
    scratch_dir d("link-target");
    const fs::path victim = d.path / "victim";
    put_file(victim, "precious");
    const fs::path target = d.path / "run.pftrace";
    fs::create_symlink(victim, target);

    const std::string expected = "cannot write " + target.string() + ": is a symbolic link (to " + victim.string() +
                                 "); write to " + victim.string() + " itself";
    CHECK(error_of([&] { trace::check_output_path(target); }) == expected);
    CHECK_THROWS_AS(trace::perfetto_writer(target), trace::output_path_error);
    CHECK(error_of([&] { write_trace(target, "x", 1); }) == expected);
    CHECK(error_of([&] { trace::write_file_atomically(target, std::string("x")); }) == expected);
    CHECK(read_file(victim) == "precious");
    CHECK(fs::is_symlink(target));
    CHECK(temporaries_of(target).empty());
}

TEST_CASE("atomic output: a device, a FIFO or a directory is refused before anything is written", "[atomic-output]") {
    SECTION("/dev/null stays a character device") {
        CHECK(error_of([] { trace::check_output_path("/dev/null"); }) == "cannot write /dev/null: is a character device");
        CHECK(error_of([] { write_trace("/dev/null", "x", 1); }) == "cannot write /dev/null: is a character device");
        CHECK(S_ISCHR(mode_of("/dev/null")));
        CHECK(temporaries_of("/dev/null").empty());
    }
    SECTION("a FIFO stays a FIFO") {
        scratch_dir d("fifo");
        const fs::path fifo = d.path / "pipe";
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        const std::string expected = "cannot write " + fifo.string() + ": is a FIFO";
        CHECK(error_of([&] { write_trace(fifo, "x", 1); }) == expected);
        CHECK(error_of([&] { trace::write_file_atomically(fifo, std::string("x")); }) == expected);
        CHECK(S_ISFIFO(mode_of(fifo)));
        CHECK(temporaries_of(fifo).empty());
    }
    SECTION("a directory stays a directory") {
        scratch_dir d("dir");
        const fs::path dir = d.path / "traces";
        fs::create_directory(dir);
        CHECK(error_of([&] { write_trace(dir, "x", 1); }) == "cannot write " + dir.string() + ": is a directory");
        CHECK(fs::is_directory(dir));
        CHECK(fs::is_empty(dir));
        CHECK(temporaries_of(dir).empty());
    }
    SECTION("an empty path, a missing directory") {
        CHECK(error_of([] { trace::check_output_path(""); }) == "cannot write \"\": the output path is empty");
        CHECK_THROWS_AS(trace::perfetto_writer(fs::path()), trace::output_path_error);
        scratch_dir d("missing");
        const fs::path p = d.path / "no-such-dir" / "run.pftrace";
        CHECK(error_of([&] { trace::check_output_path(p); }) ==
              "cannot write " + p.string() + ": the directory " + (d.path / "no-such-dir").string() + " does not exist");
        CHECK_FALSE(fs::exists(d.path / "no-such-dir"));
    }
}

TEST_CASE("atomic output: two writers of one path at once leave one writer's complete file", "[atomic-output]") {
    scratch_dir d("two-writers");
    const fs::path target = d.path / "run.pftrace";
    // Several chunks each, so that the writes of the two interleave; different run names, so the
    // contents differ.
    constexpr int chunks = 40;
    const std::string a = trace_bytes("writer A", chunks), b = trace_bytes("writer B", chunks);
    REQUIRE(a != b);
    int mixed = 0, rounds_a = 0, rounds_b = 0;
    for (int round = 0; round < 30; ++round) {
        std::thread ta([&] { write_trace(target, "writer A", chunks); });
        std::thread tb([&] { write_trace(target, "writer B", chunks); });
        ta.join();
        tb.join();
        const std::string got = read_file(target);
        if (got == a) ++rounds_a;
        else if (got == b) ++rounds_b;
        else ++mixed;
    }
    CHECK(mixed == 0);
    CHECK(rounds_a + rounds_b == 30);
    CHECK(temporaries_of(target).empty());
}

TEST_CASE("atomic output: two processes writing one path leave one process's complete file", "[atomic-output]") {
    scratch_dir d("two-processes");
    const fs::path target = d.path / "out.bin";
    // 1 MiB of one letter per process, in 64 KiB writes.
    const std::string a(1 << 20, 'a'), b(1 << 20, 'b');
    auto write_all = [&](const std::string& bytes) {
        trace::atomic_output out(target);
        for (std::size_t at = 0; at < bytes.size(); at += 1 << 16) out.write(bytes.data() + at, 1 << 16);
        out.commit();
    };
    for (int round = 0; round < 10; ++round) {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {   // only syscalls and the writer here; _exit skips the parent's atexit work
            try {
                write_all(b);
            } catch (...) {
                ::_exit(1);
            }
            ::_exit(0);
        }
        write_all(a);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
        const std::string got = read_file(target);
        CHECK((got == a || got == b));
    }
    CHECK(temporaries_of(target).empty());
}

TEST_CASE("atomic output: the file keeps its mode, a new one gets 0666 minus the umask", "[atomic-output]") {
    scratch_dir d("mode");
    const fs::path target = d.path / "private.pftrace";
    const umask_guard usual(022);
    put_file(target, "old");
    fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);   // 0600
    write_trace(target, "re-recorded", 2);
    CHECK((mode_of(target) & 07777) == 0600);
    trace::write_chrome_json(trace::load_trace_file(target.string()), d.path / "new.json");
    CHECK((mode_of(d.path / "new.json") & 07777) == 0644);
    {
        const umask_guard strict(077);
        trace::write_file_atomically(d.path / "strict.bin", std::string("x"));
    }
    CHECK((mode_of(d.path / "strict.bin") & 07777) == 0600);
}

TEST_CASE("atomic output: an injected full disk names the file and keeps the old one", "[atomic-output]") {
    scratch_dir d("enospc");
    const fs::path target = d.path / "run.pftrace";
    put_file(target, "the previous recording");
    const std::string expected = "cannot write " + target.string() + ": no space left on device";

    SECTION("a plain write") {
        const injected_write_failure full(1, ENOSPC);
        const std::string what = error_of([&] { trace::write_file_atomically(target, std::string("new")); });
        CHECK(what == expected);
    }
    SECTION("the perfetto writer: finish() says it again, not 'a run still open'") {
        trace::perfetto_writer out(target);
        out.begin_run({"full", 1, "{}", {}}, identity_clock());
        const injected_write_failure full(1, ENOSPC);
        const event_record r[2] = {event_record{10, 0, 0, 0, event_kind::idle_begin, 0, 0},
                                   event_record{50, 0, 0, 0, event_kind::idle_end, 0, 0}};
        try {
            out.add_chunk(0, r, 2);
            FAIL("the write did not fail");
        } catch (const trace::output_error& e) {
            CHECK(std::string(e.what()) == expected);
            CHECK(e.code().value() == ENOSPC);
        }
        CHECK(error_of([&] { out.finish(); }) == expected);
    }
    SECTION("the JSON export") {
        const fs::path source = d.path / "source.pftrace";
        write_trace(source, "exported", 3);
        const trace::trace_model m = trace::load_trace_file(source.string());
        const fs::path json = d.path / "out.json";
        put_file(json, "the previous export");
        const injected_write_failure full(1, ENOSPC);
        CHECK(error_of([&] { trace::write_chrome_json(m, json); }) ==
              "cannot write " + json.string() + ": no space left on device");
        CHECK(read_file(json) == "the previous export");
        CHECK(temporaries_of(json).empty());
    }
    SECTION("a recording session: end_run throws the OS error, and the session prints nothing more") {
        // stderr goes to a file while the session ends and is destroyed.
        const fs::path err = d.path / "stderr.txt";
        std::fflush(stderr);
        const int saved = ::dup(2);
        const int to = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        REQUIRE((saved >= 0 && to >= 0));
        ::dup2(to, 2);
        ::close(to);
        std::string what;
        {
            scheduler sched({.workers = 2});
            trace_session session(sched, target, {.loops_are_runs = false});
            session.begin_run({.name = "full disk"});
            const injected_write_failure full(1, ENOSPC);
            task_group g(sched);
            for (int i = 0; i < 100; ++i) g.spawn([] {});
            g.sync();
            what = error_of([&] { session.end_run(); });
        }
        CHECK(what == expected);
        {   // full from the run's first packets on
            scheduler sched({.workers = 2});
            trace_session session(sched, target, {.loops_are_runs = false});
            const injected_write_failure full(1, ENOSPC);
            what = error_of([&] { session.begin_run({.name = "full disk"}); });
        }
        std::fflush(stderr);
        ::dup2(saved, 2);
        ::close(saved);
        CHECK(what == expected);
        CHECK(read_file(err).empty());
    }
    CHECK(read_file(target) == "the previous recording");
    CHECK(temporaries_of(target).empty());
}

TEST_CASE("atomic output: a real full disk (root, tmpfs of 64 KiB)", "[atomic-output]") {
    if (::geteuid() != 0) {
        WARN("skipped: mounting a tmpfs needs root");
        return;
    }
    scratch_dir d("tmpfs");
    if (::mount("tmpfs", d.path.c_str(), "tmpfs", 0, "size=64k") != 0) {
        WARN("skipped: cannot mount a tmpfs here: " << std::strerror(errno));
        return;
    }
    struct unmount {
        const fs::path& p;
        ~unmount() { ::umount2(p.c_str(), MNT_DETACH); }
    } unmount_at_end{d.path};
    const fs::path target = d.path / "big.bin";
    put_file(target, "small and old");
    const std::string big(1 << 20, 'x');
    CHECK(error_of([&] { trace::write_file_atomically(target, big); }) ==
          "cannot write " + target.string() + ": no space left on device");
    CHECK(read_file(target) == "small and old");
    CHECK(temporaries_of(target).empty());
}
