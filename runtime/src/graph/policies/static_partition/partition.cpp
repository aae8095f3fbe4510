// The static policy's partitioner and profile reader (partition.hpp).
#include "partition.hpp"

#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace pipescope::graph::detail {

std::vector<stage_edge> stage_edges(const program& g) {
    std::vector<stage_edge> out;
    for (queue_id q = 0; q < g.queues().size(); ++q) {
        const stage_id c = g.consumer(q);
        for (stage_id p : g.producers(q)) out.push_back({p, c});
    }
    return out;
}

std::vector<double> effective_costs(const std::vector<double>& costs) {
    double sum = 0;
    for (std::size_t s = 0; s < costs.size(); ++s) {
        if (!std::isfinite(costs[s]) || costs[s] < 0)
            throw std::invalid_argument("partition: the cost of stage " + std::to_string(s) + " is " +
                                        std::to_string(costs[s]) + "; costs must be finite and >= 0");
        sum += costs[s];
    }
    if (sum <= 0) return std::vector<double>(costs.size(), 1.0);
    const double floor = 0.01 * sum / static_cast<double>(costs.size());
    std::vector<double> out(costs);
    for (double& c : out) c = std::max(c, floor);
    return out;
}

std::size_t cut_edges(const std::vector<unsigned>& assignment, const std::vector<stage_edge>& edges) {
    std::size_t n = 0;
    for (const stage_edge& e : edges) n += assignment.at(e.producer) != assignment.at(e.consumer);
    return n;
}

std::vector<double> worker_loads(const std::vector<double>& costs, const std::vector<unsigned>& assignment,
                                 unsigned workers) {
    const std::vector<double> c = effective_costs(costs);
    std::vector<double> load(workers, 0.0);
    for (std::size_t s = 0; s < c.size(); ++s) load.at(assignment.at(s)) += c[s];
    return load;
}

namespace {

// The refinement of step 2: moves and swaps that strictly lower the cut within the load limit.
class refiner {
public:
    refiner(const std::vector<double>& cost, const std::vector<stage_edge>& edges, std::vector<unsigned>& where,
            std::vector<double>& load, double limit)
        : cost_(cost), where_(where), load_(load), limit_(limit), adjacent_(cost.size()) {
        for (const stage_edge& e : edges) {
            if (e.producer == e.consumer) continue;   // a stage feeding itself is never cut
            adjacent_[e.producer].push_back(e.consumer);
            adjacent_[e.consumer].push_back(e.producer);
        }
    }

    void run() {
        // Each applied change lowers the cut by at least one, so this ends; the bound is a guard.
        for (std::size_t pass = 0; pass <= cost_.size() * cost_.size() + 1; ++pass)
            if (!improve_once()) return;
    }

private:
    // Change of the cut if stage s alone moved to worker b.
    long move_delta(stage_id s, unsigned b) const {
        long d = 0;
        for (stage_id t : adjacent_[s]) d += static_cast<long>(where_[t] != b) - static_cast<long>(where_[t] != where_[s]);
        return d;
    }

    struct change {
        long gain = 0;
        double worst_load = 0;   // the larger of the two loads it touches, afterwards
        stage_id s = 0, t = 0;
        unsigned to = 0;
        bool swap = false;
    };
    static bool better(const change& a, const change& b) {
        if (a.gain != b.gain) return a.gain > b.gain;
        if (a.worst_load != b.worst_load) return a.worst_load < b.worst_load;
        if (a.swap != b.swap) return !a.swap;
        if (a.s != b.s) return a.s < b.s;
        if (a.to != b.to) return a.to < b.to;
        return a.t < b.t;
    }
    bool fits(double l) const { return l <= limit_ * (1 + 1e-12); }

    bool improve_once() {
        bool changed = false;
        for (stage_id s = 0; s < cost_.size(); ++s) {
            const unsigned a = where_[s];
            std::vector<unsigned> targets;
            for (stage_id t : adjacent_[s])
                if (where_[t] != a && std::find(targets.begin(), targets.end(), where_[t]) == targets.end())
                    targets.push_back(where_[t]);
            std::sort(targets.begin(), targets.end());
            bool found = false;
            change best;
            for (unsigned b : targets) {
                const long move = move_delta(s, b);
                if (move < 0 && fits(load_[b] + cost_[s])) {
                    change c;
                    c.gain = -move;
                    c.worst_load = std::max(load_[b] + cost_[s], load_[a] - cost_[s]);
                    c.s = s;
                    c.to = b;
                    if (!found || better(c, best)) best = c, found = true;
                }
                for (stage_id t = 0; t < cost_.size(); ++t) {
                    if (where_[t] != b) continue;
                    const double la = load_[a] - cost_[s] + cost_[t], lb = load_[b] - cost_[t] + cost_[s];
                    if (!fits(la) || !fits(lb)) continue;
                    where_[s] = b;   // evaluate t's move with s already over there
                    const long total = move + move_delta(t, a);
                    where_[s] = a;
                    if (total >= 0) continue;
                    change c;
                    c.gain = -total;
                    c.worst_load = std::max(la, lb);
                    c.s = s;
                    c.t = t;
                    c.to = b;
                    c.swap = true;
                    if (!found || better(c, best)) best = c, found = true;
                }
            }
            if (!found) continue;
            load_[a] -= cost_[s];
            load_[best.to] += cost_[s];
            where_[s] = best.to;
            if (best.swap) {
                load_[best.to] -= cost_[best.t];
                load_[a] += cost_[best.t];
                where_[best.t] = a;
            }
            changed = true;
        }
        return changed;
    }

