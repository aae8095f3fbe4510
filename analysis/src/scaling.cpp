// Scaling sweeps: rows from run reports, the manifest's JSON, the chart's axes (scaling.hpp).
#include <pipescope/analysis/scaling.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipescope::analysis {

using json = nlohmann::json;

std::vector<std::string> scale_sweep::policies() const {
    std::vector<std::string> out;
    for (const scale_row& r : rows)
        if (std::find(out.begin(), out.end(), r.policy) == out.end()) out.push_back(r.policy);
    return out;
}

scale_row scale_row_of(const run_report& r, double serial_ns) {
    scale_row row;
    row.policy = r.meta.policy;
    row.workers = r.meta.virtual_run ? r.meta.virtual_run->workers : r.meta.workers;
    row.makespan_ns = static_cast<double>(r.makespan());
    row.speedup = row.makespan_ns > 0 ? serial_ns / row.makespan_ns : 0;
    row.efficiency = row.workers ? row.speedup / static_cast<double>(row.workers) : 0;
    // The cores' idle share, not the tracks' (run_breakdown::core_share): bind-to-stage's threads
    // outnumber its P virtual cores. Untraced time is idle too: a worker parked before the run
    // started records nothing until woken.
    const run_breakdown& b = r.breakdown;
    row.idle_share = b.span ? std::clamp(1.0 - b.core_share(b.busy_ns(), row.workers), 0.0, 1.0) : 0;
    row.steals = r.stats.steals_made;
    row.peak_live = r.stats.peak_live;
    row.peak_footprint = r.stats.peak_footprint;
    return row;
}

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The field `key` of object `j` (`where` names it in errors: "rows[3]").
const json& field(const json& j, const char* key, const std::string& where) {
    if (!j.is_object()) throw std::runtime_error(fmt::format("{}: expected an object", where));
    const auto it = j.find(key);
    if (it == j.end()) throw std::runtime_error(fmt::format("{}.{}: missing", where, key));
    return *it;
}
double number_at(const json& j, const char* key, const std::string& where) {
    const json& v = field(j, key, where);
    if (!v.is_number()) throw std::runtime_error(fmt::format("{}.{}: expected a number", where, key));
    return v.get<double>();
}
std::string text_at(const json& j, const char* key, const std::string& where) {
    const json& v = field(j, key, where);
    if (!v.is_string()) throw std::runtime_error(fmt::format("{}.{}: expected a string", where, key));
    return v.get<std::string>();
}
std::optional<double> optional_at(const json& j, const char* key, const std::string& where) {
    const json& v = field(j, key, where);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) throw std::runtime_error(fmt::format("{}.{}: expected a number or null", where, key));
    return v.get<double>();
}
const json& array_at(const json& j, const char* key, const std::string& where) {
    const json& v = field(j, key, where);
    if (!v.is_array()) throw std::runtime_error(fmt::format("{}.{}: expected an array", where, key));
    return v;
}

}   // namespace

json to_json(const scale_sweep& s) {
    json rows = json::array();
    for (const scale_row& r : s.rows)
        rows.push_back({{"policy", r.policy},
                        {"workers", r.workers},
                        {"makespan_ns", r.makespan_ns},
                        {"speedup", r.speedup},
                        {"efficiency", r.efficiency},
                        {"idle_share", r.idle_share},
                        {"steals", r.steals},
                        {"peak_live", optional_number(r.peak_live)},
                        {"peak_footprint", optional_number(r.peak_footprint)},
                        {"trace", r.trace}});
    json refused = json::array();
    for (const scale_refusal& r : s.refused) refused.push_back({{"policy", r.policy}, {"reason", r.reason}});
    return {{"format", scale_format},
            {"workload", s.workload},
            {"size", s.size},
            {"seed", s.seed},
            {"params", s.params},
            {"serial_ns", s.serial_ns},
            {"serial_samples_ns", s.serial_samples_ns},
            {"rows", rows},
            {"refused", refused},
            {"plot", {{"svg", s.svg}, {"png", s.png}}}};
}

