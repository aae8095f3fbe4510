// Internal: the pause a spinning thread takes between two looks at what it waits for. It tells the
// core that this is a spin-wait (on x86 `pause`: less power, and no memory-order mis-speculation
// when the watched line changes; on a hyper-threaded core the sibling gets the issue slots).
#pragma once

namespace pipescope::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

}   // namespace pipescope::detail
