// graph::run: checks the program and the options, and hands the run to the policy that schedules it.
#include "engine.hpp"
#include "../cancel_on_stop.hpp"
#include "../loop_listener.hpp"
#include "../policy_registry.hpp"

#include <optional>

namespace pipescope::graph {

namespace detail {

policy_params::policy_params(std::string policy, std::vector<std::pair<std::string, std::string>> values)
    : policy_(std::move(policy)) {
    for (auto& [k, v] : values) {
        if (k.empty()) throw std::invalid_argument("graph policy '" + policy_ + "': a parameter without a name");
        values_[k] = std::move(v);
    }
}

namespace {
[[noreturn]] void bad_value(const std::string& policy, const std::string& key, const std::string& value,
                            const std::string& expected) {
    throw std::invalid_argument("graph policy '" + policy + "': " + key + "=" + value + " is not " + expected);
}
}   // namespace

std::uint64_t policy_params::take_uint(const std::string& key, std::uint64_t fallback, std::uint64_t min,
                                       std::uint64_t max) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string v = it->second;
    values_.erase(it);
    std::size_t used = 0;
    unsigned long long n = 0;
    try {
        n = std::stoull(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const std::string range = "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (v.empty() || used != v.size() || v[0] == '-' || n < min || n > max) bad_value(policy_, key, v, range);
    return n;
}

double policy_params::take_double(const std::string& key, double fallback, double min, double max) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string v = it->second;
    values_.erase(it);
    std::size_t used = 0;
    double d = 0;
    try {
        d = std::stod(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (v.empty() || used != v.size() || !(d >= min && d <= max))
        bad_value(policy_, key, v, "a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return d;
}

std::string policy_params::take_choice(const std::string& key, const std::string& fallback,
                                       const std::vector<std::string>& choices) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string v = it->second;
    values_.erase(it);
    std::string all;
    for (const std::string& c : choices) {
        if (c == v) return v;
        all += (all.empty() ? "" : ", ") + c;
    }
    bad_value(policy_, key, v, "one of " + all);
}

std::optional<std::string> policy_params::take_string(const std::string& key) {
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    std::string v = it->second;
    values_.erase(it);
    if (v.empty()) bad_value(policy_, key, v, "a non-empty text");
    return v;
}

void policy_params::reject_unknown() const {
    if (values_.empty()) return;
    std::string keys;
    for (const auto& [k, v] : values_) keys += (keys.empty() ? "" : ", ") + k;
    throw std::invalid_argument("graph policy '" + policy_ + "' has no parameter " + keys);
}

}   // namespace detail

namespace {

// The graph schedulers: one folder each (policy_registry.hpp). Built on first use, so that no static
// initializer depends on another translation unit's.
const pipescope::detail::policy_registry<detail::policy_entry>& registry() {
    static const pipescope::detail::policy_registry<detail::policy_entry> r("graph::run: unknown graph policy",
                                                                            detail::graph_policy_folders());
    return r;
}

}   // namespace

std::vector<policy_info> policies() {
    std::vector<policy_info> out;
    for (const detail::policy_entry* p : registry()) out.push_back({p->name, p->summary, p->parameters, p->capacity});
    return out;
}

std::vector<bool> unbounded_queues(const program& g, const run_options& options, unsigned workers) {
    g.validate();
    const detail::policy_entry& entry = registry().find(options.policy);
    detail::policy_params params(options.policy, options.params);
    const detail::engine_config c = entry.make(params, options.seed)->configure(g, workers == 0 ? 1 : workers);
    params.reject_unknown();
    std::vector<bool> out;
    for (queue_id q = 0; q < g.queues().size(); ++q)
        out.push_back(c.bounds == detail::queue_bounds::unbounded ||
                      (c.bounds == detail::queue_bounds::backward_unbounded && g.backward(q)));
    return out;
}

run_stats run(scheduler& s, const program& g, const run_options& options) {
    g.validate();
    const detail::policy_entry& entry = registry().find(options.policy);
    detail::policy_params params(options.policy, options.params);
    std::unique_ptr<detail::graph_policy> policy = entry.make(params, options.seed);
    params.reject_unknown();
    // A recording session makes the run a run of its trace (trace_session.hpp): it begins before the
    // engine exists, so the engine sees the recorder, and ends after the engine's last work.
    pipescope::detail::loop_scope loop(s.impl(), {.graph = &g, .graph_options = &options});
    return loop.run([&] {
        detail::graph_engine engine(s, g, policy->configure(g, s.workers()));
        {
            // Destroyed before the engine: ~stop_callback waits for a callback running elsewhere.
            const std::stop_callback on_cancel(options.cancel, pipescope::detail::cancel_engine{&engine});
            policy->run(engine);
        }
        engine.rethrow_if_failed();
        return engine.stats();
    });
}

}   // namespace pipescope::graph
