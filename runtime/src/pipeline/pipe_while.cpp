// pipe_while: validates the options and hands the loop to the policy that runs it.
#include "piper.hpp"
#include "../trace_hooks.hpp"
#include "serial.hpp"

#include <stdexcept>
#include <string>

namespace pipescope {

namespace detail {

void throw_bad_stage(std::uint64_t index, std::uint64_t current, std::uint64_t next) {
    if (next >= final_stage)
        throw std::invalid_argument("pipe_while: iteration " + std::to_string(index) + " asked for stage " +
                                    std::to_string(next) + ", which is reserved for the implicit final stage");
    throw std::invalid_argument("pipe_while: iteration " + std::to_string(index) + " went from stage " +
                                std::to_string(current) + " to stage " + std::to_string(next) +
                                "; stage numbers must strictly increase");
}

void pipeline_engine::notify_node_end(const iteration& it, std::uint64_t next_stage) noexcept {
    if (auto* o = it.observer()) o->on_node_end(it.index(), it.current_stage(), next_stage, this_worker_index());
    trace_event(trace::event_kind::node_end, it.index(), it.current_stage());
}

void pipeline_engine::notify_node_begin(const iteration& it, bool waited) noexcept {
    if (auto* o = it.observer()) o->on_node_begin(it.index(), it.current_stage(), waited, this_worker_index());
    trace_event(trace::event_kind::node_begin, it.index(), it.current_stage(), waited ? 1 : 0);
}

}  // namespace detail

pipeline_stats pipe_while(scheduler& s, const pipe_condition& condition, const pipe_body& body,
                          const pipeline_options& options) {
    if (!condition) throw std::invalid_argument("pipe_while: the loop condition is empty");
    if (!body) throw std::invalid_argument("pipe_while: the iteration body is empty");
    if (options.policy == "serial") {
        detail::serial_engine engine(condition, body, options);
        return engine.run();
    }
    if (options.policy == "piper") {
        detail::piper_engine engine(s, condition, body, options);
        return engine.run();
    }
    throw std::invalid_argument("pipe_while: unknown policy '" + options.policy +
                                "' (known: piper, serial)");
}

}  // namespace pipescope
