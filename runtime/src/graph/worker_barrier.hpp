// A barrier for a graph policy's worker loops that also works on virtual workers.
//
// On OS threads it is std::barrier. A virtual worker must never block outside the virtual
// executor's token (docs/virtual.md), so there the waiting workers park in the executor and the
// last to arrive runs the completion and unparks them, at its virtual time plus the wake latency.
#pragma once

#include <barrier>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace pipescope {
class scheduler;
}
namespace pipescope::detail {
class virtual_executor;
}

namespace pipescope::graph::detail {

class worker_barrier {
public:
    // `count` workers meet; `completion` runs on one of them, after all arrived, before any leaves.
    worker_barrier(scheduler& s, std::ptrdiff_t count, std::function<void()> completion);
    worker_barrier(const worker_barrier&) = delete;
    worker_barrier& operator=(const worker_barrier&) = delete;

    void arrive_and_wait();

private:
    struct run_completion {
        worker_barrier* self;
        void operator()() noexcept { self->completion_(); }
    };
    void arrive_and_wait_virtual();

    std::function<void()> completion_;
    std::barrier<run_completion> real_;
    scheduler& sched_;
    pipescope::detail::virtual_executor* virtual_;
    std::mutex mutex_;   // virtual workers only; never held across a park
    std::ptrdiff_t count_, arrived_ = 0;
    std::uint64_t phase_ = 0;
    std::vector<unsigned> parked_;
};

}   // namespace pipescope::graph::detail
