// The `danbi` graph policy (seed 002 §III-A): its four configurations of Fig. 3 on a chain, a
// fan-out/fan-in and a feedback cycle, exact against serial references; its parameters; and PSS's
// balanced transition probabilities against values worked out by hand from the paper's formulas.
#include "../runtime/src/graph/policies/danbi/transition.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace pipescope;
namespace danbi = pipescope::graph::detail::danbi;

namespace {

const char* const configs[] = {"ws", "qes", "qes+pss", "qes+pss+prs"};

graph::run_options danbi_run(const std::string& config, std::uint64_t seed = 7) {
    graph::run_options o;
    o.policy = "danbi";
    o.params = {{"config", config}};
    o.seed = seed;
    return o;
}

std::uint64_t mix(std::uint64_t x) { return x * 2654435761u % 1000003u; }
std::uint64_t twist(std::uint64_t x) { return (x ^ 0x5bd1e995u) + 3 * x; }

// source -> square (parallel) -> sink (serial), as in test_graph_program.cpp.
struct chain {
    graph::program g;
    std::uint64_t n;
    std::vector<std::uint64_t> seen;

    chain(std::uint64_t count, bool ordered) : n(count) {
        const graph::queue_shape shape{.packet_elements = 16, .capacity_packets = 4, .ordered = ordered};
        const auto numbers = g.add_queue<std::uint64_t>("numbers", shape);
        const auto squares = g.add_queue<std::uint64_t>("squares", shape);
        g.add_serial("source", {}, {numbers}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < n; ++i) co_await ctx.push(0, i);
        });
        g.add_parallel("square", numbers, {{squares, 1}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, ctx.in<std::uint64_t>(i) * ctx.in<std::uint64_t>(i));
        });
        g.add_serial("sink", {squares}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                auto w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) seen.push_back(w.at<std::uint64_t>(i));
                ctx.commit(w);
            }
        });
    }
};

// source -> {left, right} (parallel branches) -> join (serial, reads both inputs alternately).
struct fan_out_in {
    graph::program g;
    std::uint64_t n;
    std::vector<std::uint64_t> lefts, rights;

    fan_out_in(std::uint64_t count, bool ordered) : n(count) {
        const graph::queue_shape shape{.packet_elements = 8, .capacity_packets = 4, .ordered = ordered};
        const auto to_left = g.add_queue<std::uint64_t>("to-left", shape);
        const auto to_right = g.add_queue<std::uint64_t>("to-right", shape);
        const auto from_left = g.add_queue<std::uint64_t>("from-left", shape);
        const auto from_right = g.add_queue<std::uint64_t>("from-right", shape);
        g.add_serial("source", {}, {to_left, to_right}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < n; ++i) {
                co_await ctx.push(0, i);
                co_await ctx.push(1, i);
            }
        });
        g.add_parallel("left", to_left, {{from_left, 1}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, mix(ctx.in<std::uint64_t>(i)));
        });
        g.add_parallel("right", to_right, {{from_right, 1}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, twist(ctx.in<std::uint64_t>(i)));
        });
        g.add_serial("join", {from_left, from_right}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            bool left_open = true, right_open = true;
            while (left_open || right_open) {
                for (std::size_t k = 0; k < 2; ++k) {
                    if (!(k == 0 ? left_open : right_open)) continue;
                    auto w = co_await ctx.pop(k);
                    if (!w) {
                        (k == 0 ? left_open : right_open) = false;
                        continue;
                    }
                    for (std::size_t i = 0; i < w.size(); ++i) (k == 0 ? lefts : rights).push_back(w.at<std::uint64_t>(i));
                    ctx.commit(w);
                }
            }
        });
    }
};

// A cycle: router (serial) feeds `work`; step (parallel) takes one Collatz step of each item and
// sends it back on the feedback queue `back`; the router retires items that reached 1 and sends the
// others round again. The router keeps at most `window` items in the cycle so that `back` always has
// room, and closes `work` itself once every seed is retired — which ends `step` and so `back`.
struct item {
    std::uint64_t seed, value, steps;
};
struct collatz_cycle {
    static constexpr std::size_t window = 8;
    graph::program g;
    std::uint64_t n;
    std::vector<std::uint64_t> steps;

