// Package test: a program built against the *installed* pipescope. Runs a real pipe_while
// (under both policies) and a fork-join task_group, and compares with serially computed values; then
// records a named pipeline with trace_session and reads the trace back.
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

namespace {

constexpr std::uint64_t n_items = 20000;

std::uint64_t serial_sum_of_squares(std::uint64_t n) {
    std::uint64_t s = 0;
    for (std::uint64_t x = 0; x < n; ++x) s += x * x;
    return s;
}

// Three stages: read the next number (serial), square it (parallel), add it up in order (serial).
bool check_pipeline(pipescope::scheduler& sched, const std::string& policy, pipescope::pipeline_options options = {}) {
    std::uint64_t next = 0;
    std::uint64_t expected_in_order = 0;
    std::uint64_t out_of_order = 0;
    std::uint64_t sum = 0;

    options.policy = policy;
    const pipescope::pipeline_stats stats = pipescope::pipe_while(
        sched, [&] { return next < n_items; },
        [&](pipescope::iteration& it) -> pipescope::pipe_task {
            const std::uint64_t x = next++;   // stage 0: serial
            co_await it.stage(1);
            const std::uint64_t square = x * x;   // stage 1: parallel
            co_await it.stage_wait(2);
            if (x != expected_in_order) ++out_of_order;   // stage 2: serial, in iteration order
            ++expected_in_order;
            sum += square;
        },
        options);

    const std::uint64_t want = serial_sum_of_squares(n_items);
    const bool ok = sum == want && out_of_order == 0 && stats.iterations == n_items;
    std::printf("pipe_while[%s]: sum of squares %llu (serial %llu), iterations %llu, out of order %llu: %s\n",
                policy.c_str(), static_cast<unsigned long long>(sum), static_cast<unsigned long long>(want),
                static_cast<unsigned long long>(stats.iterations), static_cast<unsigned long long>(out_of_order),
                ok ? "ok" : "MISMATCH");
    return ok;
}

// Divide and conquer: spawn one half, do the other, sync.
std::uint64_t parallel_sum_of_squares(pipescope::scheduler& sched, std::uint64_t lo, std::uint64_t hi) {
    if (hi - lo <= 512) {
        std::uint64_t s = 0;
        for (std::uint64_t x = lo; x < hi; ++x) s += x * x;
        return s;
    }
    const std::uint64_t mid = lo + (hi - lo) / 2;
    std::uint64_t left = 0;
    pipescope::task_group g(sched);
    g.spawn([&] { left = parallel_sum_of_squares(sched, lo, mid); });
    const std::uint64_t right = parallel_sum_of_squares(sched, mid, hi);
    g.sync();
    return left + right;
}

bool check_task_group(pipescope::scheduler& sched) {
    const std::uint64_t got = parallel_sum_of_squares(sched, 0, n_items);
    const std::uint64_t want = serial_sum_of_squares(n_items);
    const bool ok = got == want;
    std::printf("task_group: sum of squares %llu (serial %llu): %s\n", static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(want), ok ? "ok" : "MISMATCH");
    return ok;
}

// Records a named pipeline through the installed trace_session and reads the file back with the
// installed trace model: one run, named as the program named it, its node slices named too.
bool check_recording(pipescope::scheduler& sched) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() / "pipescope-consumer.pftrace";
    {
        pipescope::trace_session rec(sched, path, {.name = "consumer", .detail = pipescope::trace::trace_detail::nodes});
        pipescope::pipeline_options options;
        options.name = "squares";
        options.stage_names = {"next", "square", "sum"};
        if (!check_pipeline(sched, "piper", options)) return false;
    }
    const pipescope::trace::trace_model m = pipescope::trace::load_trace_file(path);
    std::uint64_t named = 0;
    for (const auto& t : m.tracks)
        for (const auto& s : t.slices) named += m.str(s.name) == "stage 1 \u00b7 square";
    const bool ok =
        m.problems.empty() && m.runs.size() == 1 && m.runs[0].name == "squares \u00b7 piper \u00b7 P=4" && named == n_items;
    std::printf("trace_session: %s holds %zu run(s), %llu nodes named 'stage 1 \u00b7 square': %s\n", path.c_str(),
                m.runs.size(), static_cast<unsigned long long>(named), ok ? "ok" : "MISMATCH");
    std::filesystem::remove(path);
    return ok;
}

}   // namespace

int main() {
    try {
        pipescope::scheduler sched(pipescope::scheduler_options{4});
        std::printf("pipescope scheduler with %u workers\n", sched.workers());
        bool ok = true;
        ok = check_pipeline(sched, "piper") && ok;
        ok = check_pipeline(sched, "serial") && ok;
        ok = check_task_group(sched) && ok;
        ok = check_recording(sched) && ok;
        std::puts(ok ? "package consumer: all checks passed" : "package consumer: FAILED");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "package consumer: exception: %s\n", e.what());
        return 2;
    }
}
