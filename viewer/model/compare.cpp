#include "compare.hpp"

#include "breakdown.hpp"

#include <pipescope/analysis/metadata.hpp>
#include <pipescope/analysis/stages.hpp>

#include <fmt/core.h>

#include <algorithm>

namespace pipescope::viewer {

std::vector<compare_row> compute_compare(const document& d) {
    std::vector<compare_row> rows;
    rows.reserve(d.runs.size());
    for (std::uint32_t ri = 0; ri < d.runs.size(); ++ri) {
        const run_ref& rr = d.runs[ri];
        const loaded_file& f = *d.files[rr.file];
        const tm::trace_model& m = f.model;
        compare_row row;
        row.name = rr.title;
        row.run = ri;
        const analysis::run_scope scope = scope_of(f, rr);
        const analysis::run_meta meta = analysis::read_meta(scope);
        // P as the run was asked for (its metadata), not its tracks: bind-to-stage's threads (one per
        // stage and more) run on P workers' cores, and their tracks come on top of the pool's.
        row.workers = meta.workers ? meta.workers : rr.workers.size();
        row.makespan = rr.end > rr.start ? rr.end - rr.start : 0;
        // The counts are `pipescope stats`' own (analysis::run_stats): one home for them.
        const analysis::run_stats st = analysis::compute_stats(scope, meta);
        row.steals = st.steals_made;
        row.suspensions = st.suspensions;
        row.peak_live = st.peak_live;
        row.nodes = st.nodes;
        row.iterations = st.iterations;
        if (rr.run != tm::no_index) row.K = m.runs[rr.run].dag.K;
        const run_breakdown b = compute_breakdown(f, rr);
        row.threads = b.workers.size();
        row.work_fraction = b.total.time.fraction(time_category::work);
        row.busy_threads = b.core_share(b.total.time[time_category::work], 1);
        if (const auto ref = meta.reference_seconds) row.serial_ns = static_cast<std::uint64_t>(*ref * 1e9);
        if (row.serial_ns && row.makespan)
            row.speedup = static_cast<double>(*row.serial_ns) / static_cast<double>(row.makespan);
        rows.push_back(std::move(row));
    }
    for (auto& row : rows)
        row.vs_first = row.makespan && !rows.empty()
                           ? static_cast<double>(rows.front().makespan) / static_cast<double>(row.makespan)
                           : 0.0;
    return rows;
}

std::string work_note(const compare_row& r) {
    if (!r.oversubscribed()) return {};
    const bool over = r.busy_threads > static_cast<double>(r.workers);
    const std::string cores = fmt::format("{} core{}", r.workers, r.workers == 1 ? "" : "s");
    return fmt::format(
        "{} threads on {}: work is the share of the threads' time in nodes; on average {:.2f} of them were in a node "
        "at once, {} the {}{}",
        r.threads, cores, r.busy_threads, over ? "more than" : "of", cores,
        over ? ": a thread in a node also waited for a core" : "");
}

document_key document_key::of(const document& d) {
    document_key k;
    k.runs.reserve(d.runs.size());
    for (const auto& r : d.runs) k.runs.emplace_back(d.files[r.file].get(), r.run);
    return k;
}

bool document_key::matches(const document& d) const {
    if (runs.size() != d.runs.size()) return false;
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (runs[i].first != d.files[d.runs[i].file].get() || runs[i].second != d.runs[i].run) return false;
    return true;
}

}   // namespace pipescope::viewer
