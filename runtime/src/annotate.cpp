// pipescope::annotate's recording side (annotate.hpp): one annotation record into the calling
// thread's trace buffer, through the same gate as the runtime's own hooks.
#include <pipescope/annotate.hpp>

#include "trace_hooks.hpp"

#include <cstdint>

namespace pipescope::detail {

void record_annotation(const char* key, std::uint64_t bits, std::uint32_t kind) noexcept {
    if (key) trace_event(trace::event_kind::annotation, reinterpret_cast<std::uintptr_t>(key), bits, kind);
}

}   // namespace pipescope::detail
