// Building and checking a stage graph (runtime/include/pipescope/graph/program.hpp).
#include <pipescope/graph/program.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>

namespace pipescope::graph {

namespace {
constexpr std::uint32_t unreached = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void invalid(const std::string& what) { throw std::invalid_argument("graph program: " + what); }
}   // namespace

queue_id program::add_queue(queue_spec spec) {
    if (spec.name.empty()) spec.name = "queue " + std::to_string(queues_.size());
    const std::string q = "queue '" + spec.name + "'";
    if (spec.element_size == 0) invalid(q + ": element_size is 0");
    if (spec.shape.packet_elements == 0) invalid(q + ": packet_elements is 0");
    if (spec.shape.capacity_packets == 0) invalid(q + ": capacity_packets is 0");
    queues_.push_back(std::move(spec));
    return static_cast<queue_id>(queues_.size() - 1);
}

void program::set_capacity(queue_id q, std::size_t packets) {
    if (q >= queues_.size()) invalid("set_capacity: queue id " + std::to_string(q) + " does not exist");
    if (packets == 0) invalid("queue '" + queues_[q].name + "': capacity_packets is 0");
    queues_[q].shape.capacity_packets = packets;
}

stage_id program::add_parallel(std::string name, queue_id input, std::vector<output_spec> outputs, parallel_body body,
                               std::size_t peek) {
    stage_spec s;
    s.name = std::move(name);
    s.kind = stage_kind::parallel;
    s.inputs = {input};
    s.outputs = std::move(outputs);
    s.peek = peek;
    s.parallel = std::move(body);
    stages_.push_back(std::move(s));
    return static_cast<stage_id>(stages_.size() - 1);
}

stage_id program::add_serial(std::string name, std::vector<queue_id> inputs, std::vector<queue_id> outputs,
                             serial_body body) {
    stage_spec s;
    s.name = std::move(name);
    s.kind = stage_kind::serial;
    s.inputs = std::move(inputs);
    for (queue_id q : outputs) s.outputs.push_back({q, 1});
    s.serial = std::move(body);
    stages_.push_back(std::move(s));
    return static_cast<stage_id>(stages_.size() - 1);
}

void program::validate() const {
    if (stages_.empty()) invalid("no stages");
    std::vector<std::size_t> consumers(queues_.size(), 0), producers(queues_.size(), 0);
    bool source = false;
    for (const stage_spec& s : stages_) {
        const std::string st = "stage '" + s.name + "'";
        if (s.kind == stage_kind::parallel) {
            if (s.inputs.size() != 1) invalid(st + ": a parallel stage reads exactly one queue");
            if (!s.parallel) invalid(st + ": no body");
        } else {
            if (!s.serial) invalid(st + ": no body");
            if (s.inputs.empty()) source = true;
        }
        for (queue_id q : s.inputs) {
            if (q >= queues_.size()) invalid(st + ": input queue id " + std::to_string(q) + " does not exist");
            ++consumers[q];
        }
        for (const output_spec& o : s.outputs) {
            if (o.queue >= queues_.size()) invalid(st + ": output queue id " + std::to_string(o.queue) + " does not exist");
            if (o.max_packets == 0) invalid(st + ": max_packets 0 for queue '" + queues_[o.queue].name + "'");
            if (o.max_packets > queues_[o.queue].shape.capacity_packets)
                invalid(st + ": reserves " + std::to_string(o.max_packets) + " packets per instance in queue '" +
                        queues_[o.queue].name + "', which holds only " +
                        std::to_string(queues_[o.queue].shape.capacity_packets));
            ++producers[o.queue];
        }
        if (s.kind == stage_kind::parallel && s.inputs.size() == 1 && s.inputs[0] < queues_.size()) {
            const queue_shape& sh = queues_[s.inputs[0]].shape;
            const std::size_t peek_packets = (s.peek + sh.packet_elements - 1) / sh.packet_elements;
            if (1 + peek_packets > sh.capacity_packets)
                invalid(st + ": peeks " + std::to_string(s.peek) + " elements past a packet of queue '" +
                        queues_[s.inputs[0]].name + "', more than its capacity can hold");
        }
    }
    if (!source) invalid("no source stage (a serial stage without inputs)");
    for (std::size_t q = 0; q < queues_.size(); ++q) {
        const std::string qs = "queue '" + queues_[q].name + "'";
        if (consumers[q] != 1)
            invalid(qs + " has " + std::to_string(consumers[q]) + " consuming stages; it needs exactly one");
        if (producers[q] == 0) invalid(qs + " has no producing stage");
    }
    const auto d = depths();
    for (std::size_t s = 0; s < stages_.size(); ++s)
        if (d[s] == unreached) invalid("stage '" + stages_[s].name + "' cannot be reached from a source stage");
}

stage_id program::consumer(queue_id q) const {
    for (std::size_t s = 0; s < stages_.size(); ++s)
        if (std::find(stages_[s].inputs.begin(), stages_[s].inputs.end(), q) != stages_[s].inputs.end())
            return static_cast<stage_id>(s);
    invalid("queue '" + queues_.at(q).name + "' has no consumer");
}

std::vector<stage_id> program::producers(queue_id q) const {
    std::vector<stage_id> out;
    for (std::size_t s = 0; s < stages_.size(); ++s)
        for (const output_spec& o : stages_[s].outputs)
            if (o.queue == q) out.push_back(static_cast<stage_id>(s));
    return out;
}

namespace {

// Per stage: the stages its outputs feed, in output order.
std::vector<std::vector<stage_id>> successors(const std::vector<stage_spec>& stages, std::size_t queues) {
    std::vector<std::vector<stage_id>> readers(queues), next(stages.size());
    for (std::size_t s = 0; s < stages.size(); ++s)
        for (queue_id q : stages[s].inputs)
            if (q < queues) readers[q].push_back(static_cast<stage_id>(s));
    for (std::size_t s = 0; s < stages.size(); ++s)
        for (const output_spec& o : stages[s].outputs)
            if (o.queue < queues)
                for (stage_id c : readers[o.queue]) next[s].push_back(c);
    return next;
}

bool is_source(const stage_spec& s) { return s.kind == stage_kind::serial && s.inputs.empty(); }

}   // namespace

namespace {

// Back edges of a depth-first search from the sources, in declaration order: an edge into a stage
// still on the search's stack closes a cycle. A DAG has none, however its queues fan in.
std::vector<std::pair<stage_id, stage_id>> back_edges(const program& g) {
    const auto next = successors(g.stages(), g.queues().size());
    enum : std::uint8_t { unseen, on_stack, done };
    std::vector<std::uint8_t> state(g.stages().size(), unseen);
    std::vector<std::pair<stage_id, stage_id>> back;
    for (std::size_t root = 0; root < g.stages().size(); ++root) {
        if (!is_source(g.stages()[root]) || state[root] != unseen) continue;
        // Iterative DFS: (stage, next successor to look at).
        std::vector<std::pair<stage_id, std::size_t>> stack{{static_cast<stage_id>(root), 0}};
        state[root] = on_stack;
        while (!stack.empty()) {
            auto& [s, k] = stack.back();
            if (k == next[s].size()) {
                state[s] = done;
                stack.pop_back();
                continue;
            }
            const stage_id c = next[s][k++];
            if (state[c] == on_stack) back.emplace_back(s, c);
            else if (state[c] == unseen) {
                state[c] = on_stack;
                stack.emplace_back(c, 0);
            }
        }
    }
    return back;
}

}   // namespace

std::vector<std::uint32_t> program::depths() const {
    // Longest path from a source over the forward edges (back edges left out: what remains is a
    // DAG), so a stage is always deeper than every forward producer of its inputs.
    const auto next = successors(stages_, queues_.size());
    const auto back = back_edges(*this);
    auto forward = [&](stage_id s, stage_id c) {
        return std::find(back.begin(), back.end(), std::make_pair(s, c)) == back.end();
    };
    std::vector<std::uint32_t> indegree(stages_.size(), 0), depth(stages_.size(), unreached);
    for (std::size_t s = 0; s < stages_.size(); ++s)
        for (stage_id c : next[s])
            if (forward(static_cast<stage_id>(s), c)) ++indegree[c];
    std::deque<stage_id> ready;
    for (std::size_t s = 0; s < stages_.size(); ++s)
        if (is_source(stages_[s])) {
            depth[s] = 0;
            ready.push_back(static_cast<stage_id>(s));
        }
    while (!ready.empty()) {   // Kahn's order over the forward edges
        const stage_id s = ready.front();
        ready.pop_front();
        for (stage_id c : next[s]) {
            if (!forward(s, c)) continue;
            depth[c] = depth[c] == unreached ? depth[s] + 1 : std::max(depth[c], depth[s] + 1);
            if (--indegree[c] == 0) ready.push_back(c);
        }
    }
    // A stage reached only from stages no source reaches keeps `unreached` (validate() reports it);
    // one left with forward in-edges from unreachable stages takes the depth it got so far.
    return depth;
}

bool program::backward(queue_id q) const {
    // A GRAMPS backward queue (seed 004 §III-A): one of its producer -> consumer edges closes a cycle.
    const stage_id c = consumer(q);
    for (const auto& [from, to] : back_edges(*this))
        if (to == c)
            for (stage_id p : producers(q))
                if (p == from) return true;
    return false;
}

std::vector<stage_id> program::topological_order() const {
    // Depth grows by at least one along every forward edge, so (depth, declaration order) is topological.
    const auto d = depths();
    std::vector<stage_id> order(stages_.size());
    std::iota(order.begin(), order.end(), stage_id{0});
    std::stable_sort(order.begin(), order.end(), [&](stage_id a, stage_id b) { return d[a] < d[b]; });
    return order;
}

std::vector<std::string> counter_names(const program& g) {
    std::vector<std::string> names;
    for (const queue_spec& q : g.queues())
        names.push_back(trace::vocab::queue_packets(q.name));   // the name readers classify
    return names;
}

std::size_t packets_at_once(const program& g, queue_id q) {
    const queue_shape& sh = g.queues().at(q).shape;
    std::size_t most = 1;   // a serial stage reserves and pops one packet at a time
    for (stage_id s : g.producers(q))
        if (g.stages()[s].kind == stage_kind::parallel)
            for (const output_spec& o : g.stages()[s].outputs)
                if (o.queue == q) most = std::max(most, o.max_packets);
    const stage_spec& reader = g.stages()[g.consumer(q)];
    if (reader.kind == stage_kind::parallel)
        most = std::max(most, 1 + (reader.peek + sh.packet_elements - 1) / sh.packet_elements);
    return most;
}

std::size_t rule_capacity(const program& g, queue_id q, capacity_rule rule, unsigned threads) {
    switch (rule) {
        case capacity_rule::application: return g.queues().at(q).shape.capacity_packets;
        case capacity_rule::per_thread: return packets_at_once(g, q) * std::max(threads, 1u);
    }
    return g.queues().at(q).shape.capacity_packets;
}

}   // namespace pipescope::graph
