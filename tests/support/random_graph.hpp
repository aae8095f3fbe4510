// Random stage graphs for the stress test and the property tests: a source, layers of parallel and
// serial stages joined by queues of random shapes (packet sizes, capacities, ordered or not, peeking),
// fan-out (a stage with several outputs), fan-in (queues with several producers), variable output
// rates, and one serial sink. Every stage is a pure function of each element it consumes, so the
// multiset reaching the sink — summarised as a count and an order-independent checksum — does not
// depend on the schedule, and `expected()` computes it by plain recursion, without any runtime.
#pragma once

#include "random_pipeline.hpp"   // rng

#include <pipescope/graph/program.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pipescope::testing {

struct graph_result {
    std::uint64_t count = 0, checksum = 0;
    bool operator==(const graph_result&) const = default;
};

class random_graph {
public:
    static std::unique_ptr<random_graph> make(std::uint64_t seed) {
        auto g = std::unique_ptr<random_graph>(new random_graph());
        g->build(seed);
        return g;
    }

    const graph::program& program() const { return g_; }
    graph_result result() const { return {count_.load(), checksum_.load()}; }
    void reset() {
        count_ = 0;
        checksum_ = 0;
    }
    std::string describe() const { return description_; }

    // The sink's multiset by recursion over the stage functions (no queues, no runtime).
    graph_result expected() const {
        graph_result r;
        for (std::uint64_t i = 0; i < elements_; ++i) visit(source_out_, source_value(i), r);
        return r;
    }

private:
    struct stage_fn {
        bool serial = false;
        std::uint64_t salt = 0;
        std::vector<std::uint32_t> out_nodes;   // per output: the consumer's node index (sink = -1 → sink_node)
    };
    static constexpr std::uint32_t sink_node = 0xFFFFFFFFu;

    static std::uint64_t mix(std::uint64_t v, std::uint64_t salt) {
        rng r{v ^ (salt * 0x9E3779B97F4A7C15ull)};
        return r.next();
    }
    std::uint64_t source_value(std::uint64_t i) const { return mix(i, seed_); }
    // A parallel stage emits 0, 1 or 2 elements per input (variable rates, seed 002 §II); a serial one 1.
    static unsigned emitted(const stage_fn& f, std::uint64_t w) { return f.serial ? 1 : static_cast<unsigned>(w % 3); }
    static std::uint64_t nth(std::uint64_t w, unsigned k) { return mix(w, 0xA11CE + k); }
    static std::size_t route(const stage_fn& f, std::uint64_t out) {
        return static_cast<std::size_t>(out % f.out_nodes.size());
    }

    void visit(std::uint32_t node, std::uint64_t v, graph_result& r) const {
        if (node == sink_node) {
            ++r.count;
            r.checksum += mix(v, 0x5EED);
            return;
        }
        const stage_fn& f = fns_[node];
        const std::uint64_t w = mix(v, f.salt);
        for (unsigned k = 0; k < emitted(f, w); ++k) {
            const std::uint64_t out = nth(w, k);
            visit(f.out_nodes[route(f, out)], out, r);
        }
    }

