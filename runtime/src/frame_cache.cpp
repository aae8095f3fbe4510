#include "frame_cache.hpp"

#include "scheduler_impl.hpp"

#include <pipescope/pipeline.hpp>

#include <new>

namespace pipescope::detail {

frame_cache::~frame_cache() {
    for (auto& list : free_)
        for (void* p : list) ::operator delete(p);
}

void* frame_cache::take(std::size_t size) {
    const std::size_t c = class_of(size);
    if (c >= classes || free_[c].empty()) return nullptr;
    void* p = free_[c].back();
    free_[c].pop_back();
    return p;
}

bool frame_cache::give(void* p, std::size_t size) noexcept {
    const std::size_t c = class_of(size);
    if (c >= classes || free_[c].size() >= max_per_class) return false;
    try {
        free_[c].push_back(p);
    } catch (...) {
        return false;
    }
    return true;
}

extern thread_local worker* tls_worker;

// Frames are allocated rounded up to their class size, so that a frame freed on another worker
// fits any request of its class there.
void* frame_allocate(std::size_t size) {
    const std::size_t rounded = frame_cache::class_of(size) * frame_cache::granule;
    if (worker* w = tls_worker)
        if (void* p = w->frames().take(size)) return p;
    return ::operator new(rounded);
}

void frame_deallocate(void* p, std::size_t size) noexcept {
    if (worker* w = tls_worker)
        if (w->frames().give(p, size)) return;
    ::operator delete(p);
}

}   // namespace pipescope::detail
