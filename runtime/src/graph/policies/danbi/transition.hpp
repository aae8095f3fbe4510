// DANBI's probabilistic decisions as pure functions (seed 002 §III-A3 PSS, §III-A4 PRS), apart from
// the scheduler so that tests can check them against values worked out by hand from the paper.
#pragma once

#include <algorithm>
#include <cstdint>

namespace pipescope::graph::detail::danbi {

// Balanced transition probabilities of a parallel kernel K_i (seed 002 §III-A3) between the queue
// Q_x that feeds it and the queue Q_{x+1} it feeds.
struct transition_probabilities {
    double backward = 0;   // P^b_{i,i-1}: to the producer of Q_x
    double forward = 0;    // P^b_{i,i+1}: to the consumer of Q_{x+1}
};

// A fill ratio as the formulas need it: in [0, 1]. Unbounded queues can be over-full, and a NaN
// (never expected) counts as empty rather than poisoning every comparison.
constexpr double clamp_fill(double f) noexcept { return f >= 0 ? (f <= 1 ? f : 1.0) : 0.0; }

// Seed 002 §III-A3, with F_x = fill_in and F_{x+1} = fill_out:
//   incoming  P_{i-1,i} = F_x          P_{i+1,i} = 1 - F_{x+1}
//   outgoing  P_{i,i-1} = 1 - F_x      P_{i,i+1} = F_{x+1}
//   balanced  P^b_{i,i-1} = max(P_{i,i-1} - P_{i-1,i}, 0) = max(1 - 2 F_x, 0)
//             P^b_{i,i+1} = max(P_{i,i+1} - P_{i+1,i}, 0) = max(2 F_{x+1} - 1, 0)
// So a kernel leaves towards its producer only while its input is less than half full, and towards
// its consumer only while its output is more than half full: PSS steers every queue to half full
// (double buffering, as the paper puts it).
constexpr transition_probabilities balanced_transition(double fill_in, double fill_out) noexcept {
    const double fx = clamp_fill(fill_in), fx1 = clamp_fill(fill_out);
    const double in_from_producer = fx, out_to_producer = 1 - fx;
    const double in_from_consumer = 1 - fx1, out_to_consumer = fx1;
    transition_probabilities p;
    p.backward = std::max(out_to_producer - in_from_producer, 0.0);
    p.forward = std::max(out_to_consumer - in_from_consumer, 0.0);
    return p;
}

enum class pss_choice : std::uint8_t { stay, backward, forward };

// One PSS decision (seed 002 §III-A3): "we arbitrarily determine the transition direction and take
// the transition with the probability of P^b_{i,i-1} or P^b_{i,i+1}". `forward_direction` is the fair
// coin, `u` a uniform number in [0, 1). The probabilities the scheduler really takes are then
// P^t_{i,i-1} = 0.5 P^b_{i,i-1}, P^t_{i,i+1} = 0.5 P^b_{i,i+1}, and staying 1 - P^t_{i,i-1} - P^t_{i,i+1}
// (the paper prints 1 - P^b_{i,i-1} - P^b_{i,i+1} for staying, which does not sum to one with the two
// halves; we follow the mechanism it describes).
constexpr pss_choice pss_decide(transition_probabilities p, bool forward_direction, double u) noexcept {
    if (forward_direction) return u < p.forward ? pss_choice::forward : pss_choice::stay;
    return u < p.backward ? pss_choice::backward : pss_choice::stay;
}

// Seed 002 §III-A4: P^r_i = min(T_i / C, 1), T_i the thread's consecutive waiting events, C > 1.
constexpr double random_schedule_probability(std::uint64_t waits, std::uint64_t c) noexcept {
    if (c == 0) return 1.0;
    return std::min(static_cast<double>(waits) / static_cast<double>(c), 1.0);
}

}   // namespace pipescope::graph::detail::danbi