    explicit collatz_cycle(std::uint64_t count) : n(count), steps(count, 0) {
        const auto seeds = g.add_queue<std::uint64_t>("seeds", {.packet_elements = 4, .capacity_packets = 4});
        const auto work = g.add_queue<item>("work", {.packet_elements = 4, .capacity_packets = 4});
        const auto back = g.add_queue<item>("back", {.packet_elements = 4, .capacity_packets = window + 2});
        g.add_serial("source", {}, {seeds}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 1; i <= n; ++i) co_await ctx.push(0, i);
        });
        g.add_serial("router", {seeds, back}, {work}, [this](graph::thread_context& ctx) -> graph::stage_task {
            std::size_t in_cycle = 0;
            bool seeds_open = true;
            while (seeds_open || in_cycle > 0) {
                if (seeds_open && in_cycle < window) {
                    auto w = co_await ctx.pop(0);
                    if (!w) {
                        seeds_open = false;
                        continue;
                    }
                    for (std::size_t i = 0; i < w.size(); ++i) {
                        const std::uint64_t s = w.at<std::uint64_t>(i);
                        co_await ctx.push(0, item{s, s, 0});
                        ++in_cycle;
                    }
                    ctx.commit(w);
                    ctx.flush(0);   // the items must reach `step` before the router waits on `back`
                    continue;
                }
                auto w = co_await ctx.pop(1);
                for (std::size_t i = 0; i < w.size(); ++i) {
                    const item it = w.at<item>(i);
                    if (it.value == 1) {
                        steps[it.seed - 1] = it.steps;
                        --in_cycle;
                    } else {
                        co_await ctx.push(0, it);
                    }
                }
                ctx.commit(w);
                ctx.flush(0);
            }
            ctx.close_output(0);   // nothing more goes round: the cycle drains and terminates
        });
        g.add_parallel("step", work, {{back, 1}}, [](graph::instance_context& ctx) {
            for (std::size_t i = 0; i < ctx.size(); ++i) {
                item it = ctx.in<item>(i);
                it.value = it.value % 2 == 0 ? it.value / 2 : 3 * it.value + 1;
                ++it.steps;
                ctx.push(0, it);
            }
        });
    }

    // Every item takes at least one step (1 goes 1, 4, 2, 1).
    static std::uint64_t serial_steps(std::uint64_t v) {
        std::uint64_t s = 0;
        do {
            v = v % 2 == 0 ? v / 2 : 3 * v + 1;
            ++s;
        } while (v != 1);
        return s;
    }
};

}   // namespace

TEST_CASE("danbi: every configuration runs a chain graph to the serial result", "[graph][danbi]") {
    for (const char* config : configs) {
        for (unsigned workers : {1u, 2u, 4u}) {
            for (bool ordered : {false, true}) {
                INFO("config " << config << ", P = " << workers << ", ordered " << ordered);
                scheduler s({workers});
                chain prog(3000, ordered);
                const graph::run_stats st = graph::run(s, prog.g, danbi_run(config, workers));
                REQUIRE(prog.seen.size() == prog.n);
                std::uint64_t sum = 0, expected = 0;
                for (std::uint64_t i = 0; i < prog.n; ++i) {
                    sum += prog.seen[i];
                    expected += i * i;
                    if (ordered) REQUIRE(prog.seen[i] == i * i);
                }
                CHECK(sum == expected);
                CHECK(st.instances == (prog.n + 15) / 16);
                for (const auto& q : st.queues) {
                    CHECK_FALSE(q.unbounded);   // DANBI programs size their queues (§III-A5)
                    CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
                }
                CHECK(st.preemptions == 0);   // a sequential kernel runs until a queue operation blocks
            }
        }
    }
}

