// What ferret's and dedup's chain graphs share (chain_graph.hpp).
#include <pipescope/workloads/chain_graph.hpp>
#include <pipescope/workloads/graph_workload.hpp>

#include <stdexcept>
#include <vector>

namespace pipescope::workloads {

namespace {

// The keys of "key=default: meaning" lines (pipeline_parameters), so the list of pipe_while
// parameters lives in one place.
std::vector<std::string> keys_of(const std::string& lines) {
    std::vector<std::string> keys;
    std::size_t at = 0;
    while (at < lines.size()) {
        std::size_t end = lines.find('\n', at);
        if (end == std::string::npos) end = lines.size();
        const std::string line = lines.substr(at, end - at);
        if (const auto eq = line.find('='); eq != std::string::npos && eq > 0) keys.push_back(line.substr(0, eq));
        at = end + 1;
    }
    return keys;
}

}   // namespace

std::string chain_parameters() {
    return "packet=1: graph policies: items per packet in the chain graph's queues (1..1024); one item is already "
           "tens to hundreds of µs of work (a ferret query ~0.85 ms, a dedup chunk ~60 µs)\n" +
           capacity_parameter(std::to_string(chain_shape{}.capacity) + " packets per queue",
                              "graph policies only (the chain graph's queues)");
}

queue_sizing chain_sizing(const chain_shape& shape) {
    return {shape.capacity_given ? std::optional<std::size_t>(shape.capacity) : std::nullopt, {}};
}

chain_shape take_chain_parameters(const run_request& request, param_set& params, const std::string& workload) {
    chain_shape shape;
    if (!is_graph_policy(request.policy)) {
        for (const std::string& key : keys_of(chain_parameters()))
            if (auto v = params.take_string(key))
                throw std::invalid_argument("--param " + key + "=" + *v + ": only the graph policies take it (the " +
                                            workload + " chain graph's queues); policy '" + request.policy + "' runs " +
                                            workload + " as a pipe_while loop");
        return shape;
    }
    // A graph policy's own parameter wins over a pipe_while parameter of the same name: look for the
    // pipe_while keys only among what the graph policies leave.
    param_set probe = params;
    (void)graph_options_from(request, probe);
    for (const std::string& key : keys_of(pipeline_parameters))
        if (auto v = probe.take_string(key))
            throw std::invalid_argument("--param " + key + "=" + *v + ": a pipe_while parameter; graph policy '" +
                                        request.policy + "' runs " + workload +
                                        " as a chain graph, which does not use it (its queues take packet and "
                                        "capacity)");
    shape.packet = params.take_uint("packet", shape.packet, 1, 1024);
    if (const auto n = take_capacity(params)) {
        shape.capacity = *n;
        shape.capacity_given = true;
    }
    return shape;
}

graph::queue_shape chain_queue(const chain_shape& shape) {
    graph::queue_shape q;
    q.packet_elements = shape.packet;
    q.capacity_packets = shape.capacity;
    q.ordered = true;   // every queue, or items could overtake each other before the output stage
    return q;
}

void reject_unknown_for_graph(const run_request& request, const param_set& params, const std::string& workload) {
    param_set probe = params;
    (void)graph_options_from(request, probe);
    probe.reject_unknown(workload);
}

}   // namespace pipescope::workloads
