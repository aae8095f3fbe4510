// pipe-fib (seed 001 §10): F_n in binary by repeated ripple-carry addition, as a pipeline.
//
// Iteration i computes F_{i+3} = F_{i+2} + F_{i+1}; stage j+1 adds the j-th group of
// `bits_per_stage` bits and starts with stage_wait, because it needs that group of F_{i+2}, which
// iteration i-1 computes in its own stage j+1. Carries stop as early as possible, so later
// iterations have more stages: the pipeline dag is a triangle. pipe-fib uses 1 bit per stage,
// pipe-fib-256 coarsens to 256.
#pragma once

#include <stop_token>

#include <pipescope/pipeline.hpp>

#include <cstdint>
#include <vector>

namespace pipescope::workloads {

// Binary digits of F_n, least significant first, one byte (0 or 1) per bit, no leading zeros.
using fib_bits = std::vector<std::uint8_t>;

// The serial program (T_S): the same additions as plain loops, no runtime at all.
fib_bits pipe_fib_serial(unsigned n, std::stop_token cancel = {});   // cancel: checked per number

// The pipeline; `options.policy` selects piper or the serial elision. n >= 1.
fib_bits pipe_fib_pipeline(scheduler& s, unsigned n, unsigned bits_per_stage, const pipeline_options& options,
                           pipeline_stats* stats = nullptr);

// Decimal digits of a binary number (for printing and for cross-checks in tests).
std::string fib_to_decimal(const fib_bits& bits);

}   // namespace pipescope::workloads
