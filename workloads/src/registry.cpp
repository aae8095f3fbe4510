// Every workload the CLI knows, in the order `pipescope list` shows them.
#include <pipescope/workloads/workload.hpp>

namespace pipescope::workloads {

const workload& pipe_fib_fine();
const workload& pipe_fib_coarse();
const workload& ferret_search();
const workload& dedup_compressor();
const workload& x264_encoder();
const workload& merge_sort();
const workload& histogram_map_reduce();
const workload& fm_radio();
const workload& ray_tracer_0();
const workload& ray_tracer_1();
// Further workloads declare their accessor here and add it to the list below, one line each.

const std::vector<const workload*>& all_workloads() {
    static const std::vector<const workload*> all = {
        &pipe_fib_fine(), &pipe_fib_coarse(),      &ferret_search(), &dedup_compressor(), &x264_encoder(),
        &merge_sort(),    &histogram_map_reduce(), &fm_radio(),      &ray_tracer_0(),     &ray_tracer_1(),
    };
    return all;
}

const workload* find_workload(const std::string& name) {
    for (const workload* w : all_workloads())
        if (w->name() == name) return w;
    return nullptr;
}

}   // namespace pipescope::workloads