    void build(std::uint64_t seed) {
        seed_ = seed;
        rng r{seed ^ 0x6AF};
        elements_ = 100 + r.below(2500);
        const unsigned layers = 1 + r.below(4);
        // Nodes per layer; each layer's stages write to queues consumed by the next layer (or the sink).
        std::vector<std::vector<std::uint32_t>> layer_nodes(layers);
        for (unsigned l = 0; l < layers; ++l)
            for (unsigned k = 0, n = 1 + r.below(3); k < n; ++k) {
                stage_fn f;
                f.serial = r.below(4) == 0;
                f.salt = r.next();
                layer_nodes[l].push_back(static_cast<std::uint32_t>(fns_.size()));
                fns_.push_back(f);
            }
        // Outputs: each node of layer l writes to 1..3 nodes of layer l+1 (the last layer: the sink).
        for (unsigned l = 0; l < layers; ++l)
            for (std::uint32_t n : layer_nodes[l]) {
                if (l + 1 == layers) {
                    fns_[n].out_nodes.push_back(sink_node);
                    continue;
                }
                const auto& next = layer_nodes[l + 1];
                const unsigned outs = 1 + r.below(static_cast<unsigned>(next.size()));
                for (unsigned k = 0; k < outs; ++k) fns_[n].out_nodes.push_back(next[(n + k) % next.size()]);
            }
        // Every node of a layer > 0 needs a producer: link orphans from the previous layer's first node.
        for (unsigned l = 1; l < layers; ++l)
            for (std::uint32_t n : layer_nodes[l]) {
                bool fed = false;
                for (std::uint32_t p : layer_nodes[l - 1])
                    for (std::uint32_t o : fns_[p].out_nodes) fed |= o == n;
                if (!fed) fns_[layer_nodes[l - 1][0]].out_nodes.push_back(n);
            }
        // The source feeds the first layer's first node; the other first-layer nodes hang off it.
        source_out_ = layer_nodes[0][0];
        for (std::size_t k = 1; k < layer_nodes[0].size(); ++k) fns_[source_out_].out_nodes.push_back(layer_nodes[0][k]);

        // One input queue per node and one for the sink, of random shapes, then grown where the graph
        // needs it: room for a parallel producer's worst case (2 outputs per input element, all to one
        // queue), and a packet published even while every producer holds an open packet in it.
        const std::size_t n_queues = fns_.size() + 1;   // the last: the sink's
        auto index_of = [&](std::uint32_t node) -> std::size_t { return node == sink_node ? fns_.size() : node; };
        std::vector<graph::queue_shape> shapes(n_queues);
        std::vector<std::size_t> producers(n_queues, 0);
        for (auto& sh : shapes) {
            sh.packet_elements = 1 + r.below(16);
            sh.capacity_packets = 2 + r.below(10);
            sh.ordered = r.below(2) == 0;
        }
        // Parallel stages peek at up to one packet past their input packet, a third of them.
        peek_.assign(fns_.size(), 0);
        for (std::size_t n = 0; n < fns_.size(); ++n)
            if (!fns_[n].serial && r.below(3) == 0) peek_[n] = r.below(static_cast<unsigned>(shapes[n].packet_elements) + 1);
        producers[source_out_] = 1;
        for (const stage_fn& f : fns_)
            for (std::uint32_t o : f.out_nodes) ++producers[index_of(o)];
        // A queue holds, besides the largest reservation a producer makes, the consumer's packet and
        // its peek, and one open packet per producer: a consumer waiting for peek data while a producer
        // waits for room could otherwise wait on each other forever (queue sizing is the program's
        // job: seed 002 §III-A5).
        std::vector<std::size_t> worst(n_queues, 1);
        for (std::size_t n = 0; n < fns_.size(); ++n)
            for (std::uint32_t o : fns_[n].out_nodes) {
                const std::size_t q = index_of(o);
                const std::size_t w =
                    (2 * shapes[n].packet_elements + shapes[q].packet_elements - 1) / shapes[q].packet_elements;
                if (!fns_[n].serial) worst[q] = std::max(worst[q], w);
            }
        for (std::size_t q = 0; q < n_queues; ++q) {
            // Short packets (a commit of a few elements) can spread a peek over one packet per element.
            const std::size_t peek_packets = q < fns_.size() ? peek_[q] : 0;
            shapes[q].capacity_packets =
                std::max(shapes[q].capacity_packets, worst[q] + 1 + peek_packets + producers[q] + 1);
        }
        std::vector<graph::queue_id> input(fns_.size());
        for (std::size_t n = 0; n < fns_.size(); ++n)
            input[n] = g_.add_queue<std::uint64_t>("q" + std::to_string(n), shapes[n]);
        const graph::queue_id sink_q = g_.add_queue<std::uint64_t>("to sink", shapes[fns_.size()]);
        auto queue_of = [&](std::uint32_t node) { return node == sink_node ? sink_q : input[node]; };
        g_.add_serial("source", {}, {input[source_out_]}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (std::uint64_t i = 0; i < elements_; ++i) co_await ctx.push(0, source_value(i));
        });
        for (std::uint32_t n = 0; n < fns_.size(); ++n) {
            const stage_fn& f = fns_[n];
            std::vector<graph::queue_id> outs;
            for (std::uint32_t o : f.out_nodes) outs.push_back(queue_of(o));
            const std::string name = (f.serial ? "serial " : "parallel ") + std::to_string(n);
            if (f.serial) {
                g_.add_serial(name, {input[n]}, outs, [this, n](graph::thread_context& ctx) -> graph::stage_task {
                    const stage_fn& fn = fns_[n];
                    for (;;) {
                        auto w = co_await ctx.pop(0);
                        if (!w) break;
                        std::vector<std::uint64_t> values;
                        for (std::size_t i = 0; i < w.size(); ++i) values.push_back(w.at<std::uint64_t>(i));
                        ctx.commit(w);
                        for (std::uint64_t v : values) {
                            const std::uint64_t out = nth(mix(v, fn.salt), 0);
                            co_await ctx.push(route(fn, out), out);
                        }
                    }
                });
            } else {
                const graph::queue_shape& in = g_.queues()[input[n]].shape;
                std::vector<graph::output_spec> specs;
                for (graph::queue_id q : outs) {
                    const std::size_t per = g_.queues()[q].shape.packet_elements;
                    // Room for 2 outputs per input element, all to one output in the worst case.
                    specs.push_back({q, (2 * in.packet_elements + per - 1) / per});
                }
                const std::size_t peek = peek_[n];
                g_.add_parallel(
                    name, input[n], specs,
                    [this, n](graph::instance_context& ctx) {
                        const stage_fn& fn = fns_[n];
                        std::uint64_t touched = 0;
                        for (std::size_t j = 0; j < ctx.peek_size(); ++j) touched += ctx.peek<std::uint64_t>(j);
                        (void)touched;   // peeked elements are read, not consumed: they do not change the output
                        for (std::size_t i = 0; i < ctx.size(); ++i) {
                            const std::uint64_t w = mix(ctx.in<std::uint64_t>(i), fn.salt);
                            for (unsigned k = 0; k < emitted(fn, w); ++k) {
                                const std::uint64_t out = nth(w, k);
                                ctx.push(route(fn, out), out);
                            }
                        }
                    },
                    peek);
            }
        }
        g_.add_serial("sink", {sink_q}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            for (;;) {
                auto w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) {
                    count_.fetch_add(1, std::memory_order_relaxed);
                    checksum_.fetch_add(mix(w.at<std::uint64_t>(i), 0x5EED), std::memory_order_relaxed);
                }
                ctx.commit(w);
            }
        });
        description_ = "random graph seed " + std::to_string(seed) + " (" + std::to_string(fns_.size()) + " stages in " +
                       std::to_string(layers) + " layers, " + std::to_string(elements_) + " elements)";
    }

    random_graph() = default;
    graph::program g_;
    std::vector<stage_fn> fns_;
    std::vector<std::size_t> peek_;
    std::uint32_t source_out_ = 0;
    std::uint64_t seed_ = 0, elements_ = 0;
    std::atomic<std::uint64_t> count_{0}, checksum_{0};
    std::string description_;
};

}   // namespace pipescope::testing
