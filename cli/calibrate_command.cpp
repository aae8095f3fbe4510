// `pipescope calibrate`: measures on this machine what the virtual cost model needs (docs/virtual.md,
// "Calibration") and writes it where `pipescope run --virtual` finds it (cost_table.hpp).
//
// Each cost is a real micro-measurement, through the runtime's own code where it has one (its
// work-stealing deque, its graph queues, a scheduler's parked worker), repeated (21 times by
// default, interleaved); the median of the repetitions is the cost, their 10th-90th percentiles and
// extremes its spread, and a cost whose spread is too wide is named with the way out
// (calibration_stats.hpp: a VM measured a wake-up of 788 us once and 57 us the next time).
#include <pipescope/recording/calibration_stats.hpp>
#include "arg_parser.hpp"
#include "commands.hpp"
#include <pipescope/recording/cost_table.hpp>
#include <pipescope/recording/recording.hpp>

#include <pipescope/detail/chase_lev_deque.hpp>
#include <pipescope/graph/queue.hpp>
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/workloads/machine.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double since_ns(clock_type::time_point t0) {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count());
}

std::uint64_t clock_ns(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// What reading a clock adds to a measured job: the virtual workers read both clocks at every yield
// point (runtime/src/virtual/interval_price.hpp). Each is N back-to-back reads, timed by the thread
// CPU clock — which sees its own reads, and which, unlike the wall clock, does not count the time
// the thread lost to other threads among them (the two agree while the thread keeps its CPU).
double read_cost_ns(clockid_t clock) {
    constexpr int reads = 20000;
    const std::uint64_t first = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < reads; ++i) clock_ns(clock);
    return static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID) - first) / reads;
}
double clock_read_ns() { return read_cost_ns(CLOCK_THREAD_CPUTIME_ID); }
double wall_clock_read_ns() { return read_cost_ns(CLOCK_MONOTONIC); }

// What reading steady_clock twice around nothing takes: taken off each timed steal below.
double timer_ns() {
    constexpr int pairs = 20000;
    double sum = 0;
    for (int i = 0; i < pairs; ++i) {
        const auto t0 = clock_type::now();
        sum += static_cast<double>((clock_type::now() - t0).count());
    }
    return sum / pairs;
}

// The owner of a deque at work on another thread while a thief tries it, as a victim is in a run:
// pushing and popping one job at a time (it looks empty to nearly every attempt), or (stealable)
// keeping `keep` jobs in it as the thief takes them. Each successful steal is timed on its own, so
// the time the thief waits for the owner to refill (or to be scheduled at all) is not counted.
double thief_ns(bool stealable) {
    constexpr std::size_t keep = 64, samples = 20000;
    pipescope::detail::chase_lev_deque<int*> deque(4 * keep);
    std::vector<int> items(keep);
    std::atomic<bool> stop{false}, started{false};
    std::atomic<std::int64_t> taken{0};
    std::thread owner([&] {
        std::int64_t pushed = 0;
        started.store(true);
        while (!stop.load(std::memory_order_relaxed)) {
            if (stealable) {
                while (pushed - taken.load(std::memory_order_relaxed) < static_cast<std::int64_t>(keep))
                    deque.push(&items[static_cast<std::size_t>(pushed++) % keep]);
            } else {
                deque.push(&items[0]);
                (void)deque.pop();
            }
        }
    });
    while (!started.load()) std::this_thread::yield();
    if (!stealable) {   // below the timer's resolution: a batch of attempts between two clock reads
        constexpr int attempts = 200000;
        const auto t0 = clock_type::now();
        for (int i = 0; i < attempts; ++i) (void)deque.steal();
        const double per = since_ns(t0) / attempts;
        stop.store(true);
        owner.join();
        return per;
    }
    const double timer = timer_ns();
    std::vector<double> ns;
    ns.reserve(samples);
    std::int64_t got = 0;
    while (ns.size() < samples) {
        const auto t0 = clock_type::now();
        const bool took = deque.steal() != nullptr;
        const auto t1 = clock_type::now();
        if (took) taken.store(++got, std::memory_order_relaxed);
        if (took) ns.push_back(static_cast<double>((t1 - t0).count()));
    }
    stop.store(true);
    owner.join();
    // The median call: a thief preempted in the middle of one (this machine may be busy) is not a steal's cost.
    std::nth_element(ns.begin(), ns.begin() + samples / 2, ns.end());
    return std::max(0.0, ns[samples / 2] - timer);
}

