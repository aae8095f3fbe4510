// instance_context::push_n: a run of elements pushed with one call per run must leave exactly what the
// same elements pushed one at a time leave — the same packets (boundaries included), in the same
// order on an ordered queue (DANBI's ticket order, seed 002 §II), the same queue statistics and the
// same trace records — and fail the same way when the instance's declared room runs out.
#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/trace/events.hpp>
#include <pipescope/trace/recorder.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <typeinfo>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace pipescope;

namespace {

// How the parallel stage hands its elements over.
enum class pushing {
    single,   // push per element
    runs,     // push_n per input element's run (empty runs included)
    whole,    // one push_n of everything the instance makes, per output
    mixed,    // the first element of a run by push, the rest by push_n (the cursor is shared)
};
const std::vector<pushing> every_way = {pushing::single, pushing::runs, pushing::whole, pushing::mixed};

const char* name(pushing p) {
    switch (p) {
        case pushing::single: return "single";
        case pushing::runs: return "runs";
        case pushing::whole: return "whole";
        case pushing::mixed: return "mixed";
    }
    return "?";
}

template <class T>
using packets = std::vector<std::vector<T>>;

// Hands `values` to output k of ctx the way `how` says (whole and runs alike for one run).
template <class T>
void hand_over(graph::instance_context& ctx, std::size_t k, pushing how, const std::vector<T>& values) {
    switch (how) {
        case pushing::single:
            for (const T& v : values) ctx.push(k, v);
            break;
        case pushing::runs:
        case pushing::whole: ctx.push_n(k, values.data(), values.size()); break;
        case pushing::mixed:
            if (values.empty()) break;
            ctx.push(k, values[0]);
            ctx.push_n(k, std::span<const T>(values).subspan(1));
            break;
    }
}

// source (serial: 0 .. n-1 in packets of 5) -> expand (parallel) -> two sinks (serial, a packet at a
// time). For each input x, expand makes x % 6 elements 8x + j on output 0 (packets of 7, room for 4
// per instance: up to 25 elements an instance, so runs cross packet boundaries and instances end
// in partial packets) and the pair x, x² on output 1 (64-bit, packets of 3). The sinks record the
// packets as they arrive.
struct expand_graph {
    graph::program g;
    packets<std::uint32_t> out0;
    packets<std::uint64_t> out1;

    expand_graph(std::uint32_t n, bool ordered, pushing how) {
        const auto numbers =
            g.add_queue<std::uint32_t>("numbers", {.packet_elements = 5, .capacity_packets = 4, .ordered = ordered});
        const auto runs =
            g.add_queue<std::uint32_t>("runs", {.packet_elements = 7, .capacity_packets = 8, .ordered = ordered});
        const auto pairs =
            g.add_queue<std::uint64_t>("pairs", {.packet_elements = 3, .capacity_packets = 8, .ordered = ordered});
        g.add_serial("source", {}, {numbers}, [n](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint32_t i = 0; i < n; ++i) co_await ctx.push(0, i);
        });
        g.add_parallel("expand", numbers, {{runs, 4}, {pairs, 4}}, [how](graph::instance_context& ctx) {
            std::vector<std::uint32_t> all0, run;
            std::vector<std::uint64_t> all1;
            for (std::size_t i = 0; i < ctx.size(); ++i) {
                const std::uint32_t x = ctx.in<std::uint32_t>(i);
                run.clear();
                for (std::uint32_t j = 0; j < x % 6; ++j) run.push_back(8 * x + j);
                const std::vector<std::uint64_t> pair = {x, std::uint64_t(x) * x};
                if (how == pushing::whole) {
                    all0.insert(all0.end(), run.begin(), run.end());
                    all1.insert(all1.end(), pair.begin(), pair.end());
                } else {
                    hand_over(ctx, 0, how, run);
                    hand_over(ctx, 1, how, pair);
                }
            }
            if (how == pushing::whole) {
                hand_over(ctx, 0, how, all0);
                hand_over(ctx, 1, how, all1);
            }
        });
        add_sink(runs, out0);
        add_sink(pairs, out1);
    }

