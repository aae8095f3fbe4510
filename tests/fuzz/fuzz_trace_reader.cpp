// libFuzzer target for the trace reader (built by scripts/fuzz.sh with clang, ASan and UBSan).
#include "exercise_trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    pipescope::fuzz::exercise_trace_reader(data, size);
    return 0;
}