double failed_steal_ns() { return thief_ns(false); }
double steal_ns() { return thief_ns(true); }

// A graph queue's reserve plus commit (either side): push and pop one packet of 32 floats.
double queue_op_ns() {
    pipescope::graph::packet_queue q(
        {.name = "calibration", .element_size = sizeof(float), .packet_elements = 32, .capacity_packets = 8});
    constexpr int packets = 20000;
    const auto t0 = clock_type::now();
    for (int i = 0; i < packets; ++i) {
        auto w = q.try_reserve_push(1);
        if (!w) return -1;
        w.at<float>(0) = static_cast<float>(i);
        q.commit_push(w, 32);
        auto r = q.try_reserve_pop(1);
        if (!r) return -1;
        q.commit_pop(r);
    }
    return since_ns(t0) / (2.0 * packets);
}

// From an outside thread's spawn to the start of the task on the scheduler's only worker, which was
// parked: the runtime's unpark (futex) and the wake-up.
double wake_ns(pipescope::scheduler& sched) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));   // past its spinning and yielding: parked
    std::atomic<std::int64_t> started{0};
    const auto t0 = clock_type::now();
    pipescope::task_group g(sched);
    g.spawn([&] { started.store((clock_type::now() - t0).count(), std::memory_order_relaxed); });
    g.sync();
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::duration(started.load(std::memory_order_relaxed)))
            .count());
}

// Two threads pinned to one CPU hand it to each other through a condition variable: each hand-over
// is a context switch (plus the wake-up's system calls).
double context_switch_ns() {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(std::max(0, sched_getcpu()), &one);
    std::mutex m;
    std::condition_variable cv;
    int turn = 0;
    constexpr int rounds = 2000;
    auto player = [&](int me) {
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
        for (int i = 0; i < rounds; ++i) {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return turn == me; });
            turn = 1 - me;
            cv.notify_one();
        }
    };
    const auto t0 = clock_type::now();
    std::thread a(player, 0), b(player, 1);
    a.join();
    b.join();
    return since_ns(t0) / (2.0 * rounds);
}

// Two threads pinned to two different CPUs pass one cache line back and forth: each writes the
// counter the other waits for, so every step moves the line from one core's cache to the other's.
// A hand-off is half a round trip. Each round trip is timed on its own and the median one taken:
// on a loaded machine a round trip in which either thread lost its CPU measures the OS's
// scheduling, not the cache (a mean over all of them read 36 us at load 15; the median reads tens
// of ns). NaN when the process may use only one CPU.
double handoff_ns() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return NAN;
    int cpus[2] = {-1, -1};
    for (int cpu = 0, found = 0; cpu < CPU_SETSIZE && found < 2; ++cpu)
        if (CPU_ISSET(cpu, &allowed)) cpus[found++] = cpu;
    if (cpus[1] < 0) return NAN;
    struct alignas(64) line {
        std::atomic<std::int64_t> value{0};
    } shared;
    constexpr std::int64_t round_trips = 20000;
    const double timer = timer_ns();
    std::vector<double> trips;
    trips.reserve(round_trips);
    auto pin = [](int cpu) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    };
    auto await = [&](std::int64_t v) {
        while (shared.value.load(std::memory_order_acquire) != v) {
        }
    };
    std::thread echo([&] {   // answers every odd value with the next even one
        pin(cpus[1]);
        for (std::int64_t v = 1; v < 2 * round_trips; v += 2) {
            await(v);
            shared.value.store(v + 1, std::memory_order_release);
        }
    });
    pin(cpus[0]);
    for (std::int64_t v = 0; v < 2 * round_trips; v += 2) {
        await(v);
        const auto t0 = clock_type::now();
        shared.value.store(v + 1, std::memory_order_release);
        await(v + 2);
        trips.push_back(since_ns(t0));
    }
    echo.join();
    // The calling thread was pinned for the measurement: give it back every CPU it may use.
    pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
    std::nth_element(trips.begin(), trips.begin() + round_trips / 2, trips.end());
    return std::max(0.0, trips[round_trips / 2] - timer) / 2;
}

