// The run panel's child process (model/run_job.hpp): a real `pipescope run` of a small workload,
// its progress lines, its trace loaded; a cancelled run leaves nothing behind; a bad parameter's
// error is captured. PIPESCOPE_CLI_PATH is the command built with the viewer (tests/viewer/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <model/loader.hpp>
#include <model/run_catalog.hpp>
#include <model/run_job.hpp>
#include <model/run_launcher.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

namespace {

const fs::path cli = PIPESCOPE_CLI_PATH;

// A fresh empty directory under the temporary directory.
fs::path fresh_dir() {
    std::string t = (fs::temp_directory_path() / "pipescope-run-job-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()) != nullptr);
    return t;
}

// Waits (a minute at most) until `done` holds for the job's snapshot.
template <class Pred>
run_job::snapshot wait_for(const run_job& j, Pred done) {
    const auto t0 = std::chrono::steady_clock::now();
    run_job::snapshot s = j.get();
    while (!done(s) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        s = j.get();
    }
    return s;
}

std::size_t files_in(const fs::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
    return n;
}

run_choice fib(const std::string& size) {
    run_choice c;
    c.workload = "pipe-fib";
    c.policy = "piper";
    c.size = size;
    c.params = {{"K", "2"}};
    return c;
}

}   // namespace

TEST_CASE("run_job: the progress lines of pipescope run --progress json come in phase order", "[run_job]") {
    const fs::path dir = fresh_dir();
    const run_choice c = fib("tiny");
    const captured_output r = run_to_end(run_arguments(cli, c, dir / "x.pftrace"));
    REQUIRE(r.exit_code == 0);
    std::istringstream lines(r.err);
    std::vector<std::string> phases;
    double last_elapsed = -1;
    run_progress p;
    for (std::string line; std::getline(lines, line);) {
        REQUIRE(read_progress_line(line, p));   // every stderr line is a progress line
        CHECK(p.elapsed_s >= last_elapsed);
        last_elapsed = p.elapsed_s;
        if (phases.empty() || phases.back() != p.phase) phases.push_back(p.phase);
    }
    CHECK(phases == std::vector<std::string>{"reference", "measured", "writing", "done"});
    CHECK(p.reference_s > 0);
    float f = -1;
    for (const char* phase : {"", "reference", "measured", "writing", "done"}) {   // the bar only moves forward
        run_progress at;
        at.phase = phase;
        at.measured_s = 1e9;   // a measured run longer than its estimate stays below "writing"
        at.reference_s = 1;
        const float g = progress_fraction(at);
        CHECK(g > f);
        f = g;
    }
    CHECK(f == 1.f);
    fs::remove_all(dir);
}

TEST_CASE("run_job: a tiny pipe-fib run finishes and its trace loads", "[run_job]") {
    const fs::path dir = fresh_dir();
    const run_choice c = fib("tiny");
    const fs::path trace = new_trace_path(dir, c, 1764693300);
    CHECK(trace.filename().string().starts_with("pipe-fib-piper-P2-K2-tiny-"));
    // Called on the job's reader thread, also after the state it publishes says finished: atomic.
    std::atomic<int> changes = 0;
    run_job j(cli, c, trace, [&] { ++changes; });
    const run_job::snapshot s = wait_for(j, [](const auto& s) { return s.state != run_job::status::running; });
    INFO(s.messages);
    REQUIRE(s.state == run_job::status::finished);
    CHECK(s.exit_code == 0);
    CHECK(s.progress.phase == "done");
    CHECK(s.messages.empty());
    CHECK(s.output.find("pipe-fib · piper · P=2") != std::string::npos);
    CHECK(changes.load() >= 2);   // a progress line and the end at least
    REQUIRE(fs::is_regular_file(trace));
    CHECK(files_in(dir) == 1);   // no temporary file beside it
    const load_result loaded = loader::load_now(trace);
    REQUIRE(loaded.file);
    CHECK(loaded.file->model.runs.size() == 1);
    // The next run of the same choice in the same second gets another name: nothing is overwritten.
    const fs::path again = new_trace_path(dir, c, 1764693300);
    CHECK(again != trace);
    CHECK(again.filename().string().ends_with("-2.pftrace"));
    fs::remove_all(dir);
}

TEST_CASE("run_job: a cancelled run ends and leaves no file", "[run_job]") {
    const fs::path dir = fresh_dir();
    const run_choice c = fib("small");   // seconds long: cancelled in its measured run
    run_job j(cli, c, new_trace_path(dir, c, 1764693300), {});
    const run_job::snapshot before =
        wait_for(j, [](const auto& s) { return s.progress.phase == "measured" || s.state != run_job::status::running; });
    REQUIRE(before.state == run_job::status::running);
    j.cancel();
    const run_job::snapshot s = wait_for(j, [](const auto& s) { return s.state != run_job::status::running; });
    CHECK(s.state == run_job::status::cancelled);
    CHECK(s.exit_code == 128 + 15);   // the command's own exit on SIGTERM, not a kill
    CHECK(files_in(dir) == 0);        // neither the trace nor a .tmp
    fs::remove_all(dir);
}

TEST_CASE("run_job: a bad parameter fails with the command's message and no file", "[run_job]") {
    const fs::path dir = fresh_dir();
    run_choice c = fib("tiny");
    c.params = {{"K", "many"}};
    run_job j(cli, c, dir / "bad.pftrace", {});
    const run_job::snapshot s = wait_for(j, [](const auto& s) { return s.state != run_job::status::running; });
    CHECK(s.state == run_job::status::failed);
    CHECK(s.exit_code != 0);
    INFO(s.messages);
    CHECK(s.messages.find("K") != std::string::npos);
    CHECK(files_in(dir) == 0);
    fs::remove_all(dir);
}

TEST_CASE("run_job: a command that does not exist is a failed job, not a crash", "[run_job]") {
    run_job j("/nonexistent/pipescope", fib("tiny"), fs::temp_directory_path() / "never.pftrace", {});
    const run_job::snapshot s = wait_for(j, [](const auto& s) { return s.state != run_job::status::running; });
    CHECK(s.state == run_job::status::failed);
    CHECK_FALSE(s.messages.empty());
}

TEST_CASE("run_catalog: pipescope list --json gives the workloads, their policies and parameters", "[run_job]") {
    const run_catalog c = load_catalog(cli);
    REQUIRE(c.error.empty());
    const catalog_workload* w = c.find("pipe-fib");
    REQUIRE(w);
    CHECK(std::find(w->policies.begin(), w->policies.end(), "piper") != w->policies.end());
    CHECK(w->refused.count("tbb") == 1);   // pipe-fib's stages are not a tbb pipeline
    CHECK(std::any_of(w->parameters.begin(), w->parameters.end(),
                      [](const catalog_parameter& p) { return p.name == "K" && p.default_value == "0"; }));
    CHECK(c.policy_summaries.count("piper") == 1);
    CHECK_THROWS(parse_catalog("not json"));
    CHECK_FALSE(load_catalog("/nonexistent/pipescope").error.empty());
}

TEST_CASE("run_launcher: the form's choice, and each finished trace handed out once", "[run_job]") {
    run_launcher l;
    l.cli = cli;
    l.dir = fresh_dir();
    REQUIRE(l.catalog().error.empty());
    CHECK(l.choice().workload == "pipe-fib");   // the first question: pipe-fib under PIPER
    CHECK(l.choice().policy == "piper");
    REQUIRE_FALSE(l.params.empty());
    CHECK(l.params.front().parameter.name == "K");   // K first
    CHECK(l.choice().params.empty());                // empty fields pass nothing
    std::snprintf(l.params.front().value.data(), l.params.front().value.size(), "2");
    CHECK(l.choice().params == std::vector<std::pair<std::string, std::string>>{{"K", "2"}});
    REQUIRE(l.start().empty());
    CHECK(l.busy());
    wait_for(*l.jobs()[0], [](const auto& s) { return s.state != run_job::status::running; });
    const std::vector<fs::path> first = l.take_finished();
    REQUIRE(first.size() == 1);
    CHECK(first[0] == l.last_path());
    CHECK(fs::is_regular_file(first[0]));
    CHECK(l.take_finished().empty());   // once
    CHECK_FALSE(l.busy());
    CHECK_FALSE(l.recording());
    // A workload with no PIPER (a stage graph) starts at its first policy, with its own parameters.
    for (std::size_t i = 0; i < l.catalog().workloads.size(); ++i)
        if (l.catalog().workloads[i].name == "mergesort") l.select_workload(static_cast<int>(i));
    CHECK(l.choice().workload == "mergesort");
    CHECK(l.choice().policy == l.catalog().find("mergesort")->policies.front());
    fs::remove_all(l.dir);
}
