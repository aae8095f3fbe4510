// The names of the scheduler's costs on virtual workers (scheduler.hpp, virtual_cost_entries): one
// list, read by the trace metadata (recording/run_metadata.cpp) and by the CLI's cost files,
// `--param` and `pipescope calibrate` (recording/src/cost_table.cpp).
#include <pipescope/scheduler.hpp>

namespace pipescope {

namespace {
constexpr virtual_cost_entry entries[] = {
    {"steal", &virtual_costs::steal_ns, "taking a job from another worker's deque"},
    {"failed_steal", &virtual_costs::failed_steal_ns, "a steal attempt that finds the victim's deque empty"},
    {"yield", &virtual_costs::yield_ns, "an idle worker yielding its core"},
    {"wake", &virtual_costs::wake_ns, "from unparking a worker until it runs"},
    {"spin", &virtual_costs::spin_ns, "how long a waiting stage-graph worker spins before it sleeps"},
    {"queue_op", &virtual_costs::queue_op_ns, "a stage-graph queue reserve plus commit"},
    {"context_switch", &virtual_costs::context_switch_ns, "a virtual core switching to another thread (bind-to-stage)"},
    {"quantum", &virtual_costs::quantum_ns,
     "a thread's round-robin timeslice on a virtual core while others wait (a model parameter, not measured)"},
    {"handoff", &virtual_costs::handoff_ns,
     "a cache line written on one core and read on another: a stolen job, a queue slot taken on another core"},
    {"lock_hold", &virtual_costs::lock_hold_ns,
     "a bind-to-stage queue push's critical section: a thread preempted inside it keeps the queue locked"},
    {"clock_read", &virtual_costs::clock_read_ns,
     "reading the thread CPU clock, taken off a measured job whose thread lost its CPU meanwhile"},
    {"wall_clock_read", &virtual_costs::wall_clock_read_ns, "reading the wall clock, taken off every other measured job"},
};
}   // namespace

std::span<const virtual_cost_entry> virtual_cost_entries() noexcept { return entries; }

}   // namespace pipescope
