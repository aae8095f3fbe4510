#include "stats_state.hpp"

namespace pipescope::viewer {

namespace {

using json = nlohmann::json;

json row_json(const stats_row* r) {
    if (!r) return nullptr;
    return {{"count", r->count}, {"total", r->total}, {"mean", r->mean}, {"median", r->median},
            {"p95", r->p95},     {"max", r->max},     {"min", r->min}};
}

// The rows as shown (at most `limit`): A's measures at the top level, B's under "b", the ratio of totals.
json rows_json(const slice_stats_cache& c, std::size_t limit) {
    json rows = json::array();
    for (std::size_t i = 0; i < c.rows.size() && i < limit; ++i) {
        const stats_pair& p = c.rows[i];
        json r = p.a ? row_json(p.a) : json::object();
        r["name"] = p.name;
        if (const stats_row* x = p.a ? p.a : p.b; x && !x->what.empty()) r["what"] = x->what;
        if (c.run_b) {
            r["b"] = row_json(p.b);
            const auto ratio = stats_ratio(p, stats_measure::total);
            r["total_ratio"] = ratio ? json(*ratio) : json(nullptr);
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

json sort_json(const stats_sort& s, bool two) {
    std::string column = s.by_name ? "name" : to_string(s.measure);
    if (!s.by_name && two) column += s.side == stats_side::a ? " A" : s.side == stats_side::b ? " B" : " B/A";
    return {{"column", column}, {"descending", s.descending}};
}

}   // namespace

json stats_state_json(const document& d, const view_state& st) {
    if (d.runs.empty()) return nullptr;
    // What the view shows; when it has not drawn since an input changed, computed here from its settings.
    std::optional<slice_stats_cache> fresh;
    if (!st.stats.current(d, st.area, st.align_runs)) {
        fresh = st.stats.settings();
        fresh->update(d, st.area, st.align_runs);
    }
    const slice_stats_cache& c = fresh ? *fresh : st.stats;
    json j{{"group", to_string(c.group)},
           {"scope", to_string(c.scope)},
           {"run_a", c.run_a},
           {"run_b", c.run_b ? json(*c.run_b) : json(nullptr)},
           {"sort", sort_json(c.sort, c.run_b.has_value())},
           {"selected", c.selected.empty() ? json(nullptr) : json(c.selected)},
           {"slices", c.a.slices},
           {"row_count", c.rows.size()},
           {"rows", rows_json(c, 200)}};
    if (c.hist_range)
        j["range"] = {{"from", c.hist_range->first},
                      {"to", c.hist_range->second},
                      {"count", c.in_range.count},
                      {"total", c.in_range.total},
                      {"b_count", c.in_range_b.count}};
    else j["range"] = nullptr;
    auto sum = [](const stats_histogram& h) {
        std::uint64_t n = 0;
        for (auto v : h.bins) n += v;
        return n;
    };
    j["histogram"] = {
        {"bins", c.hist.bins.size()}, {"a", sum(c.hist)}, {"b", sum(c.hist_b)}, {"lo", c.hist.lo}, {"hi", c.hist.hi}};
    j["computations"] = st.stats.computations;
    return j;
}

}   // namespace pipescope::viewer
