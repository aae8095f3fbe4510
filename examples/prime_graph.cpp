// Example: a stage graph (GRAMPS-style stages joined by bounded packet queues), recorded.
//
//     prime_graph [N] [-o trace.pftrace] [--workers N] [--policy gramps|task-stealing|danbi|...]
//
// "numbers" (a serial source) pushes 2..N into the queue `candidates`; "test" (a parallel stage,
// one instance per packet) pushes the primes among them into `primes`; "tally" (serial) counts and
// sums them. The program checks both against a sieve of Eratosthenes and exits 1 if they differ.
//
// A model of a user's own program: it needs nothing but pipescope, so it prints with the standard
// library (the project itself writes text with fmt).
#include <pipescope/graph/program.hpp>
#include <pipescope/pipescope.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace graph = pipescope::graph;

namespace {

bool is_prime(std::uint64_t n) {
    if (n < 2) return false;
    for (std::uint64_t d = 2; d * d <= n; ++d)
        if (n % d == 0) return false;
    return true;
}

int usage() {
    std::fprintf(stderr, "usage: prime_graph [N] [-o trace.pftrace] [--workers N] [--policy NAME]\n");
    return 2;
}

}   // namespace

int main(int argc, char** argv) {
    std::uint64_t n = 200000;
    std::string trace_path, policy = "gramps";
    unsigned workers = 0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "-o") && i + 1 < argc) trace_path = argv[++i];
        else if (!std::strcmp(argv[i], "--workers") && i + 1 < argc) workers = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--policy") && i + 1 < argc) policy = argv[++i];
        else if (argv[i][0] != '-' && std::atoll(argv[i]) >= 2) n = std::strtoull(argv[i], nullptr, 10);
        else return usage();
    }

    graph::program g;
    const auto candidates = g.add_queue<std::uint64_t>("candidates", {.packet_elements = 256, .capacity_packets = 8});
    const auto primes = g.add_queue<std::uint64_t>("primes", {.packet_elements = 256, .capacity_packets = 8});
    g.add_serial("numbers", {}, {candidates}, [n](graph::thread_context& ctx) -> graph::stage_task {
        for (std::uint64_t k = 2; k <= n; ++k) co_await ctx.push(0, k);
    });
    g.add_parallel("test", candidates, {{primes, 1}}, [](graph::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i)
            if (const std::uint64_t k = ctx.in<std::uint64_t>(i); is_prime(k)) ctx.push(0, k);
    });
    std::uint64_t count = 0, sum = 0;
    g.add_serial("tally", {primes}, {}, [&](graph::thread_context& ctx) -> graph::stage_task {
        while (auto window = co_await ctx.pop(0)) {
            for (std::size_t i = 0; i < window.size(); ++i) sum += window.at<std::uint64_t>(i);
            count += window.size();
            ctx.commit(window);
        }
    });

    pipescope::scheduler sched({workers});
    try {
        std::optional<pipescope::trace_session> rec;
        // finish_on_signal: Ctrl-C finishes the trace (the run's outcome says so), then ends the program.
        if (!trace_path.empty())
            rec.emplace(sched, trace_path, pipescope::trace_session_options{.name = "primes", .finish_on_signal = true});
        graph::run(sched, g, {.policy = policy});
        if (rec) {
            rec->close();
            std::fputs(rec->report("trace: ").c_str(), stdout);
        }
    } catch (const std::invalid_argument& e) {   // an unknown policy or parameter, a -o that cannot be a file
        std::fprintf(stderr, "prime_graph: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {   // a trace that cannot be written (the disk is full, ...)
        std::fprintf(stderr, "prime_graph: %s\n", e.what());
        return 1;   // the session was unwound: its temporary file is removed
    }

    // The reference: a sieve.
    std::vector<bool> composite(n + 1, false);
    std::uint64_t want_count = 0, want_sum = 0;
    for (std::uint64_t k = 2; k <= n; ++k) {
        if (composite[k]) continue;
        ++want_count;
        want_sum += k;
        for (std::uint64_t m = k * k; m <= n; m += k) composite[m] = true;
    }
    std::printf("primes up to %llu under %s: %llu, summing to %llu\n", static_cast<unsigned long long>(n), policy.c_str(),
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(sum));
    if (count != want_count || sum != want_sum) {
        std::fprintf(stderr, "prime_graph: the sieve finds %llu primes summing to %llu\n",
                     static_cast<unsigned long long>(want_count), static_cast<unsigned long long>(want_sum));
        return 1;
    }
    std::printf("matches the sieve\n");
    return 0;
}