    const std::vector<double>& cost_;
    std::vector<unsigned>& where_;
    std::vector<double>& load_;
    double limit_;
    std::vector<std::vector<stage_id>> adjacent_;
};

void check_edges(const std::vector<stage_edge>& edges, std::size_t stages) {
    for (const stage_edge& e : edges)
        if (e.producer >= stages || e.consumer >= stages)
            throw std::invalid_argument("partition: an edge names stage " +
                                        std::to_string(std::max(e.producer, e.consumer)) + ", but there are " +
                                        std::to_string(stages) + " stages");
}

}   // namespace

std::vector<unsigned> balance_stages(const std::vector<double>& costs, unsigned workers) {
    if (costs.empty()) throw std::invalid_argument("partition: no stages");
    if (workers == 0) throw std::invalid_argument("partition: no workers");
    const std::vector<double> cost = effective_costs(costs);
    std::vector<stage_id> by_cost(cost.size());
    std::iota(by_cost.begin(), by_cost.end(), stage_id{0});
    std::stable_sort(by_cost.begin(), by_cost.end(), [&](stage_id a, stage_id b) { return cost[a] > cost[b]; });
    std::vector<unsigned> where(cost.size(), 0);
    std::vector<double> load(workers, 0.0);
    std::vector<std::size_t> count(workers, 0);
    for (stage_id s : by_cost) {
        unsigned best = 0;
        for (unsigned w = 1; w < workers; ++w)
            if (load[w] < load[best] || (load[w] == load[best] && count[w] < count[best])) best = w;
        where[s] = best;
        load[best] += cost[s];
        ++count[best];
    }
    return where;
}

std::vector<unsigned> partition_stages(const std::vector<double>& costs, const std::vector<stage_edge>& edges,
                                       unsigned workers, double imbalance) {
    if (!(imbalance >= 0)) throw std::invalid_argument("partition: the imbalance must be >= 0");
    check_edges(edges, costs.size());
    // 1. Longest processing time first.
    std::vector<unsigned> where = balance_stages(costs, workers);
    const std::vector<double> cost = effective_costs(costs);
    std::vector<double> load(workers, 0.0);
    for (std::size_t s = 0; s < cost.size(); ++s) load[where[s]] += cost[s];

    // 2. Fewer cut edges within (1 + imbalance) of step 1's maximum load.
    const double limit = *std::max_element(load.begin(), load.end()) * (1 + imbalance);
    refiner(cost, edges, where, load, limit).run();
    return where;
}

// ---------------------------------------------------------------------------------------------------
// The data-parallel split (partition.hpp; seed 004 §II-C "filter fusion and fission", §V-C)

std::vector<bool> parallel_stages(const program& g) {
    std::vector<bool> out;
    for (const stage_spec& s : g.stages()) out.push_back(s.kind == stage_kind::parallel);
    return out;
}

std::vector<unsigned> replica_counts(const std::vector<double>& costs, const std::vector<bool>& parallel, unsigned workers) {
    if (parallel.size() != costs.size())
        throw std::invalid_argument("partition: " + std::to_string(parallel.size()) + " stage kinds for " +
                                    std::to_string(costs.size()) + " stages");
    if (workers == 0) throw std::invalid_argument("partition: no workers");
    const std::vector<double> cost = effective_costs(costs);
    const double mean = std::accumulate(cost.begin(), cost.end(), 0.0) / workers;
    std::vector<unsigned> out(cost.size(), 1);
    for (std::size_t s = 0; s < cost.size(); ++s) {
        if (!parallel[s] || cost[s] <= mean) continue;
        // (the tolerance keeps a stage of exactly k means at k pieces despite rounding)
        const double pieces = std::ceil(cost[s] / mean * (1 - 1e-12));
        out[s] = static_cast<unsigned>(std::min(pieces, static_cast<double>(workers)));
    }
    return out;
}

