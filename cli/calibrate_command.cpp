// `pipescope calibrate`: measures on this machine what the virtual cost model needs (docs/virtual.md,
// "Calibration") and writes it where `pipescope run --virtual` finds it (cost_table.hpp).
//
// Each cost is a real micro-measurement, through the runtime's own code where it has one (its
// work-stealing deque, its graph queues, a scheduler's parked worker), repeated; the median of the
// repetitions is the cost, their minimum and maximum its spread.
#include "commands.hpp"
#include "cost_table.hpp"
#include "recording.hpp"

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
#include <ctime>
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

// An idle worker yielding its core (std::this_thread::yield, as the worker loop does).
double yield_ns() {
    constexpr int yields = 20000;
    const auto t0 = clock_type::now();
    for (int i = 0; i < yields; ++i) std::this_thread::yield();
    return since_ns(t0) / yields;
}

struct measured {
    const char* name;
    const char* how;
    std::function<double()> once;
    std::vector<double> samples = {};
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Writes `doc` to `path` whole or not at all (atomic_output.hpp).
void write_file(const std::filesystem::path& path, const nlohmann::json& doc) {
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    pipescope::trace::write_file_atomically(path, doc.dump(2) + "\n");
}

unsigned parse_repetitions(const std::string& text) {
    try {
        std::size_t used = 0;
        const unsigned long v = std::stoul(text, &used);
        if (used == text.size() && v >= 3 && v <= 1000) return static_cast<unsigned>(v);
    } catch (const std::exception&) {
    }
    throw pipescope::cli::usage_error("--repetitions " + text + ": expected a number between 3 and 1000");
}

}   // namespace

int calibrate_command(const std::vector<std::string>& args) {
    std::filesystem::path out = pipescope::cli::default_calibration_path();
    unsigned repetitions = 9;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (i + 1 >= args.size() && (a == "--out" || a == "--repetitions"))
            throw pipescope::cli::usage_error(a + " needs a value");
        if (a == "--out") {
            out = args[++i];
            if (out.empty()) pipescope::trace::check_output_path(out);   // refused, not taken for the default
        } else if (a == "--repetitions") repetitions = parse_repetitions(args[++i]);
        else throw pipescope::cli::usage_error("calibrate: unexpected argument " + a);
    }
    if (out.empty())
        throw pipescope::cli::usage_error("calibrate: neither XDG_CONFIG_HOME nor HOME is set: give --out FILE");
    // The default file's directory is made if missing; then a directory, device or link there is
    // refused before the minute of measurements.
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    pipescope::trace::check_output_path(out);

    pipescope::scheduler one_worker({.workers = 1});
    std::vector<measured> costs = {
        {"clock_read", "N back-to-back reads of CLOCK_THREAD_CPUTIME_ID, as that clock sees them", clock_read_ns},
        {"wall_clock_read", "N back-to-back reads of CLOCK_MONOTONIC, as that clock sees them", wall_clock_read_ns},
        {"failed_steal", "chase_lev_deque::steal on a deque its owner thread pushes and pops one job at a time",
         failed_steal_ns},
        {"steal", "chase_lev_deque::steal of jobs its owner thread keeps pushing", steal_ns},
        {"queue_op", "graph packet_queue: a reserve plus a commit (push and pop of one packet)", queue_op_ns},
        {"wake", "a scheduler's parked worker: from an outside spawn to the task's start",
         [&] { return wake_ns(one_worker); }},
        {"context_switch", "two threads on one CPU handing it over through a condition variable", context_switch_ns},
        {"yield", "std::this_thread::yield", yield_ns},
    };
    // Interleaved: a burst of load on the machine spreads over every cost instead of hitting one.
    for (unsigned r = 0; r < repetitions; ++r)
        for (measured& m : costs) {
            const double ns = m.once();
            if (ns < 0) throw std::runtime_error(fmt::format("calibrate: the {} measurement did not do its work", m.name));
            m.samples.push_back(ns);
        }

    const pipescope::workloads::machine_info machine = pipescope::workloads::describe_machine();
    nlohmann::json values = nlohmann::json::object(), spreads = nlohmann::json::object(), how = nlohmann::json::object();
    fmt::print("calibration on {} ({} hardware threads), {} repetitions each (median, min-max)\n", machine.cpu,
               machine.hardware_threads, repetitions);
    for (const measured& m : costs) {
        const double med = median(m.samples);
        const auto [lo, hi] = std::minmax_element(m.samples.begin(), m.samples.end());
        values[m.name] = static_cast<std::uint64_t>(med + 0.5);
        spreads[m.name] = {{"min", *lo}, {"max", *hi}};
        how[m.name] = m.how;
        fmt::print("  {:<15} {:>9.1f} ns   {:>9.1f} - {:<9.1f}  {}\n", m.name, med, *lo, *hi, m.how);
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
        {"how", how}};
    write_file(out, doc);
    fmt::print("wrote {} (pipescope run --virtual uses it{})\n", out.string(),
               out == pipescope::cli::default_calibration_path() ? "" : " when it is at the default place");
    return 0;
}
