// The scheduler's costs as a table (cost_table.hpp).
#include <pipescope/recording/cost_table.hpp>

#include <pipescope/trace/trace_file.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <stdexcept>

namespace pipescope::recording {

namespace {

// Ten seconds: far above any scheduler step; a larger value is a typo (ms or µs written as ns x 1000).
constexpr std::uint64_t max_cost_ns = 10'000'000'000ull;

std::optional<std::uint64_t> parse_ns(std::string_view text) {
    if (text.empty() || text.size() > 12) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (v > max_cost_ns) return std::nullopt;
    return v;
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_reason(const nlohmann::json::exception& e) {
    std::string_view w = e.what();
    if (w.starts_with("[json.exception.")) {
        const auto end = w.find("] ");
        if (end != std::string_view::npos) w.remove_prefix(end + 2);
    }
    return std::string(w);
}

std::string known_names() {
    std::string out;
    for (const cost_entry& e : cost_entries()) out += (out.empty() ? "" : ", ") + std::string(e.name);
    return out;
}

}   // namespace

const cost_entry* find_cost(std::string_view name) {
    for (const cost_entry& e : cost_entries())
        if (name == e.name) return &e;
    return nullptr;
}

nlohmann::json costs_json(const virtual_costs& c) {
    nlohmann::json out = nlohmann::json::object();
    for (const cost_entry& e : cost_entries()) out[e.name] = c.*e.field;
    return out;
}

nlohmann::json read_cost_file(const std::filesystem::path& path, virtual_costs& costs) {
    // Opened as the traces are (trace_file.hpp): "cannot open F: no such file or directory",
    // "F: is a directory (not a regular file)", never a FIFO that blocks.
    const trace::mapped_file file(path);
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(file.bytes());
    } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(fmt::format("{}: not JSON, at byte {} of {}: {}", path.string(),
                                             std::min<std::size_t>(e.byte, file.size()), file.size(), json_reason(e)));
    } catch (const nlohmann::json::out_of_range& e) {   // 1e400: no double holds it
        throw std::runtime_error(fmt::format("{}: a number is out of range ({})", path.string(), json_reason(e)));
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("{}: not readable JSON: {}", path.string(), json_reason(e)));
    }
    if (!doc.is_object() || !doc.contains("costs_ns") || !doc["costs_ns"].is_object())
        throw std::runtime_error(fmt::format("{}: expected a JSON object with a \"costs_ns\" object, e.g. "
                                             "{{\"costs_ns\": {{\"steal\": 300}}}}",
                                             path.string()));
    nlohmann::json taken = nlohmann::json::object();
    for (const auto& [name, value] : doc["costs_ns"].items()) {
        const cost_entry* e = find_cost(name);
        if (!e)
            throw std::runtime_error(
                fmt::format("{}: costs_ns.{}: unknown cost (known: {})", path.string(), name, known_names()));
        if (!value.is_number_unsigned() || value.get<std::uint64_t>() > max_cost_ns)
            throw std::runtime_error(fmt::format("{}: costs_ns.{}: {} is not a whole number of ns up to {}", path.string(),
                                                 name, value.dump(), max_cost_ns));
        costs.*e->field = value.get<std::uint64_t>();
        taken[name] = value;
    }
    return taken;
}

namespace {

// "steal_ns=300" -> the steal entry and 300; nullptr when the key names no cost.
std::pair<const cost_entry*, std::optional<std::uint64_t>> cost_param(const std::string& kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return {nullptr, std::nullopt};
    const std::string_view key = std::string_view(kv).substr(0, eq);
    if (key.size() <= 3 || !key.ends_with("_ns")) return {nullptr, std::nullopt};
    return {find_cost(key.substr(0, key.size() - 3)), parse_ns(std::string_view(kv).substr(eq + 1))};
}

}   // namespace

std::vector<std::string> take_cost_params(std::vector<std::string>& params) {
    std::vector<std::string> costs, rest;
    for (const std::string& kv : params) {
        const auto [entry, value] = cost_param(kv);
        if (!entry) {
            rest.push_back(kv);
            continue;
        }
        if (!value)
            throw std::invalid_argument(fmt::format("--param {}: expected a whole number of ns up to {}", kv, max_cost_ns));
        costs.push_back(kv);
    }
    params = std::move(rest);
    return costs;
}

nlohmann::json apply_cost_params(const std::vector<std::string>& cost_params, virtual_costs& costs) {
    nlohmann::json taken = nlohmann::json::object();
    for (const std::string& kv : cost_params) {
        const auto [entry, value] = cost_param(kv);
        if (!entry || !value) throw std::invalid_argument(fmt::format("--param {}: not a scheduler cost", kv));
        costs.*entry->field = *value;
        taken[entry->name] = *value;
    }
    return taken;
}

std::filesystem::path default_calibration_path() {
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
        return std::filesystem::path(xdg) / "pipescope" / "calibration.json";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".config" / "pipescope" / "calibration.json";
    return {};
}

}   // namespace pipescope::recording
