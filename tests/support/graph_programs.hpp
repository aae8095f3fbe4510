// Small stage graphs with known results, shared by the graph tests.
#pragma once

#include <pipescope/graph/program.hpp>

#include <cstdint>
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

}  // namespace pipescope::testing
