// pipescope_stress: random pipeline programs under every pipe_while policy and random stage graphs
// under every graph policy, several worker counts, for a bounded time; each pipeline run checked
// against the serial elision, each graph run against the recursion over its stage functions
// (tests/support/random_graph.hpp); a watchdog turns a hang into a failure and saves the trace of
// the hung run. Rounds alternate: pipeline, graph, pipeline, ...
//
//   pipescope_stress [--seconds S] [--timeout S] [--trace-dir DIR] [--seed N] [--workers 1,2,4,8]
//   pipescope_stress --hang-test [--timeout S] [--trace-dir DIR]
//
// Every run is recorded (a small buffer: what matters is the last moments before a hang). When a
// run does not finish within --timeout seconds, the watchdog writes what the recorder holds to
// DIR/hung-<seed>-<policy>-P<n>.pftrace, prints the configuration to rerun and exits with status 3
// without waiting for the stuck workers. A wrong result exits with status 1 and the configuration.
// P larger than the machine's cores is deliberate: oversubscription finds what timing hides.
// --hang-test checks the watchdog itself: one loop whose stage blocks until the process ends.
#include "support/random_graph.hpp"
#include "support/random_pipeline.hpp"

#include <pipescope/graph/program.hpp>

#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace pipescope;
using namespace pipescope::testing;
namespace fs = std::filesystem;

namespace {

struct stress_options {
    double seconds = 30;
    double timeout = 60;
    fs::path trace_dir = ".";
    std::uint64_t seed = 1;
    std::vector<unsigned> workers = {1, 2, 4, 8};
    bool hang_test = false;
};

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr,
                 "pipescope_stress: %s\nusage: pipescope_stress [--seconds S] [--timeout S] [--trace-dir DIR] [--seed N] "
                 "[--workers 1,2,4,8]\n",
                 what.c_str());
    std::exit(2);
}

double parse_positive(const std::string& opt, const std::string& v) {
    try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used == v.size() && d > 0) return d;
    } catch (const std::exception&) {
    }
    usage_error(opt + " " + v + ": expected a positive number");
}

stress_options parse(int argc, char** argv) {
    stress_options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") usage_error("runs random pipelines under every policy");
        if (a == "--hang-test") {
            o.hang_test = true;
            continue;
        }
        if (i + 1 >= argc) usage_error(a + " needs a value");
        const std::string v = argv[++i];
        if (a == "--seconds") o.seconds = parse_positive(a, v);
        else if (a == "--timeout") o.timeout = parse_positive(a, v);
        else if (a == "--trace-dir") o.trace_dir = v;
        else if (a == "--seed") o.seed = static_cast<std::uint64_t>(parse_positive(a, v));
        else if (a == "--workers") {
            o.workers.clear();
            std::size_t at = 0;
            while (at <= v.size()) {
                const std::size_t comma = std::min(v.find(',', at), v.size());
                const double p = parse_positive(a, v.substr(at, comma - at));
                if (p > 256 || p != static_cast<unsigned>(p)) usage_error(a + " " + v + ": worker counts are 1..256");
                o.workers.push_back(static_cast<unsigned>(p));
                at = comma + 1;
            }
        } else usage_error("unknown option " + a);
    }
    return o;
}

