// Small helpers shared by the benchmarks: wall-clock timing, run statistics, an aligned text
// table, machine description and command-line parsing. Benchmarks only print; nothing here
// compares a time against a threshold.
#pragma once

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/workloads/machine.hpp>
#include <pipescope/workloads/workload.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace bench {

namespace num = pipescope::analysis::numbers;   // every figure a table shows, as the CLI writes it

// ---------------------------------------------------------------------------------------------
// Timing

using bench_clock = std::chrono::steady_clock;

// Seconds taken by f().
template <class F>
double time_seconds(F&& f) {
    const auto start = bench_clock::now();
    f();
    return std::chrono::duration<double>(bench_clock::now() - start).count();
}

// Lets idle worker threads (ours or oneTBB's) finish spinning and go to sleep, so that one
// measurement does not steal CPU time from the next one on a machine with few cores.
inline void settle(int milliseconds) {
    if (milliseconds > 0) std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
}

// ---------------------------------------------------------------------------------------------
// Statistics over repeated runs

struct summary {
    double median = 0;
    double min = 0;
    double max = 0;
    // (max - min) / median: how far apart the runs were, relative to the reported value.
    double rel_spread() const { return median > 0 ? (max - min) / median : 0; }
};

inline summary summarize(std::vector<double> samples) {
    if (samples.empty()) return {};
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    return {median, samples.front(), samples.back()};
}

// ---------------------------------------------------------------------------------------------
// Formatting

// "0.4123 (2.1 %)": median seconds with the relative spread of the runs.
inline std::string fmt_time(const summary& s) {
    return fmt::format("{} ({})", num::fixed(s.median, 4), num::percent(s.rel_spread(), 1));
}

// "1.23×": a ratio of two medians.
inline std::string fmt_ratio(double r) { return num::ratio(r, 2); }

// "0.4123 0.4011 0.5204": every sample in run order, for --raw output.
inline std::string fmt_samples(const std::vector<double>& samples, int decimals = 4) {
    std::string out;
    for (double v : samples) {
        if (!out.empty()) out += ' ';
        out += num::fixed(v, decimals);
    }
    return out;
}

// A text table: the first `left_columns` columns are left-aligned (names), the rest right-aligned
// (numbers). A row with a single empty cell prints as a separator line.
class table {
public:
    explicit table(std::vector<std::string> header, std::size_t left_columns = 1) : left_(left_columns) {
        rows_.push_back(std::move(header));
    }
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    void separator() { rows_.push_back({}); }

    void print(std::FILE* out = stdout) const {
        std::vector<std::size_t> width;
        for (const auto& r : rows_) {
            if (width.size() < r.size()) width.resize(r.size(), 0);
            for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
        }
        std::size_t total = 0;
        for (auto w : width) total += w + 2;
        const std::string rule(total > 2 ? total - 2 : 0, '-');
        print_row(out, rows_.front(), width);
        fmt::print(out, "{}\n", rule);
        for (std::size_t i = 1; i < rows_.size(); ++i) {
            if (rows_[i].empty()) fmt::print(out, "{}\n", rule);
            else print_row(out, rows_[i], width);
        }
    }

private:
    void print_row(std::FILE* out, const std::vector<std::string>& r, const std::vector<std::size_t>& width) const {
        std::string line;
        for (std::size_t c = 0; c < r.size(); ++c) {
            const std::string pad(width[c] - r[c].size(), ' ');
            line += c < left_ ? r[c] + pad : pad + r[c];
            if (c + 1 < r.size()) line += "  ";
        }
        fmt::print(out, "{}\n", line);
    }

    std::size_t left_;
    std::vector<std::vector<std::string>> rows_;
};

// ---------------------------------------------------------------------------------------------
// Machine description

// The 1/5/15-minute load averages: other processes competing for the few cores make every
// number in the tables noisier, so the tables say how busy the machine was.
inline std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    if (!(in >> one >> five >> fifteen)) return "unknown";
    return one + " " + five + " " + fifteen;
}