scale_sweep sweep_from_json(const json& j) {
    if (text_at(j, "format", "manifest") != scale_format)
        throw std::runtime_error(fmt::format("manifest.format: expected \"{}\"", scale_format));
    scale_sweep s;
    s.workload = text_at(j, "workload", "manifest");
    s.size = text_at(j, "size", "manifest");
    s.seed = static_cast<std::uint64_t>(number_at(j, "seed", "manifest"));
    for (const json& p : array_at(j, "params", "manifest"))
        if (p.is_string()) s.params.push_back(p.get<std::string>());
    s.serial_ns = number_at(j, "serial_ns", "manifest");
    if (j.contains("serial_samples_ns"))   // manifests before it had one measurement
        for (const json& v : array_at(j, "serial_samples_ns", "manifest"))
            if (v.is_number()) s.serial_samples_ns.push_back(v.get<double>());
    const json& rows = array_at(j, "rows", "manifest");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string where = fmt::format("rows[{}]", i);
        scale_row r;
        r.policy = text_at(rows[i], "policy", where);
        const double workers = number_at(rows[i], "workers", where);
        if (workers < 1) throw std::runtime_error(fmt::format("{}.workers: expected at least 1", where));
        r.workers = static_cast<std::uint64_t>(workers);
        r.makespan_ns = number_at(rows[i], "makespan_ns", where);
        r.speedup = number_at(rows[i], "speedup", where);
        r.efficiency = number_at(rows[i], "efficiency", where);
        r.idle_share = number_at(rows[i], "idle_share", where);
        r.steals = static_cast<std::uint64_t>(number_at(rows[i], "steals", where));
        r.peak_live = optional_at(rows[i], "peak_live", where);
        r.peak_footprint = optional_at(rows[i], "peak_footprint", where);
        r.trace = text_at(rows[i], "trace", where);
        s.rows.push_back(std::move(r));
    }
    const json& refused = array_at(j, "refused", "manifest");
    for (std::size_t i = 0; i < refused.size(); ++i) {
        const std::string where = fmt::format("refused[{}]", i);
        s.refused.push_back({text_at(refused[i], "policy", where), text_at(refused[i], "reason", where)});
    }
    const json& plot = field(j, "plot", "manifest");
    s.svg = text_at(plot, "svg", "manifest.plot");
    s.png = text_at(plot, "png", "manifest.plot");
    return s;
}

namespace {

double floor_pow2(double v) { return std::exp2(std::floor(std::log2(v))); }
double ceil_pow2(double v) { return std::exp2(std::ceil(std::log2(v))); }

double log2_fraction(double v, double lo, double hi) {
    if (v <= 0 || hi <= lo) return 0;
    return (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo));
}

std::vector<double> powers_of_two(double lo, double hi) {
    std::vector<double> out;
    for (double v = lo; v <= hi * 1.000001; v *= 2) out.push_back(v);
    return out;
}

}   // namespace

double scale_axes::at_x(double p) const { return log2_fraction(p, x_lo, x_hi); }
double scale_axes::at_y(double speedup) const { return log2_fraction(speedup, y_lo, y_hi); }
std::vector<double> scale_axes::x_ticks() const { return powers_of_two(x_lo, x_hi); }
std::vector<double> scale_axes::y_ticks() const { return powers_of_two(y_lo, y_hi); }

scale_axes axes_of(const scale_sweep& s) {
    scale_axes a;
    if (s.rows.empty()) return a;
    double p_lo = 1e300, p_hi = 0, s_lo = 1, s_hi = 1;
    for (const scale_row& r : s.rows) {
        p_lo = std::min(p_lo, static_cast<double>(r.workers));
        p_hi = std::max(p_hi, static_cast<double>(r.workers));
        if (r.speedup > 0) {
            s_lo = std::min(s_lo, r.speedup);
            s_hi = std::max(s_hi, r.speedup);
        }
    }
    a.x_lo = floor_pow2(p_lo);
    a.x_hi = std::max(ceil_pow2(p_hi), a.x_lo * 2);
    // The ideal line runs from (x_lo, x_lo) to (x_hi, x_hi): the speedup axis covers it too.
    a.y_lo = std::min(floor_pow2(s_lo), a.x_lo);
    a.y_hi = std::max({ceil_pow2(s_hi), a.x_hi, a.y_lo * 2});
    return a;
}

}   // namespace pipescope::analysis
