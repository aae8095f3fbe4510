// Building and checking a stage graph (runtime/include/pipescope/graph/program.hpp).
#include <pipescope/graph/program.hpp>

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>

namespace pipescope::graph {

namespace {
constexpr std::uint32_t unreached = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void invalid(const std::string& what) { throw std::invalid_argument("graph program: " + what); }
}  // namespace

queue_id program::add_queue(queue_spec spec) {
    if (spec.name.empty()) spec.name = "queue " + std::to_string(queues_.size());
    const std::string q = "queue '" + spec.name + "'";
    if (spec.element_size == 0) invalid(q + ": element_size is 0");
    if (spec.shape.packet_elements == 0) invalid(q + ": packet_elements is 0");
    if (spec.shape.capacity_packets == 0) invalid(q + ": capacity_packets is 0");
    queues_.push_back(std::move(spec));
    return static_cast<queue_id>(queues_.size() - 1);
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

std::vector<std::uint32_t> program::depths() const {
    // Breadth-first from every source: a stage's depth is its shortest distance from a source.
    std::vector<std::vector<stage_id>> readers(queues_.size());
    for (std::size_t s = 0; s < stages_.size(); ++s)
        for (queue_id q : stages_[s].inputs)
            if (q < queues_.size()) readers[q].push_back(static_cast<stage_id>(s));
    std::vector<std::uint32_t> depth(stages_.size(), unreached);
    std::deque<stage_id> todo;
    for (std::size_t s = 0; s < stages_.size(); ++s)
        if (stages_[s].kind == stage_kind::serial && stages_[s].inputs.empty()) {
            depth[s] = 0;
            todo.push_back(static_cast<stage_id>(s));
        }
    while (!todo.empty()) {
        const stage_id s = todo.front();
        todo.pop_front();
        for (const output_spec& o : stages_[s].outputs) {
            if (o.queue >= queues_.size()) continue;
            for (stage_id c : readers[o.queue])
                if (depth[c] == unreached) {
                    depth[c] = depth[s] + 1;
                    todo.push_back(c);
                }
        }
    }
    return depth;
}

bool program::backward(queue_id q) const {
    const auto d = depths();
    const std::uint32_t c = d[consumer(q)];
    for (stage_id p : producers(q))
        if (d[p] >= c) return true;
    return false;
}

std::vector<stage_id> program::topological_order() const {
    // Depth grows by one along every forward queue, so (depth, declaration order) is topological.
    const auto d = depths();
    std::vector<stage_id> order(stages_.size());
    std::iota(order.begin(), order.end(), stage_id{0});
    std::stable_sort(order.begin(), order.end(), [&](stage_id a, stage_id b) { return d[a] < d[b]; });
    return order;
}

std::vector<std::string> counter_names(const program& g) {
    std::vector<std::string> names;
    for (const queue_spec& q : g.queues()) names.push_back("queue " + q.name + " packets");
    names.push_back("footprint packets");
    names.push_back("footprint bytes");
    return names;
}

}  // namespace pipescope::graph