    template <class T>
    void add_sink(graph::queue_id q, packets<T>& seen) {
        g.add_serial("sink " + std::to_string(q), {q}, {}, [&seen](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                graph::pop_window w = co_await ctx.pop(0);
                if (!w) break;
                std::vector<T>& packet = seen.emplace_back();
                for (std::size_t i = 0; i < w.size(); ++i) packet.push_back(w.at<T>(i));
                ctx.commit(w);
            }
        });
    }
};

graph::run_options under(const std::string& policy) {
    graph::run_options o;
    o.policy = policy;
    return o;
}

// What a queue's statistics say about the elements and packets that went through it (the peaks
// depend on the schedule, these do not).
auto totals(const graph::queue_stats& s) {
    return std::make_tuple(s.elements_pushed, s.packets_pushed, s.elements_popped, s.packets_popped);
}

}   // namespace

TEST_CASE("push_n leaves the packets n pushes leave, in ticket order, under every graph policy", "[graph][push_n]") {
    constexpr std::uint32_t n = 203;   // not a multiple of 5: the source's last packet is short
    for (const auto& p : graph::policies()) {
        for (unsigned workers : {1u, 2u}) {
            for (bool ordered : {true, false}) {
                INFO("policy " << p.name << ", P = " << workers << ", ordered " << ordered);
                scheduler s({workers});
                expand_graph reference(n, ordered, pushing::single);
                const graph::run_stats ref_stats = graph::run(s, reference.g, under(p.name));
                // The reference itself: every run element and pair once, in packets of at most 7 and 3.
                std::size_t elements = 0;
                for (const auto& packet : reference.out0) {
                    CHECK(!packet.empty());
                    CHECK(packet.size() <= 7);
                    elements += packet.size();
                }
                std::size_t expected = 0;
                for (std::uint32_t x = 0; x < n; ++x) expected += x % 6;
                CHECK(elements == expected);
                CHECK(reference.out1.size() >= 2 * n / 3);
                for (pushing how : every_way) {
                    if (how == pushing::single) continue;
                    INFO("push_n as " << name(how));
                    expand_graph bulk(n, ordered, how);
                    const graph::run_stats st = graph::run(s, bulk.g, under(p.name));
                    if (ordered) {   // the same packets in the same order
                        CHECK(bulk.out0 == reference.out0);
                        CHECK(bulk.out1 == reference.out1);
                    } else {   // instances publish as they finish: the same packets in some order
                        auto a0 = reference.out0, b0 = bulk.out0;
                        auto a1 = reference.out1, b1 = bulk.out1;
                        std::sort(a0.begin(), a0.end());
                        std::sort(b0.begin(), b0.end());
                        std::sort(a1.begin(), a1.end());
                        std::sort(b1.begin(), b1.end());
                        CHECK(b0 == a0);
                        CHECK(b1 == a1);
                    }
                    CHECK(st.instances == ref_stats.instances);
                    REQUIRE(st.queues.size() == ref_stats.queues.size());
                    for (std::size_t q = 0; q < st.queues.size(); ++q) {
                        INFO("queue " << st.queues[q].name);
                        CHECK(totals(st.queues[q].stats) == totals(ref_stats.queues[q].stats));
                    }
                }
            }
        }
    }
}

// One worker under graph-serial runs the same steps in the same order whichever way the elements
// are pushed, so the queue operations and fills it records must be the same records.
TEST_CASE("push_n records the queue operations and fills that n pushes record", "[graph][push_n][trace]") {
    auto recorded = [](pushing how) {
        scheduler s({1});
        trace::recorder rec(s.workers(), 16u << 20);
        rec.set_detail(trace::trace_detail::nodes, 0);
        expand_graph prog(120, true, how);
        s.attach_recorder(&rec);
        graph::run(s, prog.g, under("graph-serial"));
        s.attach_recorder(nullptr);
        REQUIRE(rec.dropped_total() == 0);
        std::vector<std::tuple<trace::event_kind, std::uint64_t, std::uint64_t, std::uint64_t>> ops;
        rec.flush([&](unsigned, const trace::event_record* records, std::size_t count) {
            for (std::size_t i = 0; i < count; ++i) {
                const trace::event_record& r = records[i];
                if (r.kind == trace::event_kind::graph_reserve || r.kind == trace::event_kind::graph_commit ||
                    r.kind == trace::event_kind::counter)
                    ops.emplace_back(r.kind, r.a, r.b, r.c);
            }
        });
        return ops;
    };
    const auto reference = recorded(pushing::single);
    CHECK(reference.size() > 100);
    for (pushing how : every_way) {
        if (how == pushing::single) continue;
        INFO("push_n as " << name(how));
        CHECK(recorded(how) == reference);
    }
}

