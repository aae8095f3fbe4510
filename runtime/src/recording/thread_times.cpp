// Reading a thread's schedstat (thread_times.hpp).
#include "thread_times.hpp"

#include <cstdio>
#include <string>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace pipescope::detail {

int this_os_thread_id() noexcept {
#if defined(__linux__)
    return static_cast<int>(::syscall(SYS_gettid));
#else
    return 0;
#endif
}

std::optional<thread_times> read_thread_times(int tid) {
#if defined(__linux__)
    if (tid <= 0) return std::nullopt;
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/schedstat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) return std::nullopt;
    // Three numbers: ns on a CPU, ns waiting on a run queue, timeslices run (Documentation/scheduler/sched-stats).
    unsigned long long cpu = 0, wait = 0, slices = 0;
    const int n = std::fscanf(f, "%llu %llu %llu", &cpu, &wait, &slices);
    std::fclose(f);
    if (n != 3) return std::nullopt;
    return thread_times{cpu, wait, slices};
#else
    (void)tid;
    return std::nullopt;
#endif
}

std::optional<thread_times> times_between(const std::optional<thread_times>& before,
                                          const std::optional<thread_times>& after) noexcept {
    if (!before || !after || after->cpu_ns < before->cpu_ns || after->runnable_ns < before->runnable_ns ||
        after->timeslices < before->timeslices)
        return std::nullopt;
    return thread_times{after->cpu_ns - before->cpu_ns, after->runnable_ns - before->runnable_ns,
                        after->timeslices - before->timeslices};
}

}   // namespace pipescope::detail
