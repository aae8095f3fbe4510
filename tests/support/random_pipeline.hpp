// Randomized pipeline programs for serial-equivalence tests.
//
// Each program is determined by its seed. Iteration i draws, from (seed, i): how many stages it has,
// which stage numbers it skips, which boundaries wait, how much work each node does, and whether a
// node runs nested fork-join or a nested pipeline. Shared state is touched so that the result is
// order-dependent but race-free under the pipe_while semantics:
//   - stage 0 (serial) folds the iteration number into `stage0_chain`;
//   - "ordered" stages (the set W) are never skipped and always entered with stage_wait; node (i, w)
//     folds into chain[w], so chain[w] depends on the order in which iterations pass stage w.
//     An iteration that ends early still passes every ordered stage (as an empty node): in Cilk-P's
//     dag a skipped stage is a null node with no cross edge *into* it (seed 001 §2), so without
//     that, (i, w) would be ordered after (i-1, w) but not after (i-2, w);
//   - everything else goes into the iteration's own result.
// A run of the same program under any policy must produce exactly the state of the serial run.
#pragma once

#include <pipescope/pipescope.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pipescope::testing {

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

struct rng {
    std::uint64_t s;
    std::uint64_t next() {
        s += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
};

struct program_state {
    std::uint64_t stage0_chain = 0;
    std::vector<std::uint64_t> chain;     // per stage number
    std::vector<std::uint64_t> results;   // per iteration
    bool operator==(const program_state&) const = default;
};

struct random_program {
    std::uint64_t seed;
    unsigned iterations;
    unsigned max_stage;
    std::vector<bool> ordered;   // ordered[w]: stage w is in W
    bool nesting;                // allow nested fork-join / pipelines

    static random_program make(std::uint64_t seed, bool nesting = true) {
        rng r{seed * 7919 + 1};
        random_program p{seed, 1 + r.below(60), 1 + r.below(12), {}, nesting};
        p.ordered.assign(p.max_stage + 1, false);
        for (unsigned w = 1; w <= p.max_stage; ++w) p.ordered[w] = r.below(3) == 0;
        return p;
    }

    std::string describe() const {
        // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "literal" + string.
        std::string out = "seed ";
        out += std::to_string(seed);
        out += ": ";
        out += std::to_string(iterations);
        out += " iterations, stages up to ";
        out += std::to_string(max_stage);
        out += ", ordered stages {";
        const char* sep = "";
        for (unsigned s = 1; s <= max_stage; ++s)
            if (ordered[s]) {
                out += sep;
                out += std::to_string(s);
                sep = ",";
            }
        out += "}";
        return out;
    }
};

// Real work of a node: a few hundred rounds of mixing, amount drawn per node.
inline std::uint64_t busy_work(std::uint64_t x, unsigned rounds) {
    for (unsigned k = 0; k < rounds; ++k) x = mix(x, k);
    return x;
}

inline std::uint64_t nested_fork_join(scheduler& s, std::uint64_t x, unsigned width) {
    std::vector<std::uint64_t> parts(width);
    task_group g(s);
    for (unsigned k = 0; k < width; ++k) g.spawn([&parts, x, k] { parts[k] = busy_work(x + k, 50 + 10 * k); });
    g.sync();
    for (std::uint64_t p : parts) x = mix(x, p);
    return x;
}

inline std::uint64_t nested_pipeline(scheduler& s, std::uint64_t x, const pipeline_options& outer) {
    pipeline_options o = outer;
    o.observer = nullptr;
    o.throttle = 2;
    // Construct-and-run policies (tbb) need this loop's own structure, not the outer loop's.
    if (!o.declared_stages.empty())
        o.declared_stages = {stage_kind::serial_in_order, stage_kind::parallel, stage_kind::serial_in_order};
    unsigned next = 0;
    std::uint64_t chain = x;
    pipe_while(
        s, [&] { return next < 6; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            co_await it.stage(1);
            const std::uint64_t v = busy_work(x ^ i, 40);
            co_await it.stage_wait(2);
            chain = mix(chain, v);
        },
        o);
    return chain;
}

// A declaration of a random program for construct-and-run policies: its ordered stages (the ones
// whose order the result depends on) must be serial_in_order; every other stage gets any kind,
// whatever the body says (stage or stage_wait), since such policies ignore the body's choice.
inline std::vector<stage_kind> declare_random_stages(const random_program& p, std::uint64_t salt) {
    rng r{p.seed ^ salt};
    std::vector<stage_kind> kinds(p.max_stage + 1, stage_kind::parallel);
    kinds[0] = stage_kind::serial_in_order;
    for (unsigned s = 1; s <= p.max_stage; ++s) {
        if (p.ordered[s]) kinds[s] = stage_kind::serial_in_order;
        else kinds[s] = static_cast<stage_kind>(r.below(3));
    }
    return kinds;
}

inline program_state run_program(scheduler& s, const random_program& p, const pipeline_options& options,
                                 pipeline_stats* stats = nullptr) {
    program_state st;
    st.chain.assign(p.max_stage + 1, 0);
    st.results.assign(p.iterations, 0);
    unsigned next = 0;
    auto result = pipe_while(
        s, [&] { return next < p.iterations; },
        [&](iteration& it) -> pipe_task {
            const unsigned i = next++;
            st.stage0_chain = mix(st.stage0_chain, i);
            rng r{mix(p.seed, i)};
            std::uint64_t local = busy_work(i, r.below(100));
            const unsigned last = r.below(p.max_stage + 1);   // 0: the iteration is only stage 0
            for (unsigned cur = 0; cur < last;) {
                unsigned to = cur + 1 + (r.below(3) == 0 ? r.below(3) : 0);
                to = std::min(to, last);
                for (unsigned w = cur + 1; w < to; ++w)
                    if (p.ordered[w]) {
                        to = w;
                        break;
                    }   // ordered stages are never skipped
                if (p.ordered[to] || r.below(2) == 0) co_await it.stage_wait(to);
                else co_await it.stage(to);
                cur = to;
                if (p.ordered[cur]) st.chain[cur] = mix(st.chain[cur], local ^ cur);
                local = busy_work(mix(local, cur), r.below(300));
                if (p.nesting && r.below(10) == 0) local = nested_fork_join(s, local, 2 + r.below(4));
                if (p.nesting && r.below(25) == 0) local = nested_pipeline(s, local, options);
            }
            for (unsigned w = last + 1; w <= p.max_stage; ++w)
                if (p.ordered[w]) {
                    co_await it.stage_wait(w);
                    st.chain[w] = mix(st.chain[w], i);
                }
            st.results[i] = local;
        },
        options);
    if (stats) *stats = result;
    return st;
}

}   // namespace pipescope::testing
