// Queueing bounds (queueing.hpp).
#include <pipescope/analysis/queueing.hpp>

#include <algorithm>
#include <cmath>

namespace pipescope::analysis {

queueing_bounds compute_queueing(const run_scope& scope, const run_meta& meta, const run_stats& st) {
    queueing_bounds q;
    q.workers = static_cast<unsigned>(meta.workers ? meta.workers : scope.workers.size());
    q.iterations = st.iterations;
    q.makespan = static_cast<double>(scope.makespan()) * 1e-9;
    q.K = meta.K;
    // Threads bound to stages follow seed 000 §3's bind-to-stage model; every other policy binds to elements.
    const bool bound = vocab::classify_policy(meta.policy) == vocab::policy_family::bound_threads;
    q.model = bound ? "bind-to-stage" : "bind-to-element";
    if (q.iterations == 0 || q.makespan <= 0 || st.stages.empty()) return q;
    const double P = q.workers ? static_cast<double>(q.workers) : 1.0;
    const double n = static_cast<double>(q.iterations);
    // Bind-to-stage (the policy's own rule): one thread per serial stage, c per parallel stage
    // (the `c` parameter, default P), unless the metadata records a stage's threads.
    const double c_par = meta.threads_per_parallel_stage ? *meta.threads_per_parallel_stage : P;
    double max_serial = 0;
    q.bound_stage = 0;
    bool first = true;
    for (const auto& s : st.stages) {
        if (s.service.count == 0) continue;
        stage_rate r;
        r.index = s.index;
        r.name = s.name;
        r.serial = s.serial;
        r.tser = static_cast<double>(s.service.total) * 1e-9 / n;
        r.c_element = s.serial ? 1.0 : P;
        r.c_stage = s.serial ? 1.0 : c_par;
        if (const stage_meta* m = find_stage(meta, s.index); m && m->threads && *m->threads > 0) r.c_stage = *m->threads;
        if (r.tser > 0) {
            r.rate_element = r.c_element / r.tser;
            r.rate_stage = r.c_stage / r.tser;
            if (first || r.rate_stage < q.bound_stage)
                q.bound_stage = r.rate_stage, q.bottleneck_stage = static_cast<long>(r.index);
            first = false;
        }
        q.work_per_item += r.tser;
        if (r.serial && r.tser > max_serial) max_serial = r.tser, q.critical_serial_stage = static_cast<long>(r.index);
        q.stages.push_back(r);
    }
    if (q.work_per_item <= 0) return q;
    q.available = true;
    q.lambda_max = max_serial > 0 ? 1.0 / max_serial : 0.0;
    q.bound_element = P / q.work_per_item;
    if (P / q.work_per_item < q.bound_stage) q.bound_stage = P / q.work_per_item, q.bottleneck_stage = -1;   // P cores
    if (q.lambda_max > 0) q.bound_element = std::min(q.bound_element, q.lambda_max);
    q.predicted = bound ? q.bound_stage : q.bound_element;
    q.observed = n / q.makespan;
    q.efficiency = q.predicted > 0 ? q.observed / q.predicted : 0.0;
    q.tokens_needed = q.bound_element * q.work_per_item;
    if (max_serial > 0) q.k_for_span = std::ceil(q.work_per_item / max_serial);
    return q;
}

}   // namespace pipescope::analysis
