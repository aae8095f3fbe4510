#include <pipescope/workloads/workload.hpp>

#include <charconv>
#include <stdexcept>

namespace pipescope::workloads {

param_set param_set::parse(const std::vector<std::string>& key_values) {
    std::map<std::string, std::string> values;
    for (const auto& kv : key_values) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--param '" + kv + "': expected key=value");
        values[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return param_set(std::move(values));
}

std::uint64_t param_set::take_uint(const std::string& key, std::uint64_t fallback, std::uint64_t min, std::uint64_t max) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string text = it->second;
    values_.erase(it);
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size())
        throw std::invalid_argument("--param " + key + "=" + text + ": not a non-negative integer");
    if (v < min || v > max)
        throw std::invalid_argument("--param " + key + "=" + text + ": must be between " + std::to_string(min) + " and " +
                                    std::to_string(max));
    return v;
}

bool param_set::take_bool(const std::string& key, bool fallback) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string text = it->second;
    values_.erase(it);
    if (text == "on" || text == "true" || text == "1" || text == "yes") return true;
    if (text == "off" || text == "false" || text == "0" || text == "no") return false;
    throw std::invalid_argument("--param " + key + "=" + text + ": expected on or off");
}

std::optional<std::string> param_set::take_string(const std::string& key) {
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    std::string v = it->second;
    values_.erase(it);
    if (v.empty()) throw std::invalid_argument("--param " + key + "=: must not be empty");
    return v;
}

void param_set::reject_unknown(const std::string& workload) const {
    if (values_.empty()) return;
    std::string keys;
    for (const auto& [k, v] : values_) keys += (keys.empty() ? "" : ", ") + k;
    throw std::invalid_argument("unknown parameter(s) for " + workload + ": " + keys +
                                " (see `pipescope list` for the parameters each workload takes)");
}

input_size parse_size(const std::string& name) {
    if (name == "tiny") return input_size::tiny;
    if (name == "small") return input_size::small;
    if (name == "large") return input_size::large;
    throw std::invalid_argument("--size " + name + ": expected tiny, small or large");
}

const char* size_name(input_size s) {
    switch (s) {
        case input_size::tiny: return "tiny";
        case input_size::small: return "small";
        case input_size::large: return "large";
    }
    return "?";
}

pipeline_options pipeline_options_from(const run_request& request, param_set& params) {
    pipeline_options o;
    o.policy = request.policy;
    o.cancel = request.cancel;
    o.throttle = static_cast<unsigned>(params.take_uint("K", 0, 0, 1u << 20));
    o.lazy_enabling = params.take_bool("lazy", true);
    o.dependency_folding = params.take_bool("folding", true);
    // bind-to-stage (seed 000 §2.1, §4.1): c threads per parallel stage (0: P), Queue_size (0: 20).
    o.stage_threads = static_cast<unsigned>(params.take_uint("c", 0, 0, 1024));
    o.queue_size = static_cast<unsigned>(params.take_uint("queue", 0, 0, 1u << 20));
    return o;
}

}   // namespace pipescope::workloads
