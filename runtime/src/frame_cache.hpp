// Per-worker free lists for coroutine frames. A fine-grained pipeline starts an iteration every few
// hundred nanoseconds; a general-purpose allocator on that path would dominate. Frames of one body
// all have the same size, so a handful of size classes catch nearly every allocation.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace pipescope::detail {

class frame_cache {
public:
    static constexpr std::size_t granule = 64;
    static constexpr std::size_t classes = 64;          // frames up to 4 KiB are cached
    static constexpr std::size_t max_per_class = 512;   // beyond this, frames go back to the heap

    ~frame_cache();
    void* take(std::size_t size);                    // nullptr: not cached
    bool give(void* p, std::size_t size) noexcept;   // false: caller frees

    static std::size_t class_of(std::size_t size) noexcept { return (size + granule - 1) / granule; }

private:
    std::array<std::vector<void*>, classes> free_;
};

}   // namespace pipescope::detail