// One run under the watchdog's eye: arm() before, disarm() after; a run that outlives the timeout
// gets its trace written and ends the process.
class watchdog {
public:
    explicit watchdog(double timeout_s) : timeout_(timeout_s), thread_([this] { watch(); }) {}
    ~watchdog() {
        {
            std::lock_guard lock(m_);
            quit_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    void arm(std::string what, trace::recorder* rec, fs::path trace_path) {
        std::lock_guard lock(m_);
        what_ = std::move(what);
        recorder_ = rec;
        trace_path_ = std::move(trace_path);
        armed_ = true;
        ++generation_;
        cv_.notify_all();
    }
    void disarm() {
        std::lock_guard lock(m_);
        armed_ = false;
        cv_.notify_all();
    }

private:
    void watch() {
        std::unique_lock lock(m_);
        for (;;) {
            cv_.wait(lock, [&] { return quit_ || armed_; });
            if (quit_) return;
            const std::uint64_t gen = generation_;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
            if (cv_.wait_until(lock, deadline, [&] { return quit_ || !armed_ || generation_ != gen; })) continue;
            hung();
        }
    }
    // Under m_. The workers are stuck, not stopped: an idle one still records (idle, park), so the
    // trace is a snapshot of the live recorder (flush() would hand a chunk one worker still writes
    // to another). What they recorded last is what explains the hang.
    [[noreturn]] void hung() {
        std::fprintf(stderr, "pipescope_stress: HANG: %s did not finish within %.0f s\n", what_.c_str(), timeout_);
        try {
            trace::perfetto_writer writer(trace_path_);
            writer.begin_run({"hung: " + what_, recorder_->writers(), "{}", {}},
                             trace::run_clock::calibrating(recorder_->start_clock()));
            recorder_->snapshot(writer.sink());
            writer.end_run();
            writer.finish();
            std::fprintf(stderr, "pipescope_stress: the trace of the hung run is %s\n", trace_path_.c_str());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "pipescope_stress: could not write the trace of the hung run: %s\n", e.what());
        }
        std::fflush(stderr);
        std::_Exit(3);
    }

    double timeout_;
    std::mutex m_;
    std::condition_variable cv_;
    bool quit_ = false, armed_ = false;
    std::uint64_t generation_ = 0;
    std::string what_;
    trace::recorder* recorder_ = nullptr;
    fs::path trace_path_;
    std::thread thread_;
};

// One run under the watchdog, recorded (a small buffer: the last moments before a hang matter).
// False, after saying so, if the run threw.
bool run_watched(scheduler& s, unsigned workers, watchdog& dog, const std::string& what, const fs::path& trace_path,
                 const std::function<void(scheduler&)>& run) {
    trace::recorder rec(workers, std::size_t{4} << 20);
    s.attach_recorder(&rec);
    rec.restart_clock();
    dog.arm(what, &rec, trace_path);
    try {
        run(s);
    } catch (const std::exception& e) {
        dog.disarm();
        std::fprintf(stderr, "pipescope_stress: FAIL: %s threw: %s\n", what.c_str(), e.what());
        return false;
    }
    dog.disarm();
    s.attach_recorder(nullptr);
    return true;
}

// A loop that hangs: iteration 3's stage 1 waits for a signal that never comes, under piper on two
// workers. The watchdog must fire, write the trace and end the process with status 3.
int hang_test(const stress_options& opt) {
    scheduler s(scheduler_options{2});
    trace::recorder rec(2, std::size_t{4} << 20);
    s.attach_recorder(&rec);
    rec.restart_clock();
    watchdog dog(opt.timeout);
    dog.arm("the hang test (iteration 3 blocks in stage 1)", &rec, opt.trace_dir / "hung-hang-test.pftrace");
    std::mutex never_m;
    std::condition_variable never;
    unsigned next = 0;
    pipe_while(
        s, [&] { return next < 10; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            co_await it.stage(1);
            if (i == 3) {
                std::unique_lock lock(never_m);
                never.wait(lock, [] { return false; });
            }
            co_await it.stage_wait(2);
        });
    dog.disarm();
    std::fprintf(stderr, "pipescope_stress: the hang test finished: the watchdog did not fire\n");
    return 1;
}

struct policy_case {
    pipeline_policy_info info;
    std::uint64_t runs = 0;
};

struct graph_case {
    graph::policy_info info;
    std::uint64_t runs = 0;
};

// A graph policy's parameters, varied: GRAMPS' preemption budget and buffer manager, DANBI's
// configuration (seed 002 Fig. 3) and its C.
std::vector<std::pair<std::string, std::string>> random_graph_params(const std::string& policy, rng& r) {
    if (policy == "gramps") {
        static const char* preempt[] = {"1", "4", "32", "0"};
        static const char* buffers[] = {"packet-stealing", "per-queue", "malloc"};
        return {{"preempt", preempt[r.below(4)]}, {"buffers", buffers[r.below(3)]}};
    }
    if (policy == "danbi") {
        static const char* configs[] = {"ws", "qes", "qes+pss", "qes+pss+prs"};
        static const char* c[] = {"1", "100", "10000"};
        return {{"config", configs[r.below(4)]}, {"C", c[r.below(3)]}};
    }
    return {};
}

}   // namespace