std::vector<std::vector<unsigned>> place_stages(const std::vector<double>& costs, const std::vector<bool>& parallel,
                                                const std::vector<stage_edge>& edges, unsigned workers, double imbalance) {
    if (costs.empty()) throw std::invalid_argument("partition: no stages");
    check_edges(edges, costs.size());
    const std::vector<unsigned> k = replica_counts(costs, parallel, workers);
    const std::vector<double> cost = effective_costs(costs);
    // The items: stage s is pieces first[s] .. first[s] + k[s] - 1, each of an equal share of its cost.
    std::vector<std::size_t> first(cost.size());
    std::vector<double> piece_cost;
    for (std::size_t s = 0; s < cost.size(); ++s) {
        first[s] = piece_cost.size();
        piece_cost.insert(piece_cost.end(), k[s], cost[s] / k[s]);
    }
    // Every piece of a producer feeds every piece of its consumer (the deal is round-robin); a stage
    // feeding itself stays a piece feeding itself, never cut.
    std::vector<stage_edge> piece_edges;
    for (const stage_edge& e : edges) {
        for (unsigned a = 0; a < k[e.producer]; ++a)
            for (unsigned b = 0; b < k[e.consumer]; ++b)
                if (e.producer != e.consumer || a == b)
                    piece_edges.push_back(
                        {static_cast<stage_id>(first[e.producer] + a), static_cast<stage_id>(first[e.consumer] + b)});
    }
    const std::vector<unsigned> where = partition_stages(piece_cost, piece_edges, workers, imbalance);
    std::vector<std::vector<unsigned>> out(cost.size());
    for (std::size_t s = 0; s < cost.size(); ++s) {
        out[s].assign(where.begin() + static_cast<std::ptrdiff_t>(first[s]),
                      where.begin() + static_cast<std::ptrdiff_t>(first[s] + k[s]));
        std::sort(out[s].begin(), out[s].end());   // the turn order: any fixed one will do
        // Every piece on one worker (the refinement joined them to a neighbour): not split after all.
        if (out[s].front() == out[s].back()) out[s].resize(1);
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------
// Costs

std::vector<double> parse_stage_costs(const std::string& text) {
    std::vector<double> out;
    std::size_t begin = 0;
    for (std::size_t k = 1;; ++k) {
        const std::size_t comma = text.find(',', begin);
        std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        const auto first = item.find_first_not_of(' ');
        const auto last = item.find_last_not_of(' ');
        item = first == std::string::npos ? std::string() : item.substr(first, last - first + 1);
        double v = 0;
        const auto r = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || r.ec != std::errc{} || r.ptr != item.data() + item.size() || !std::isfinite(v) || v < 0)
            throw std::invalid_argument("costs=" + text + ": entry " + std::to_string(k) + " ('" + item +
                                        "') is not a non-negative number");
        out.push_back(v);
        if (comma == std::string::npos) return out;
        begin = comma + 1;
    }
}

namespace {

// The first few stage names (a large graph has hundreds), then how many there are.
std::string stage_list(const std::vector<std::string>& names) {
    constexpr std::size_t shown = 6;
    std::string out;
    for (std::size_t k = 0; k < names.size() && k < shown; ++k) out += (k ? ", " : "") + names[k];
    if (names.size() > shown) out += ", ... (" + std::to_string(names.size()) + " stages)";
    return out;
}

}   // namespace

std::vector<double> profile_stage_costs(const std::string& path, const program& g) {
    const std::string where = "profile '" + path + "'";
    trace::trace_model m;
    try {
        m = trace::load_trace_file(path);
    } catch (const std::exception& e) {
        throw std::invalid_argument(where + " cannot be read as a trace: " + e.what());
    }
    if (m.runs.empty()) throw std::invalid_argument(where + " holds no run (no pipescope process track)");

    std::vector<std::string> names;
    for (const stage_spec& s : g.stages()) names.push_back(s.name);
    const trace::run* chosen = nullptr;
    bool any_metadata = false;
    std::vector<std::string> other;
    for (const trace::run& r : m.runs) {
        if (r.stages.empty()) continue;
        any_metadata = true;
        std::vector<std::string> recorded(r.stages.size());
        bool dense = true;
        for (const trace::stage_info& s : r.stages) {
            if (s.index >= recorded.size()) dense = false;
            else recorded[s.index] = s.name;
        }
        if (dense && recorded == names) chosen = &r;
        else other = recorded;
    }
    if (!chosen && any_metadata)
        throw std::invalid_argument(where + " records another program (stages " + stage_list(other) +
                                    "), not this one (stages " + stage_list(names) + ")");
    if (!chosen) chosen = &m.runs.back();

    std::vector<double> cost(names.size(), 0.0);
    std::size_t slices = 0;
    for (std::uint32_t ti : chosen->workers) {
        if (ti == trace::no_index) continue;
        for (const trace::slice& sl : m.tracks[ti].slices) {
            const std::string& name = m.str(sl.name);
            if (!name.starts_with(trace::vocab::stage_prefix))
                continue;   // a node slice is "stage j"; the rest is scheduling
            std::uint64_t stage = 0;
            if (auto v = m.uint_arg(sl, trace::vocab::arg_key::stage)) {
                stage = *v;
            } else {
                const auto r =
                    std::from_chars(name.data() + trace::vocab::stage_prefix.size(), name.data() + name.size(), stage);
                if (r.ec != std::errc{}) continue;
            }
            if (stage >= names.size())
                throw std::invalid_argument(where + " records a node of stage " + std::to_string(stage) +
                                            ", but the program has " + std::to_string(names.size()) + " stages");
            cost[stage] += static_cast<double>(sl.duration());
            ++slices;
        }
    }
    if (slices == 0)
        throw std::invalid_argument(where + ": run '" + chosen->name +
                                    "' has no node slices ('stage j') to measure the stages' costs from");
    return cost;
}

}   // namespace pipescope::graph::detail
