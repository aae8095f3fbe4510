// Statistics per slice name or per stage over a run (Tracy's statistics / Find Zone, Perfetto's pivot
// table): count, total, mean, median, p95, min and max of the durations, two runs side by side, and a
// log-scaled duration histogram of one row. Pure C++ (no ImGui): the stats view draws it
// (views/stats_view.cpp), the state dump reports it (`stats`).
//
// What is counted (a run's worker, line and other tracks; every depth):
//   by name    every slice, grouped by its name (folded slices count as one slice of their name).
//   by stage   every pipeline node, grouped by its stage; a folded slice gives each node it holds an
//              equal share of its duration (analysis::node_share), as the area selection's nodes do.
//   area       restricted to the area selection: the slices (nodes) of the area's tracks that overlap
//              its time range (a zero-length one: starts in it), each with its WHOLE duration — never
//              clipped to the area, so that every column measures the same thing; the same set as the
//              area panel's "nodes".
//   median, p95  nearest rank, as analysis::summarize: the value at rank ceil(q n) of the sorted
//              durations (the median of an even count is the lower middle one).
// Cost: one pass over the run's slices (the area: O(log n) per row plus the slices in it), then
// nth_element per row — computed when the document, the run, the grouping or the area change
// (slice_stats_cache), never per frame.
#pragma once

#include "area_selection.hpp"
#include "compare.hpp"
#include "document.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::viewer {

enum class stats_group : std::uint8_t { name, stage };
enum class stats_scope : std::uint8_t { run, area };
const char* to_string(stats_group g);
const char* to_string(stats_scope s);

inline constexpr std::uint64_t no_stage = ~std::uint64_t{0};

struct stats_row {
    std::string name;                 // the slice name, or "stage 3"
    std::uint64_t stage = no_stage;   // by stage: the stage number (orders the rows)
    std::string what;                 // by stage: the run metadata's name of the stage ("extract"), or ""
    std::uint64_t count = 0, total = 0, min = 0, max = 0, median = 0, p95 = 0;
    double mean = 0;
};

// One run's rows, by name (byte order) or by stage number, with each row's durations (in no
// particular order: nth_element has been through them) for the histogram.
struct stats_table {
    std::vector<stats_row> rows;
    std::vector<std::vector<std::uint64_t>> durations;   // parallel to rows
    std::uint64_t slices = 0;                            // slices (nodes) counted in all rows
};

// The statistics of document run `run` (index into document::runs); `area` (nullptr: the whole run)
// on the display axis `aligned` (view_state::align_runs) restricts them as described above.
stats_table compute_slice_stats(const document& d, std::uint32_t run, stats_group g, const area_selection* area,
                                bool aligned);

// Whether slice s of run `run`'s file belongs to `row` (by name: its name; by stage: a node of that
// stage, a folded one holding it), and the longest such slice of the run: what a click on the row
// selects (the track and the slice's index; nullopt if none).
bool slice_in_row(const loaded_file& f, const tm::slice& s, stats_group g, const stats_row& row);
std::optional<tm::event_ref> longest_slice(const document& d, std::uint32_t run, stats_group g, const stats_row& row);

// The measures of a row, in the table's column order after the name.
enum class stats_measure : std::uint8_t { count, total, mean, median, p95, max, min };
inline constexpr int stats_measure_count = 7;
const char* to_string(stats_measure m);
double measure_of(const stats_row& r, stats_measure m);

// A row of the table shown: run A's and run B's statistics of one name (or stage); either may be
// missing (the name does not occur in that run / scope).
struct stats_pair {
    std::string name;
    std::uint64_t stage = no_stage;
    const stats_row* a = nullptr;
    const stats_row* b = nullptr;
    std::uint32_t a_index = 0;   // into table A's rows (valid when a)
};
// What a column shows of a pair: A's value, B's, or B / A.
enum class stats_side : std::uint8_t { a, b, ratio };
// B's measure over A's; nullopt unless both have it and A's is > 0.
std::optional<double> stats_ratio(const stats_pair& p, stats_measure m);

