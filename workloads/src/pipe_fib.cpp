#include <pipescope/workloads/pipe_fib.hpp>
#include <pipescope/workloads/workload.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

namespace pipescope::workloads {

namespace {

// F_n has about n·log2(φ) ≈ 0.6943 n bits.
std::size_t bit_capacity(unsigned n, unsigned group) {
    const std::size_t bits = static_cast<std::size_t>(0.6943 * n) + 8;
    return (bits / group + 2) * group;
}

void check_n(unsigned n) {
    if (n == 0) throw std::invalid_argument("pipe-fib: n must be at least 1 (F_0 = 0 has no bits)");
}

// Adds bits [lo, hi) of a and b plus the carry into c and returns the carry out: the same loop as
// the serial program's. A plain function on purpose: inside the coroutine, the loop's variables
// would live in the frame, and every byte store to c may alias them (char aliasing), so the
// compiler would reload them from memory on every bit.
unsigned add_bits(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* c, std::size_t lo, std::size_t hi,
                  unsigned carry) {
    for (std::size_t j = lo; j < hi; ++j) {
        const unsigned sum = a[j] + b[j] + carry;
        c[j] = static_cast<std::uint8_t>(sum & 1u);
        carry = sum >> 1;
    }
    return carry;
}

// One past the highest 1 bit of c below hi (the sum's length), scanning down from hi.
std::size_t length_below(const std::uint8_t* c, std::size_t hi) {
    while (hi > 0 && c[hi - 1] == 0) --hi;
    return hi;
}

}   // namespace

fib_bits pipe_fib_serial(unsigned n, std::stop_token cancel) {
    check_n(n);
    if (n <= 2) return {1};
    const std::size_t cap = bit_capacity(n, 1);
    std::vector<std::uint8_t> arr[3] = {std::vector<std::uint8_t>(cap), std::vector<std::uint8_t>(cap),
                                        std::vector<std::uint8_t>(cap)};
    arr[1][0] = 1;
    arr[2][0] = 1;
    std::size_t len_a = 1;   // length of F_{k-1}
    for (unsigned k = 3; k <= n; ++k) {
        if (k % 64 == 0) throw_if_cancelled(cancel);   // every 64 numbers: a few ms at n = 60000
        const std::uint8_t* a = arr[(k - 1) % 3].data();
        const std::uint8_t* b = arr[(k - 2) % 3].data();
        std::uint8_t* c = arr[k % 3].data();
        unsigned carry = 0;
        std::size_t j = 0;
        for (; j < len_a || carry; ++j) {   // stop propagating the carry as soon as possible
            const unsigned s = a[j] + b[j] + carry;
            c[j] = static_cast<std::uint8_t>(s & 1u);
            carry = s >> 1;
        }
        len_a = j;
    }
    fib_bits out(arr[n % 3].begin(), arr[n % 3].begin() + static_cast<std::ptrdiff_t>(len_a));
    return out;
}

fib_bits pipe_fib_pipeline(scheduler& s, unsigned n, unsigned bits_per_stage, const pipeline_options& options,
                           pipeline_stats* stats) {
    check_n(n);
    if (bits_per_stage == 0) throw std::invalid_argument("pipe-fib: bits per stage must be at least 1");
    if (n <= 2) return {1};
    const unsigned group = bits_per_stage;
    const std::size_t cap = bit_capacity(n, group);
    std::vector<std::uint8_t> arr[3] = {std::vector<std::uint8_t>(cap), std::vector<std::uint8_t>(cap),
                                        std::vector<std::uint8_t>(cap)};
    arr[1][0] = 1;
    arr[2][0] = 1;
    // len[k]: bits of F_k, 0 while iteration k-3 is still computing it. Written before the
    // iteration's last node ends, so whoever sees that node finished also sees the length.
    auto len = std::make_unique<std::atomic<std::size_t>[]>(n + 1);
    len[1].store(1, std::memory_order_relaxed);
    len[2].store(1, std::memory_order_relaxed);

    const unsigned iterations = n - 2;   // iteration i computes F_{i+3}
    unsigned next = 0;
    auto st = pipe_while(
        s, [&] { return next < iterations; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;   // stage 0
            const std::uint8_t* a = arr[(i + 2) % 3].data();
            const std::uint8_t* b = arr[(i + 1) % 3].data();
            std::uint8_t* c = arr[i % 3].data();   // held F_i, which nobody reads any more here
            unsigned carry = 0;
            std::size_t hi = 0;
            for (std::size_t g = 0;; ++g) {
                // Group g of F_{i+2} is final once node (i-1, g+1) is done.
                co_await it.stage_wait(g + 1);
                const std::size_t lo = g * group;
                hi = lo + group;
                carry = add_bits(a, b, c, lo, hi, carry);
                // While iteration i-1 still runs, it is past stage g+1, so F_{i+2} goes on beyond hi.
                const std::size_t len_a = len[i + 2].load(std::memory_order_acquire);
                if (len_a != 0 && len_a <= hi && carry == 0) break;
            }
            len[i + 3].store(length_below(c, hi), std::memory_order_release);
        },
        options);
    if (stats) *stats = st;
    const std::size_t l = len[n].load(std::memory_order_acquire);
    return fib_bits(arr[n % 3].begin(), arr[n % 3].begin() + static_cast<std::ptrdiff_t>(l));
}

std::string fib_to_decimal(const fib_bits& bits) {
    // Horner's rule in base 10^9, most significant bit first.
    std::vector<std::uint32_t> limbs{0};
    for (auto it = bits.rbegin(); it != bits.rend(); ++it) {
        std::uint64_t carry = *it;
        for (auto& l : limbs) {
            const std::uint64_t v = std::uint64_t{l} * 2 + carry;
            l = static_cast<std::uint32_t>(v % 1000000000u);
            carry = v / 1000000000u;
        }
        if (carry) limbs.push_back(static_cast<std::uint32_t>(carry));
    }
    std::string out = std::to_string(limbs.back());
    for (auto l = limbs.rbegin() + 1; l != limbs.rend(); ++l) {
        std::string part = std::to_string(*l);
        out += std::string(9 - part.size(), '0') + part;
    }
    return out;
}

}   // namespace pipescope::workloads