// Past the declared room, push_n throws what the push that overflows throws, having pushed the
// elements that fit; a wrong element type and a missing output fail as push does; a push_n of zero
// elements checks nothing (as zero pushes do). The instance catches what it threw and ends normally,
// so the sink shows what the instance had pushed.
TEST_CASE("push_n past max_packets fails as the overflowing push does, having pushed what fits", "[graph][push_n]") {
    struct outcome {
        std::string error;                     // what the body caught ("" for nothing)
        std::vector<std::uint32_t> received;   // what reached the sink
    };
    auto run_pass = [](std::function<void(graph::instance_context&)> pushes) {
        outcome o;
        graph::program g;
        const auto in = g.add_queue<std::uint32_t>("in", {.packet_elements = 2, .capacity_packets = 2});
        const auto out = g.add_queue<std::uint32_t>("out", {.packet_elements = 4, .capacity_packets = 4});
        g.add_serial("source", {}, {in}, [](graph::thread_context& ctx) -> graph::stage_task { co_await ctx.push(0, 1u); });
        g.add_parallel("pass", in, {{out, 2}}, [&](graph::instance_context& ctx) {
            try {
                pushes(ctx);
            } catch (const std::exception& e) {
                o.error = std::string(typeid(e).name()) + ": " + e.what();
            }
        });
        g.add_serial("sink", {out}, {}, [&](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                graph::pop_window w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) o.received.push_back(w.at<std::uint32_t>(i));
                ctx.commit(w);
            }
        });
        scheduler s({1});
        graph::run(s, g, under("graph-serial"));
        return o;
    };
    std::vector<std::uint32_t> ten(10);
    for (std::uint32_t i = 0; i < 10; ++i) ten[i] = 100 + i;
    const outcome one_by_one = run_pass([&](graph::instance_context& ctx) {
        for (std::uint32_t v : ten) ctx.push(0, v);
    });
    const outcome bulk = run_pass([&](graph::instance_context& ctx) {
        ctx.push(0, ten[0]);   // then 9 more in a run, of which 7 fit (two packets of 4)
        ctx.push_n(0, ten.data() + 1, ten.size() - 1);
    });
    CHECK(one_by_one.error.find("max_packets = 2") != std::string::npos);
    CHECK(one_by_one.received == std::vector<std::uint32_t>(ten.begin(), ten.begin() + 8));
    CHECK(bulk.error == one_by_one.error);
    CHECK(bulk.received == one_by_one.received);

    const outcome wrong_type = run_pass([](graph::instance_context& ctx) {
        const std::uint64_t v[2] = {1, 2};
        ctx.push_n(0, v, 2);
    });
    CHECK(wrong_type.error.find("push of a 8-byte element to output 0 (queue 'out'), whose elements are 4 bytes") !=
          std::string::npos);
    CHECK(wrong_type.received.empty());
    const outcome no_output = run_pass([](graph::instance_context& ctx) {
        const std::uint32_t v = 1;
        ctx.push_n(1, &v, 1);
    });
    CHECK(no_output.error.find("push to output 1, but it has 1 outputs") != std::string::npos);
    const outcome nothing = run_pass([](graph::instance_context& ctx) {
        const std::uint64_t* none = nullptr;
        ctx.push_n(0, none, 0);   // nothing to push: no check fails
        ctx.push_n(5, none, 0);
    });
    CHECK(nothing.error.empty());
    CHECK(nothing.received.empty());
}