// A bind-to-stage queue push's critical section, uncontended: lock a mutex, put an item into a
// FIFO, unlock (stage_queue.hpp does that and a little bookkeeping under its lock).
double lock_hold_ns() {
    std::mutex m;
    std::deque<int> fifo;
    constexpr int pushes = 20000;
    const auto t0 = clock_type::now();
    for (int i = 0; i < pushes; ++i) {
        std::lock_guard lock(m);
        fifo.push_back(i);
        if (fifo.size() > 64) fifo.pop_front();
    }
    return since_ns(t0) / pushes;
}

// An idle worker yielding its core (std::this_thread::yield, as the worker loop does): the
// sched_yield system call, all of it kernel time. Timed on the thread's CPU clock: on a busy
// machine a yield hands the CPU to other processes for their whole timeslice (a wall clock read
// 157 us per yield at load 15), which a virtual worker with a core of its own does not wait for.
double yield_ns() {
    constexpr int yields = 20000;
    const std::uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < yields; ++i) std::this_thread::yield();
    return static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / yields;
}

struct measured {
    const char* name;
    const char* how;
    std::function<double()> once;
    std::vector<double> samples = {};
};

// Writes `doc` to `path` whole or not at all (atomic_output.hpp).
void write_file(const std::filesystem::path& path, const nlohmann::json& doc) {
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    pipescope::trace::write_file_atomically(path, doc.dump(2) + "\n");
}

// What calibrate measures, in the order it measures and prints them; `one_worker` is woken for "wake".
std::vector<measured> costs_to_measure(pipescope::scheduler& one_worker) {
    return {
        {"clock_read", "N back-to-back reads of CLOCK_THREAD_CPUTIME_ID, as that clock sees them", clock_read_ns},
        {"wall_clock_read", "N back-to-back reads of CLOCK_MONOTONIC, as that clock sees them", wall_clock_read_ns},
        {"failed_steal", "chase_lev_deque::steal on a deque its owner thread pushes and pops one job at a time",
         failed_steal_ns},
        {"steal", "chase_lev_deque::steal of jobs its owner thread keeps pushing", steal_ns},
        {"queue_op", "graph packet_queue: a reserve plus a commit (push and pop of one packet)", queue_op_ns},
        {"wake", "a scheduler's parked worker: from an outside spawn to the task's start",
         [w = &one_worker] { return wake_ns(*w); }},
        {"context_switch", "two threads on one CPU handing it over through a condition variable", context_switch_ns},
        {"yield", "std::this_thread::yield (the sched_yield system call), on the thread's CPU clock", yield_ns},
        {"handoff", "one cache line passed back and forth between threads pinned to two CPUs: half the median round trip",
         handoff_ns},
        {"lock_hold", "an uncontended mutex lock, a push into a FIFO, the unlock", lock_hold_ns},
    };
}

}   // namespace

