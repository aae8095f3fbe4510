// Queueing-model bounds of a pipeline run (seed 000 §3): from the stage kinds and the measured
// service times, the serial-stage bound λmax = 1/max(T of serial stages) (eq. 10, Tin/Tout), each
// stage's c_i/Tser_i (eq. 9), the throughput bound for bind-to-element work stealing (eq. 2 case 3
// with eq. 8: min(P/W, λmax)) and for bind-to-stage (eq. 2 case 1: min_i c_i/Tser_i, and at most
// P/W since the threads share P cores when oversubscribed), the token
// count past which throughput stops growing (Little's law: λ·W), and predicted vs observed
// throughput. Rates are in items (iterations) per second.
#pragma once

#include <pipescope/analysis/metadata.hpp>
#include <pipescope/analysis/stages.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pipescope::analysis {

struct stage_rate {
    std::uint64_t index = 0;
    std::string name;
    bool serial = false;
    double tser = 0;        // s per item: the stage's total service time / iterations
    double c_element = 0;   // servers under work stealing: 1 serial, P parallel
    double c_stage = 0;     // threads under bind-to-stage: 1 serial; parallel: as recorded, else the `c` parameter, else P
    double rate_element = 0;   // c_element / tser (items/s; 0 if tser is 0)
    double rate_stage = 0;     // c_stage / tser
};

struct queueing_bounds {
    bool available = false;         // a run with iterations and timed stages
    unsigned workers = 0;           // P
    std::uint64_t iterations = 0;   // items
    double makespan = 0;            // s
    double work_per_item = 0;       // W = sum of tser (s)
    std::vector<stage_rate> stages;
    double lambda_max = 0;             // 1 / max serial tser (items/s); 0 if no serial stage was timed
    long critical_serial_stage = -1;   // the serial stage that sets λmax
    double bound_element = 0;          // min(P / W, λmax): bind-to-element (work stealing)
    double bound_stage = 0;            // min(min_i c_stage_i / tser_i, P / W): bind-to-stage
    long bottleneck_stage = -1;        // the stage that sets bound_stage (-1: the P/W core bound)
    std::string model;                 // "bind-to-element" or "bind-to-stage": the one this run's policy follows
    double predicted = 0;              // the bound of that model
    double observed = 0;               // iterations / makespan
    double efficiency = 0;             // observed / predicted
    double tokens_needed = 0;          // λ_eu · W: items in flight needed to reach the bound (Little's law)
    double k_for_span = 0;             // ceil(W / S), S = max serial tser: seed 001 §11, throttling edges
                                       // cannot lengthen the span of a uniform pipeline once K·S ≥ W
    std::uint64_t K = 0;               // the run's throttle / tokens (0 = unknown)
};

queueing_bounds compute_queueing(const run_scope& scope, const run_meta& meta, const run_stats& stats);

}   // namespace pipescope::analysis
