// Small stage graphs with known results, shared by the graph tests.
#pragma once

#include <pipescope/graph/program.hpp>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

namespace pipescope::testing {

// source (serial, pushes 0..n-1) -> square (parallel) -> sink (serial, sums in arrival order)
struct square_sum {
    graph::program g;
    std::uint64_t n;
    std::uint64_t sum = 0;
    std::vector<std::uint64_t> seen;

    square_sum(std::uint64_t count, graph::queue_shape shape) : n(count) {
        const auto numbers = g.add_queue<std::uint64_t>("numbers", shape);
        const auto squares = g.add_queue<std::uint64_t>("squares", shape);
        g.add_serial("source", {}, {numbers}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < n; ++i) co_await ctx.push(0, i);
        });
        g.add_parallel("square", numbers, {{squares, 1}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) {
                const auto v = ctx.in<std::uint64_t>(i);
                ctx.push(0, v * v);
            }
        });
        g.add_serial("sink", {squares}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                auto w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) {
                    sum += w.at<std::uint64_t>(i);
                    seen.push_back(w.at<std::uint64_t>(i));
                }
                ctx.commit(w);
            }
        });
    }
    std::uint64_t expected() const {
        std::uint64_t s = 0;
        for (std::uint64_t i = 0; i < n; ++i) s += i * i;
        return s;
    }
};

// A cycle: source -> merge -> work -> step -> feedback -> merge (backward) ... merge -> done -> sink.
// `step` does one Collatz step; `merge` sends a value round again until it reaches 1, then out to
// the sink with its step count. When the source ended and nothing is in the loop, merge closes
// `work` (the program closes its cycle); `step` then finishes and closes `feedback`.
struct collatz_cycle {
    struct item {
        std::uint64_t start, x;
        std::uint32_t steps, pad;
    };
    graph::program g;
    std::uint64_t n;
    graph::queue_id feedback = 0;
    std::map<std::uint64_t, std::uint32_t> result;

    // capacity: packets of 8 values per queue; loop_limit: most values merge keeps in the loop.
    collatz_cycle(std::uint64_t count, std::size_t capacity, std::uint64_t loop_limit) : n(count) {
        graph::queue_shape shape;
        shape.packet_elements = 8;
        shape.capacity_packets = capacity;
        const auto fresh = g.add_queue<item>("fresh", shape);
        const auto work = g.add_queue<item>("work", shape);
        feedback = g.add_queue<item>("feedback", shape);
        const auto done = g.add_queue<item>("done", shape);
        g.add_serial("source", {}, {fresh}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 1; i <= n; ++i) co_await ctx.push(0, item{i, i, 0, 0});
        });
        g.add_serial("merge", {fresh, feedback}, {work, done},
                     [loop_limit](graph::thread_context& ctx) -> graph::stage_task {
                         std::uint64_t in_loop = 0;
                         bool fresh_open = true;
                         for (;;) {
                             // Take new values while few are in the loop; otherwise drain what comes back.
                             const bool take_fresh = fresh_open && in_loop < loop_limit;
                             if (!take_fresh && in_loop == 0) break;
                             auto w = co_await ctx.pop(take_fresh ? 0 : 1);
                             if (!w) {
                                 if (!take_fresh) throw std::logic_error("feedback ended while values were in the loop");
                                 fresh_open = false;
                                 continue;
                             }
                             for (std::size_t i = 0; i < w.size(); ++i) {
                                 const item v = w.at<item>(i);
                                 if (!take_fresh) --in_loop;
                                 if (v.x == 1) {
                                     co_await ctx.push(1, v);
                                 } else {
                                     ++in_loop;
                                     co_await ctx.push(0, v);
                                 }
                             }
                             ctx.commit(w);
                             ctx.flush(0);   // values waiting in a partial packet would never come back
                         }
                         ctx.close_output(0);   // nothing left in the loop: close the cycle
                     });
        g.add_parallel("step", work, {{feedback, 1}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) {
                item v = ctx.in<item>(i);
                v.x = v.x % 2 ? 3 * v.x + 1 : v.x / 2;
                ++v.steps;
                ctx.push(0, v);
            }
        });
        g.add_serial("sink", {done}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                auto w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) result[w.at<item>(i).start] = w.at<item>(i).steps;
                ctx.commit(w);
            }
        });
    }
    static std::uint32_t steps(std::uint64_t x) {
        std::uint32_t k = 0;
        for (; x != 1; ++k) x = x % 2 ? 3 * x + 1 : x / 2;
        return k;
    }
};

}   // namespace pipescope::testing