int calibrate_command(const std::vector<std::string>& args) {
    std::filesystem::path out = pipescope::recording::default_calibration_path();
    unsigned repetitions = 21;   // enough for a median and a 10th-90th percentile range
    // No positionals: any other argument is "unexpected".
    pipescope::cli::arg_parser p({.prefix = "", .unknown = "calibrate: unexpected argument {}"});
    p.option({"--out"}, [&](const std::string& v) {
        out = v;
        if (out.empty()) pipescope::trace::check_output_path(out);   // refused, not taken for the default
    });
    p.number({"--repetitions"}, {3, 1000, "a number between 3 and 1000"},
             [&](std::uint64_t n) { repetitions = static_cast<unsigned>(n); });
    p.parse(args);
    if (out.empty())
        throw pipescope::recording::usage_error("calibrate: neither XDG_CONFIG_HOME nor HOME is set: give --out FILE");
    // The default file's directory is made if missing; then a directory, device or link there is
    // refused before the minute of measurements.
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    pipescope::trace::check_output_path(out);

    pipescope::scheduler one_worker({.workers = 1});
    std::vector<measured> costs = costs_to_measure(one_worker);
    // Interleaved: a burst of load on the machine spreads over every cost instead of hitting one.
    for (unsigned r = 0; r < repetitions; ++r)
        for (measured& m : costs) {
            const double ns = m.once();
            if (std::isnan(ns)) continue;   // cannot be measured here (handoff on one CPU)
            if (ns < 0) throw std::runtime_error(fmt::format("calibrate: the {} measurement did not do its work", m.name));
            m.samples.push_back(ns);
        }

    const pipescope::workloads::machine_info machine = pipescope::workloads::describe_machine();
    nlohmann::json values = nlohmann::json::object(), spreads = nlohmann::json::object(), how = nlohmann::json::object();
    nlohmann::json warnings = nlohmann::json::array();
    fmt::print("calibration on {} ({} hardware threads), {} repetitions each (median; p10 - p90; min - max)\n", machine.cpu,
               machine.hardware_threads, repetitions);
    for (const measured& m : costs) {
        if (m.samples.empty()) {   // not written: the cost keeps its default (0: off) or --param
            fmt::print("  {:<15} {:>9} ns   {:^43}  not measured: the process may use only one CPU\n", m.name, "-", "");
            continue;
        }
        const pipescope::recording::sample_spread s = pipescope::recording::spread_of(m.samples);
        values[m.name] = static_cast<std::uint64_t>(s.median + 0.5);
        spreads[m.name] = {{"median", s.median}, {"p10", s.p10}, {"p90", s.p90},
                           {"min", s.min},       {"max", s.max}, {"samples", s.samples}};
        how[m.name] = m.how;
        fmt::print("  {:<15} {:>9.1f} ns   {:>9.1f} - {:<9.1f} {:>9.1f} - {:<9.1f}  {}\n", m.name, s.median, s.p10, s.p90,
                   s.min, s.max, m.how);
        if (auto w = pipescope::recording::noise_warning(m.name, s)) warnings.push_back(*w);
    }
    // The quantum is the modelled OS scheduler's choice, not a cost of this machine: not measured,
    // not written (a calibration file does not override it); --param quantum_ns=V sets it.
    fmt::print("  {:<15} {:>9} ns   {:^21}  {}\n", "quantum", pipescope::virtual_costs{}.quantum_ns, "(default)",
               "not measured: the round-robin timeslice of threads on virtual cores (--param quantum_ns=V)");
    const nlohmann::json doc = {
        {"format", "pipescope-calibration/1"},
        {"machine", {{"cpu", machine.cpu}, {"hardware_threads", machine.hardware_threads}, {"kernel", machine.kernel}}},
        {"repetitions", repetitions},
        {"costs_ns", values},
        {"spread_ns", spreads},
        {"noisy_factor", pipescope::recording::noisy_factor},
        {"warnings", warnings},
        {"how", how}};
    write_file(out, doc);
    std::fflush(stdout);   // the warnings come after the table they speak of
    for (const auto& w : warnings) fmt::print(stderr, "warning: {}\n", w.get<std::string>());
    fmt::print("wrote {} (pipescope run --virtual uses it{})\n", out.string(),
               out == pipescope::recording::default_calibration_path() ? "" : " when it is at the default place");
    return 0;
}
