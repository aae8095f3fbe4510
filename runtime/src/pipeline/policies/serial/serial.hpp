#pragma once

#include "../../engine_iteration.hpp"

#include <pipescope/pipeline.hpp>

namespace pipescope::detail {

class serial_engine final : public pipeline_engine {
public:
    serial_engine(const pipe_condition& condition, const pipe_body& body, const pipeline_options& o);
    pipeline_stats run();

    void release_control(iteration&) noexcept override {}
    void check_right(iteration&) noexcept override {}
    bool suspend(iteration&, std::coroutine_handle<>) noexcept override { return false; }
    std::coroutine_handle<> finish_iteration(iteration& it) noexcept override;
    void record_exception(std::exception_ptr e) noexcept override;

private:
    const pipe_condition& condition_;
    const pipe_body& body_;
    pipeline_observer* observer_;
    iteration_slot slot_;
    engine_iteration it_;
    std::coroutine_handle<pipe_task::promise_type> frame_;
    exception_slot errors_;
};

}   // namespace pipescope::detail
