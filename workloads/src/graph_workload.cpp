// Shared parts of the stage-graph workloads (graph_workload.hpp).
#include <pipescope/workloads/graph_workload.hpp>

#include <pipescope/trace_session.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

namespace pipescope::workloads {

namespace {

// The keys of "key=default: meaning" lines.
std::set<std::string> parameter_keys(const std::string& lines) {
    std::set<std::string> keys;
    std::size_t at = 0;
    while (at < lines.size()) {
        std::size_t end = lines.find('\n', at);
        if (end == std::string::npos) end = lines.size();
        const std::string line = lines.substr(at, end - at);
        if (const auto eq = line.find('='); eq != std::string::npos && eq > 0) keys.insert(line.substr(0, eq));
        at = end + 1;
    }
    return keys;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Who reserves `packets` at once in q (a producer's declared output, or the consumer's input plus
// its peek), for the refusal of a smaller capacity.
std::string who_reserves(const graph::program& g, graph::queue_id q, std::size_t packets) {
    for (graph::stage_id s : g.producers(q))
        for (const graph::output_spec& o : g.stages()[s].outputs)
            if (o.queue == q && o.max_packets == packets)
                return "stage '" + g.stages()[s].name + "' reserves " + std::to_string(packets) + " at once";
    const graph::stage_spec& reader = g.stages()[g.consumer(q)];
    return "stage '" + reader.name + "' reads a packet and peeks " + std::to_string(reader.peek) + " elements past it";
}

}   // namespace

bool is_policy_parameter(const std::string& key) {
    if (parameter_keys(pipeline_parameters).count(key)) return true;
    for (const auto& p : graph::policies())
        if (parameter_keys(p.parameters).count(key)) return true;
    return false;
}

bool policy_takes_parameter(const std::string& policy, const std::string& key) {
    for (const auto& p : graph::policies())
        if (p.name == policy) return parameter_keys(p.parameters).count(key) > 0;
    return parameter_keys(pipeline_parameters).count(key) > 0;
}

std::vector<std::string> program_parameters(const std::vector<std::string>& key_values) {
    std::vector<std::string> out;
    for (const std::string& kv : key_values)
        if (!is_policy_parameter(kv.substr(0, kv.find('=')))) out.push_back(kv);
    return out;
}

std::vector<std::string> all_policy_names() {
    std::vector<std::string> names;
    for (const auto& p : pipeline_policies()) names.push_back(p.name);
    for (const auto& p : graph::policies()) names.push_back(p.name);
    return names;
}

bool is_graph_policy(const std::string& policy) {
    for (const auto& p : graph::policies())
        if (p.name == policy) return true;
    return false;
}

std::string workload::cannot_run_under(const std::string& policy) const {
    if (is_graph_policy(policy)) {
        if (!is_graph() && !has_chain_graph())
            return "it is a pipe_while loop with no stage-graph form (ferret and dedup have one); the graph policies "
                   "run stage graphs";
    } else if (is_graph()) {
        return graph_only(policy);
    }
    return refuses(policy);
}

graph::run_options graph_options_from(const run_request& request, param_set& params) {
    graph::run_options o;
    o.policy = request.policy;
    o.seed = request.seed;
    o.cancel = request.cancel;
    std::set<std::string> keys;
    for (const auto& p : graph::policies())
        for (const std::string& k : parameter_keys(p.parameters)) keys.insert(k);
    for (const std::string& k : keys)
        if (auto v = params.take_string(k)) o.params.emplace_back(k, *v);
    return o;
}

std::string graph_policy_parameters() {
    std::string out;
    for (const auto& p : graph::policies()) {
        std::size_t at = 0;
        const std::string& lines = p.parameters;
        while (at < lines.size()) {
            std::size_t end = lines.find('\n', at);
            if (end == std::string::npos) end = lines.size();
            if (end > at) {
                const std::string line = lines.substr(at, end - at);
                const auto colon = line.find(": ");
                out +=
                    (out.empty() ? "" : "\n") +
                    (colon == std::string::npos ? line : line.substr(0, colon + 2) + p.name + ": " + line.substr(colon + 2));
            }
            at = end + 1;
        }
    }
    return out;
}

std::string graph_only(const std::string& policy) {
    if (is_graph_policy(policy)) return {};
    std::string names;
    for (const auto& p : graph::policies()) names += (names.empty() ? "" : ", ") + p.name;
    return "it is a stage graph (stages joined by queues, not a pipe_while loop); graph policies run it: " + names;
}

std::optional<std::size_t> take_capacity(param_set& params, std::size_t max) {
    if (param_set probe = params; !probe.take_string("capacity")) return std::nullopt;
    return static_cast<std::size_t>(params.take_uint("capacity", 0, 1, max));
}

std::string capacity_parameter(const std::string& application, const std::string& bounds, std::size_t max) {
    std::string per_thread, others;
    for (const auto& p : graph::policies()) {
        std::string& names = p.capacity == graph::capacity_rule::per_thread ? per_thread : others;
        names += (names.empty() ? "" : ", ") + p.name;
    }
    return "capacity=<" + per_thread +
           ": max(P·T, C·T) packets, P and C the packets a producer and the consumer of the queue reserve at once, T "
           "the run's workers, virtual ones included (seed 002 §IV-A); " +
           others + ": the application's, " + application +
           " (GRAMPS: the application sizes each queue, seed 004 §II-C)>: packets every queue holds instead of the "
           "rule, 1 to " +
           std::to_string(max) + "; " + bounds;
}

unsigned request_workers(const run_request& request) {
    return request.workers != 0 ? request.workers : std::max(1u, std::thread::hardware_concurrency());
}

graph::program sized_program(const graph::program& g, const std::string& policy, unsigned workers,
                             const queue_sizing& sizing) {
    g.validate();
    graph::capacity_rule rule = graph::capacity_rule::application;
    for (const auto& p : graph::policies())
        if (p.name == policy) rule = p.capacity;
    graph::program out = g;
    for (graph::queue_id q = 0; q < g.queues().size(); ++q) {
        std::size_t packets = graph::rule_capacity(g, q, rule, workers);
        if (sizing.capacity) {
            packets = *sizing.capacity;
            if (const std::size_t need = graph::packets_at_once(g, q); packets < need)
                throw std::invalid_argument("--param capacity=" + std::to_string(packets) + ": queue '" +
                                            g.queues()[q].name + "' needs at least " + std::to_string(need) +
                                            " packets: " + who_reserves(g, q, need));
        }
        if (q < sizing.floors.size()) packets = std::max(packets, sizing.floors[q]);
        out.set_capacity(q, packets);
    }
    return out;
}

program_info describe_graph(const graph::program& declared, const run_request& request, std::string shape,
                            const std::vector<std::string>& stage_notes, const queue_sizing& sizing) {
    const graph::program g = sized_program(declared, request.policy, request_workers(request), sizing);
    program_info p;
    p.kind = "graph";
    p.shape = std::move(shape);
    for (std::size_t s = 0; s < g.stages().size(); ++s) {
        const graph::stage_spec& st = g.stages()[s];
        p.stages.push_back({st.name, st.kind == graph::stage_kind::serial ? "serial" : "parallel",
                            s < stage_notes.size() ? stage_notes[s] : std::string()});
    }
    param_set params = request.params;   // a copy: the run takes its own
    std::vector<bool> unbounded;
    if (is_graph_policy(request.policy)) {
        graph::run_options o = graph_options_from(request, params);
        unbounded = graph::unbounded_queues(g, o);
        p.graph_json = graph_program_json(g, o);
    }
    p.counters = graph::counter_names(g);
    for (graph::queue_id q = 0; q < g.queues().size(); ++q) {
        const graph::queue_spec& spec = g.queues()[q];
        queue_info qi;
        qi.name = spec.name;
        qi.element_bytes = spec.element_size;
        qi.packet_elements = spec.shape.packet_elements;
        qi.capacity_packets = spec.shape.capacity_packets;
        qi.ordered = spec.shape.ordered;
        qi.backward = g.backward(q);
        qi.unbounded = q < unbounded.size() && unbounded[q];
        for (graph::stage_id s : g.producers(q)) qi.producers.push_back(s);
        qi.consumer = g.consumer(q);
        qi.counter = p.counters[q];
        p.queues.push_back(std::move(qi));
    }
    return p;
}

void run_graph_workload(const std::string& workload, scheduler& s, run_request& request, param_set& params,
                        const graph::program& declared, const std::function<void()>& reference,
                        const std::function<void()>& reset, run_report& report, const queue_sizing& sizing) {
    const graph::run_options options = graph_options_from(request, params);
    params.reject_unknown(workload);
    request.workers = s.workers();
    const graph::program g = sized_program(declared, request.policy, request.workers, sizing);
    auto t0 = std::chrono::steady_clock::now();
    throw_if_cancelled(request.cancel);
    reference();
    report.reference_seconds = seconds_since(t0);
    if (reset) reset();
    throw_if_cancelled(request.cancel);   // references that do not check it stop here
    if (request.on_measured_start) request.on_measured_start(report.reference_seconds);
    t0 = std::chrono::steady_clock::now();
    report.graph = graph::run(s, g, options);
    if (request.on_measured_end) request.on_measured_end();
    report.seconds = seconds_since(t0);
    report.stats.cancelled = report.graph->cancelled;
}

}   // namespace pipescope::workloads