struct stats_sort {
    bool by_name = false;   // else by `measure` of `side`
    stats_measure measure = stats_measure::total;
    stats_side side = stats_side::a;
    bool descending = true;
    bool operator==(const stats_sort&) const = default;
};
// A's and B's rows joined by name (stage), sorted: missing values sort last whichever the direction;
// ties by name. `b` may be nullptr (one run).
std::vector<stats_pair> join_and_sort(const stats_table& a, const stats_table* b, const stats_sort& s);

// A duration histogram with logarithmic bins (as Tracy's Find Zone): bins[k] counts the durations
// in [edge(k), edge(k + 1)); a zero duration counts as 1 ns.
struct stats_histogram {
    double lo = 1, hi = 1;   // edge(0), edge(bins.size()) in ns
    std::vector<std::uint64_t> bins;
    std::uint64_t peak = 0;   // the largest bin
    double edge(std::size_t k) const;
    // The bin of a duration (clamped into [0, bins.size())).
    std::size_t bin_of(double ns) const;
};
// The bins span `durations` and `also` (if given: another run's, so that both share the edges); only
// `durations` are counted.
stats_histogram make_histogram(const std::vector<std::uint64_t>& durations, std::size_t bins,
                               const std::vector<std::uint64_t>* also = nullptr);
// `durations` counted on the bins of `edges`.
stats_histogram histogram_on_edges(const stats_histogram& edges, const std::vector<std::uint64_t>& durations);
// How many of the durations lie in [lo, hi], and their summed time.
struct range_count {
    std::uint64_t count = 0, total = 0;
};
range_count count_in_range(const std::vector<std::uint64_t>& durations, double lo, double hi);

// The view's settings and its cached results, kept in view_state so that the state dump reads what
// the view shows. update() recomputes only when an input changed (checking costs O(runs + area
// tracks) per frame, no allocation).
struct slice_stats_cache {
    // Settings (the view's controls).
    stats_group group = stats_group::name;
    stats_scope scope = stats_scope::run;
    std::uint32_t run_a = 0;
    std::optional<std::uint32_t> run_b;   // compare with another run
    stats_sort sort;
    std::string selected;   // the row shown in the histogram: the first row shown until one is clicked
    std::optional<std::pair<double, double>> hist_range;   // durations (ns) dragged on the histogram

    // Results (for the inputs below).
    stats_table a, b;
    std::vector<stats_pair> rows;   // joined and sorted
    stats_histogram hist;           // of the selected row of A (spanning B's too)
    stats_histogram hist_b;         // of the same row of B, on hist's bins (empty without B)
    range_count in_range;           // of the selected row's durations in hist_range
    range_count in_range_b;         // of B's durations of that name in hist_range
    std::size_t computations = 0;   // how many times the tables were computed (tests: not per frame)

    // Brings the results up to date; true if anything was recomputed.
    bool update(const document& d, const std::optional<area_selection>& area, bool aligned);
    // Whether update() would change nothing (the state dump, which cannot update, checks it).
    bool current(const document& d, const std::optional<area_selection>& area, bool aligned) const {
        return inputs_match(d, area, aligned) && sorted_by_ == sort && hist_of_ == selected && range_of_ == hist_range;
    }
    // The settings alone (a cache to update elsewhere).
    slice_stats_cache settings() const {
        slice_stats_cache c;
        c.group = group, c.scope = scope, c.run_a = run_a, c.run_b = run_b, c.sort = sort, c.selected = selected;
        c.hist_range = hist_range;
        return c;
    }
    // The selected row of table A, or nullptr.
    const stats_row* selected_row() const;
    const std::vector<std::uint64_t>* selected_durations() const;
    const std::vector<std::uint64_t>* selected_durations_b() const;   // the selected name in B

private:
    struct inputs {
        document_key doc;
        stats_group group = stats_group::name;
        stats_scope scope = stats_scope::run;
        std::uint32_t run_a = 0;
        std::optional<std::uint32_t> run_b;
        std::optional<area_selection> area;   // only when scope == area
        bool aligned = false;
        bool operator==(const inputs&) const = default;
    };
    std::optional<inputs> computed_;
    stats_sort sorted_by_;
    std::string hist_of_;
    std::optional<std::pair<double, double>> range_of_;
    bool inputs_match(const document& d, const std::optional<area_selection>& area, bool aligned) const;
};

}   // namespace pipescope::viewer
