// A test hook for bind-to-stage: when installed, every loop reports, when it ends, what its queues
// and reorder buffers held at most, so a test can check "queue occupancy <= Queue_size" on every run
// (the queues count it under their own lock, stage_queue::peak()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace pipescope::detail {

struct bind_to_stage_check {
    struct run {
        std::size_t capacity = 0;                // Queue_size
        std::vector<std::size_t> queue_peak;     // per stage j (index 0: stage 0 has no queue, 0)
        std::vector<std::size_t> reorder_peak;   // per stage: items parked in its reorder buffer
        std::vector<unsigned> threads;           // per stage
        std::uint64_t handoffs = 0;              // virtual cores: items taken on another core (all queues)
        std::uint64_t lock_holder_preemptions = 0, lock_waits = 0;   // virtual cores (virtual_executor)
    };
    std::mutex mutex;
    std::vector<run> runs;
};

// Process-wide; loops started while it is installed report to it. nullptr removes it.
void set_bind_to_stage_check(bind_to_stage_check* c) noexcept;

}   // namespace pipescope::detail
