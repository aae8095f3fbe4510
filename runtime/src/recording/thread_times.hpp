// How much CPU a thread got: the scheduler's own account of it (Linux schedstat), read off the hot
// path, at a run's start and end, for the run summary's "workers" (docs/tracing.md, "Run summary").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace pipescope::detail {

struct thread_times {
    std::uint64_t cpu_ns = 0;        // on a CPU
    std::uint64_t runnable_ns = 0;   // runnable but waiting on a run queue: descheduled
    std::uint64_t timeslices = 0;    // times it was put on a CPU
};

// The calling thread's kernel thread id (what /proc/self/task/ lists).
int this_os_thread_id() noexcept;

// /proc/self/task/TID/schedstat of one of this process's threads; nullopt where the kernel keeps
// none (no CONFIG_SCHED_INFO, not Linux) or the thread is gone.
std::optional<thread_times> read_thread_times(int tid);

// What each thread got between two readings (nullopt where either is missing, or time went back).
std::optional<thread_times> times_between(const std::optional<thread_times>& before,
                                          const std::optional<thread_times>& after) noexcept;

}   // namespace pipescope::detail