TEST_CASE("danbi: a fan-out/fan-in graph gives the exact result", "[graph][danbi]") {
    for (const char* config : configs) {
        for (unsigned workers : {1u, 2u, 4u}) {
            for (bool ordered : {false, true}) {
                INFO("config " << config << ", P = " << workers << ", ordered " << ordered);
                scheduler s({workers});
                fan_out_in prog(2000, ordered);
                graph::run(s, prog.g, danbi_run(config, 100 + workers));
                REQUIRE(prog.lefts.size() == prog.n);
                REQUIRE(prog.rights.size() == prog.n);
                std::uint64_t left_sum = 0, right_sum = 0, left_expected = 0, right_expected = 0;
                for (std::uint64_t i = 0; i < prog.n; ++i) {
                    left_sum += prog.lefts[i];
                    right_sum += prog.rights[i];
                    left_expected += mix(i);
                    right_expected += twist(i);
                    if (ordered) {
                        REQUIRE(prog.lefts[i] == mix(i));
                        REQUIRE(prog.rights[i] == twist(i));
                    }
                }
                CHECK(left_sum == left_expected);
                CHECK(right_sum == right_expected);
            }
        }
    }
}

TEST_CASE("danbi: a graph with a feedback queue closed by the program completes", "[graph][danbi]") {
    for (const char* config : configs) {
        for (unsigned workers : {1u, 2u, 4u}) {
            INFO("config " << config << ", P = " << workers);
            scheduler s({workers});
            collatz_cycle prog(300);
            const graph::run_stats st = graph::run(s, prog.g, danbi_run(config, 200 + workers));
            std::uint64_t total = 0;
            for (std::uint64_t v = 1; v <= prog.n; ++v) {
                REQUIRE(prog.steps[v - 1] == collatz_cycle::serial_steps(v));
                total += prog.steps[v - 1];
            }
            CHECK(total > prog.n);   // items really went round the cycle many times
            for (const auto& q : st.queues) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
        }
    }
}

TEST_CASE("danbi: PRS with C = 1 and every seed still computes the serial result", "[graph][danbi]") {
    // C = 1 makes every ticket wait send the worker to a random kernel: the most random schedule.
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        scheduler s({4});
        chain prog(2000, true);
        graph::run_options o = danbi_run("qes+pss+prs", seed);
        o.params.push_back({"C", "1"});
        graph::run(s, prog.g, o);
        REQUIRE(prog.seen.size() == prog.n);
        for (std::uint64_t i = 0; i < prog.n; ++i) REQUIRE(prog.seen[i] == i * i);
    }
}

TEST_CASE("danbi: a deadlocked graph fails with the engine's report instead of spinning", "[graph][danbi]") {
    // 'loop' waits for data only it could produce. The parallel stage 'relay' has an empty input and
    // room in its output, so a blind step of it reserves and gives back output room (a queue signal):
    // workers must stop stepping blindly and wait, or the deadlock would never be seen.
    graph::program g;
    const graph::queue_shape shape{.packet_elements = 1, .capacity_packets = 2};
    const auto a = g.add_queue<int>("a", shape);
    const auto b = g.add_queue<int>("b", shape);
    const auto x = g.add_queue<int>("x", shape);
    const auto y = g.add_queue<int>("y", shape);
    g.add_serial("source", {}, {a}, [](graph::thread_context& ctx) -> graph::stage_task {
        for (int i = 0; i < 10; ++i) co_await ctx.push(0, i);
    });
    g.add_serial("loop", {a, b}, {x, b}, [](graph::thread_context& ctx) -> graph::stage_task {
        auto w = co_await ctx.pop(1);
        (void)w;
    });
    g.add_parallel("relay", x, {{y, 1}}, [](graph::instance_context& ctx) { ctx.push(0, ctx.in<int>(0)); });
    g.add_serial("sink", {y}, {}, [](graph::thread_context& ctx) -> graph::stage_task {
        while (auto w = co_await ctx.pop(0)) ctx.commit(w);
    });
    for (const char* config : configs) {
        for (unsigned workers : {1u, 2u, 4u}) {
            INFO("config " << config << ", P = " << workers);
            scheduler s({workers});
            try {
                graph::run(s, g, danbi_run(config));
                FAIL("a deadlocked graph returned");
            } catch (const std::runtime_error& e) {
                const std::string what = e.what();
                CHECK(what.find("graph deadlocked") != std::string::npos);
                CHECK(what.find("stage 'loop': waits for data in queue 'b'") != std::string::npos);
            }
        }
    }
}