// How many cores' worth of CPU P threads actually get right now: P threads run the same amount of
// independent arithmetic each, compared with one thread alone. Close to P on an idle machine; near
// 1 when other processes occupy the other cores, and then every T_P in the tables means little.
inline double parallel_capacity(unsigned p) {
    auto spin = [](std::uint64_t seed) {
        std::uint64_t x = seed | 1;
        for (int i = 0; i < 20'000'000; ++i) {   // about 40-60 ms of xorshift on a current core
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        return x;
    };
    std::vector<std::uint64_t> sink(p);
    double one = 1e9, many = 1e9;
    for (int attempt = 0; attempt < 3; ++attempt) {   // best of three: a short probe is easily disturbed
        one = std::min(one, time_seconds([&] { sink[0] = spin(1); }));
        many = std::min(many, time_seconds([&] {
                            std::vector<std::thread> threads;
                            for (unsigned t = 0; t < p; ++t) threads.emplace_back([&, t] { sink[t] = spin(t + 2); });
                            for (auto& t : threads) t.join();
                        }));
    }
    std::uint64_t all = 0;
    for (auto v : sink) all ^= v;
    if (all == 42) fmt::print(stderr, " ");   // keeps the loops from being optimized away
    return many > 0 ? p * one / many : 0;
}

// Nanoseconds for one cache line to go from one thread to another and back (two threads taking
// turns on an atomic counter). Pipelines hand data between cores all the time, so this bounds how
// fast fine-grained stages can be. On a virtual machine it can change while the benchmark runs,
// when the host moves the virtual CPUs (seen here: ~75 ns vs ~350 ns), and T_P changes with it.
// Returns 0 on a machine with a single hardware thread, where spinning would only measure the OS.
inline double core_round_trip_ns() {
    if (std::thread::hardware_concurrency() < 2) return 0;
    constexpr long trips = 50'000;
    double best = 1e9;
    for (int attempt = 0; attempt < 3; ++attempt) {
        alignas(64) std::atomic<long> turn{0};
        const double t = time_seconds([&] {
            std::thread other([&] {
                for (long i = 0; i < trips; ++i) {
                    while (turn.load(std::memory_order_acquire) != 2 * i + 1) {
                    }
                    turn.store(2 * i + 2, std::memory_order_release);
                }
            });
            for (long i = 0; i < trips; ++i) {
                while (turn.load(std::memory_order_acquire) != 2 * i) {
                }
                turn.store(2 * i + 1, std::memory_order_release);
            }
            other.join();
        });
        best = std::min(best, t);
    }
    return best * 1e9 / trips;
}

// One line for the start and the end of a benchmark: load average, measured parallel capacity and
// core-to-core round trip.
inline void print_conditions(const char* when, unsigned max_workers, std::FILE* out = stdout) {
    fmt::print(out,
               "{}: load average {}; {} threads of independent work ran at {:.2f}x one thread; "
               "core-to-core round trip {:.0f} ns\n",
               when, load_average(), max_workers, parallel_capacity(max_workers), core_round_trip_ns());
}

inline void print_machine(std::FILE* out = stdout) {
    const auto m = pipescope::workloads::describe_machine();
    fmt::print(out, "machine: {} hardware threads (std::thread::hardware_concurrency), CPU: {}, {}\n", m.hardware_threads,
               m.cpu, m.kernel);
#ifdef PIPESCOPE_BENCH_BUILD_TYPE
    fmt::print(out, "build type: {}\n", PIPESCOPE_BENCH_BUILD_TYPE);
#endif
}

// ---------------------------------------------------------------------------------------------
// Command line

inline unsigned long parse_positive(const std::string& text) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
        v = std::stoul(text, &used);
    } catch (const std::exception&) {   // std::stoul says only "stoul"
        used = 0;
    }
    if (used == 0 || used != text.size() || v == 0 || text.front() == '-')
        throw std::invalid_argument("expected a positive integer, got '" + text + "'");
    return v;
}

// Parses "1,2,4" into {1, 2, 4}; every value must be a positive integer.
inline std::vector<unsigned> parse_list(const std::string& text) {
    std::vector<unsigned> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            out.push_back(static_cast<unsigned>(parse_positive(item)));
        } catch (const std::invalid_argument&) {
            throw std::invalid_argument("bad list element '" + item + "' (expected positive integers: 1,2,4)");
        }
    }
    if (out.empty()) throw std::invalid_argument("empty list");
    return out;
}

// Minimal "--name value" parser: each option is a name and a handler for its value. A flag
// (takes_value false) has no value; its handler receives "".
struct option {
    std::string name;
    std::string help;
    std::function<void(const std::string&)> set;
    bool takes_value = true;
};

// Options most workload benchmarks take: --size (tiny, small or large, checked), --runs, --workload.
inline option size_option(std::string& size) {
    return {"--size", "tiny, small (default) or large", [&size](const std::string& v) {
                pipescope::workloads::parse_size(v);   // throws for a size nobody knows
                size = v;
            }};
}
// --workload W, repeatable: only these workloads.
inline option workload_option(std::vector<std::string>& only) {
    return {"--workload", "only this workload (repeatable)", [&only](const std::string& v) { only.push_back(v); }};
}
inline option runs_option(unsigned& runs) {
    return {"--runs", "runs per point (default 5; the median is reported)",
            [&runs](const std::string& v) { runs = static_cast<unsigned>(parse_positive(v)); }};
}

// Returns false (after printing usage) on --help; exits with status 2 on a bad command line.
inline bool parse_command_line(int argc, char** argv, const std::string& what, const std::vector<option>& options) {
    auto usage = [&](std::FILE* out) {
        fmt::print(out, "usage: {} [options]\n{}\n", argv[0], what);
        for (const auto& o : options) fmt::print(out, "  {:<16} {}\n", o.name, o.help);
    };
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg == "--help" || arg == "-h") {
            usage(stdout);
            return false;
        }
        auto o = std::find_if(options.begin(), options.end(), [&](const option& x) { return x.name == arg; });
        if (o == options.end() || (o->takes_value && a + 1 >= argc)) {
            fmt::print(stderr, "{}: {}\n", argv[0],
                       o == options.end() ? ("unknown option " + arg) : ("missing value for " + arg));
            usage(stderr);
            std::exit(2);
        }
        try {
            o->set(o->takes_value ? argv[++a] : "");
        } catch (const std::exception& e) {
            fmt::print(stderr, "{}: {}: {}\n", argv[0], arg, e.what());
            std::exit(2);
        }
    }
    return true;
}

}   // namespace bench