int main(int argc, char** argv) {
    const stress_options opt = parse(argc, argv);
    std::error_code ec;
    fs::create_directories(opt.trace_dir, ec);
    if (opt.hang_test) return hang_test(opt);

    std::vector<policy_case> policies;
    for (auto& p : pipeline_policies()) policies.push_back({p, 0});
    std::vector<graph_case> graph_policies;
    for (auto& p : graph::policies()) graph_policies.push_back({p, 0});
    std::uint64_t graph_runs = 0, graph_elements = 0;
    std::map<unsigned, std::unique_ptr<scheduler>> pools;
    for (unsigned p : opt.workers) pools[p] = std::make_unique<scheduler>(scheduler_options{p});
    scheduler& reference_pool = *pools.begin()->second;
    watchdog dog(opt.timeout);

    static const unsigned throttles[] = {1, 2, 3, 5, 16, 0};
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t runs = 0, iterations = 0;
    for (std::uint64_t round = 0;; ++round) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed >= opt.seconds) break;
        const std::uint64_t seed = opt.seed + round;
        if (round % 2 == 1) {   // a stage graph
            const std::uint64_t k = round / 2;
            graph_case& gc = graph_policies[k % graph_policies.size()];
            const unsigned workers = opt.workers[(k / graph_policies.size()) % opt.workers.size()];
            auto g = random_graph::make(seed);
            const graph_result expected = g->expected();
            rng r{seed ^ 0x6EA9};
            graph::run_options o;
            o.policy = gc.info.name;
            o.seed = seed;
            o.params = random_graph_params(gc.info.name, r);
            std::string what = g->describe() + " · graph policy " + gc.info.name;
            for (const auto& [key, v] : o.params) what += " " + key + "=" + v;
            what += " · P=" + std::to_string(workers) + " (rerun: --seed " + std::to_string(opt.seed) + ", round " +
                    std::to_string(round) + ")";
            const fs::path trace_path = opt.trace_dir / ("hung-graph-" + std::to_string(seed) + "-" + gc.info.name + "-P" +
                                                         std::to_string(workers) + ".pftrace");
            if (!run_watched(*pools[workers], workers, dog, what, trace_path,
                             [&](scheduler& s) { graph::run(s, g->program(), o); }))
                return 1;
            if (!(g->result() == expected)) {
                std::fprintf(
                    stderr,
                    "pipescope_stress: FAIL: %s: the sink received %llu elements (checksum %llx), expected %llu (%llx)\n",
                    what.c_str(), (unsigned long long)g->result().count, (unsigned long long)g->result().checksum,
                    (unsigned long long)expected.count, (unsigned long long)expected.checksum);
                return 1;
            }
            ++gc.runs;
            ++graph_runs;
            graph_elements += expected.count;
            continue;
        }
        policy_case& pc = policies[(round / 2) % policies.size()];
        const unsigned workers = opt.workers[(round / 2 / policies.size()) % opt.workers.size()];
        const random_program program = random_program::make(seed);
        rng r{seed ^ 0x57E55};

        pipeline_options options;
        options.policy = pc.info.name;
        options.throttle = throttles[r.below(6)];
        options.lazy_enabling = r.below(2) == 0;
        options.dependency_folding = r.below(2) == 0;
        if (pc.info.needs_declared_stages) options.declared_stages = declare_random_stages(program, seed);

        pipeline_options serial;
        serial.policy = "serial";
        const program_state expected = run_program(reference_pool, program, serial);

        std::string what = program.describe();
        what += " · policy ";
        what += pc.info.name;
        what += " · P=";
        what += std::to_string(workers);
        what += " K=";
        what += std::to_string(options.throttle);
        what += " (rerun: --seed ";
        what += std::to_string(seed);
        what += " --seconds 0.001 --workers ";
        what += std::to_string(workers);
        what += ")";

        const fs::path trace_path = opt.trace_dir / ("hung-" + std::to_string(seed) + "-" + pc.info.name + "-P" +
                                                     std::to_string(workers) + ".pftrace");
        program_state got;
        if (!run_watched(*pools[workers], workers, dog, what, trace_path,
                         [&](scheduler& s) { got = run_program(s, program, options); }))
            return 1;
        if (!(got == expected)) {
            std::fprintf(stderr, "pipescope_stress: FAIL: %s gave a result different from the serial elision\n",
                         what.c_str());
            return 1;
        }
        ++pc.runs;
        ++runs;
        iterations += program.iterations;
    }
    std::printf("pipescope_stress: %llu runs, %llu iterations, all equal to the serial elision; per policy:",
                (unsigned long long)runs, (unsigned long long)iterations);
    for (const auto& pc : policies) std::printf(" %s %llu", pc.info.name.c_str(), (unsigned long long)pc.runs);
    std::printf("; %llu graph runs, %llu elements at the sinks, all equal to the recursion; per graph policy:",
                (unsigned long long)graph_runs, (unsigned long long)graph_elements);
    for (const auto& gc : graph_policies) std::printf(" %s %llu", gc.info.name.c_str(), (unsigned long long)gc.runs);
    std::printf("; P in {");
    for (std::size_t i = 0; i < opt.workers.size(); ++i) std::printf("%s%u", i ? "," : "", opt.workers[i]);
    std::printf("}\n");
    return 0;
}