TEST_CASE("danbi: parameter errors name the key", "[graph][danbi]") {
    scheduler s({2});
    chain prog(10, false);
    auto fails_with = [&](std::vector<std::pair<std::string, std::string>> params, const std::string& text) {
        graph::run_options o;
        o.policy = "danbi";
        o.params = std::move(params);
        try {
            graph::run(s, prog.g, o);
            FAIL("danbi accepted bad parameters");
        } catch (const std::invalid_argument& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(text) != std::string::npos);
        }
    };
    fails_with({{"config", "bogus"}}, "config=bogus is not one of ws, qes, qes+pss, qes+pss+prs");
    fails_with({{"config", "pss"}}, "config=pss");
    fails_with({{"C", "0"}}, "C=0 is not a whole number in [1, 1000000000]");
    fails_with({{"C", "2000000000"}}, "C=2000000000");
    fails_with({{"C", "ten"}}, "C=ten");
    fails_with({{"threads", "4"}}, "graph policy 'danbi' has no parameter threads");
    // Good values run.
    graph::run_options o = danbi_run("qes");
    o.params.push_back({"C", "5"});
    prog.seen.clear();
    graph::run(s, prog.g, o);
    CHECK(prog.seen.size() == 10);
}

TEST_CASE("danbi: PSS balanced transition probabilities match the paper's formulas", "[graph][danbi]") {
    // Seed 002 §III-A3: P^b_{i,i-1} = max((1 - F_x) - F_x, 0), P^b_{i,i+1} = max(F_{x+1} - (1 - F_{x+1}), 0).
    struct hand_case {
        double f_in, f_out, backward, forward;
    };
    const hand_case cases[] = {
        {0.5, 0.5, 0.0, 0.0},       // the steady state: both queues half full, no transition
        {0.0, 1.0, 1.0, 1.0},       // input empty, output full: leave in either direction
        {1.0, 0.0, 0.0, 0.0},       // input full, output empty: this kernel is where the work is
        {0.25, 0.75, 0.5, 0.5},     // 0.75 - 0.25 and 0.75 - 0.25
        {0.1, 0.6, 0.8, 0.2},       // 0.9 - 0.1 and 0.6 - 0.4
        {0.4, 0.3, 0.2, 0.0},       // 0.6 - 0.4; 0.3 - 0.7 < 0
        {0.75, 0.875, 0.0, 0.75},   // 0.25 - 0.75 < 0; 0.875 - 0.125
        {-0.5, 1.7, 1.0, 1.0},      // fill ratios are clamped to [0, 1] (an unbounded queue may exceed 1)
    };
    for (const hand_case& c : cases) {
        INFO("F_in " << c.f_in << ", F_out " << c.f_out);
        const danbi::transition_probabilities p = danbi::balanced_transition(c.f_in, c.f_out);
        CHECK(p.backward == Approx(c.backward).margin(1e-12));
        CHECK(p.forward == Approx(c.forward).margin(1e-12));
    }

    // The decision: a fair coin picks the direction, then the transition is taken with that
    // direction's probability (u < P^b).
    const danbi::transition_probabilities p = danbi::balanced_transition(0.1, 0.6);   // 0.8, 0.2
    CHECK(danbi::pss_decide(p, false, 0.79) == danbi::pss_choice::backward);
    CHECK(danbi::pss_decide(p, false, 0.81) == danbi::pss_choice::stay);
    CHECK(danbi::pss_decide(p, true, 0.19) == danbi::pss_choice::forward);
    CHECK(danbi::pss_decide(p, true, 0.21) == danbi::pss_choice::stay);
    const danbi::transition_probabilities none = danbi::balanced_transition(0.5, 0.5);
    CHECK(danbi::pss_decide(none, false, 0.0) == danbi::pss_choice::stay);
    CHECK(danbi::pss_decide(none, true, 0.0) == danbi::pss_choice::stay);

    // Seed 002 §III-A4: P^r = min(T / C, 1).
    CHECK(danbi::random_schedule_probability(0, 10000) == 0.0);
    CHECK(danbi::random_schedule_probability(2500, 10000) == Approx(0.25));
    CHECK(danbi::random_schedule_probability(10000, 10000) == 1.0);
    CHECK(danbi::random_schedule_probability(30000, 10000) == 1.0);
    CHECK(danbi::random_schedule_probability(1, 1) == 1.0);
}
