// Loops as runs (loop_listener.hpp): which loops a recording session hears of, and
// PIPESCOPE_TRACE's session, made at the first loop of a scheduler that has none.
#include "../loop_listener.hpp"
#include "environment.hpp"

#include <pipescope/trace_session.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <stdexcept>

namespace pipescope::detail {

void loop_scope::failed(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        finish_.outcome = std::string("exception: ") + x.what();
    } catch (...) {
        finish_.outcome = "exception: (not a std::exception)";
    }
}

void scheduler_impl::set_loop_listener(loop_listener* l) {
    std::lock_guard lock(loops_mutex_);
    if (l && listener_ && listener_ != l)
        throw std::logic_error("trace_session: this scheduler already has a recording session");
    if (l && loops_from_outside_ > 0) throw std::logic_error("trace_session: opened while a loop runs on its scheduler");
    listener_ = l;
    tasks_run_open_ = false;   // a closing session ends its own open run
    tasks_may_start_run_.store(l != nullptr && loops_from_outside_ == 0, std::memory_order_relaxed);
}

void scheduler_impl::check_environment() {
    std::call_once(environment_checked_, [&] {
        // Not under loops_mutex_: the session registers itself as the listener.
        bool has_listener;
        {
            std::lock_guard lock(loops_mutex_);
            has_listener = listener_ != nullptr;
        }
        if (!has_listener) environment_session_ = open_environment_session(*this);
        std::lock_guard lock(loops_mutex_);
        tasks_may_start_run_.store(listener_ != nullptr && loops_from_outside_ == 0 && !tasks_run_open_,
                                   std::memory_order_relaxed);
    });
}

bool scheduler_impl::enter_loop(const loop_start& loop) {
    if (current()) return false;   // nested in a stage: part of the run that is open
    // Virtual time stands still from here until the loop waits: a pipeline registers itself with
    // the idle workers before it submits its first job, and that must happen at one virtual instant.
    if (virtual_) virtual_outside_submit();
    check_environment();
    std::lock_guard lock(loops_mutex_);
    if (++loops_from_outside_ == 1 && listener_) {
        try {
            if (tasks_run_open_) {   // the tasks spawned before the loop were a run of their own
                tasks_run_open_ = false;
                listener_->loop_finished({});
            }
            tasks_may_start_run_.store(false, std::memory_order_relaxed);
            listener_->loop_started(loop);
        } catch (...) {
            --loops_from_outside_;
            tasks_may_start_run_.store(true, std::memory_order_relaxed);
            throw;
        }
    }
    return true;
}

void scheduler_impl::leave_loop(bool from_outside, const loop_finish& end) noexcept {
    if (!from_outside) return;
    // Virtual time stands still while a session ends the loop's run (its workers stop recording):
    // held since the loop ended (or since it started, if it threw before it waited), then let run.
    const virtual_pause still(*this, true);
    std::lock_guard lock(loops_mutex_);
    if (--loops_from_outside_ == 0 && listener_) {
        listener_->loop_finished(end);
        tasks_may_start_run_.store(true, std::memory_order_relaxed);
    }
}

void scheduler_impl::start_tasks_run() {
    check_environment();
    std::lock_guard lock(loops_mutex_);
    if (!listener_ || loops_from_outside_ > 0 || tasks_run_open_) return;
    listener_->loop_started({});   // may throw (the file): the spawn fails before its task is queued
    tasks_run_open_ = true;
    tasks_may_start_run_.store(false, std::memory_order_relaxed);
}

void scheduler_impl::close_environment_session() noexcept {
    if (!environment_session_) return;
    try {
        environment_session_->close();
        report_environment_session(*environment_session_);
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipescope: PIPESCOPE_TRACE: {}\n", e.what());
    }
    environment_session_.reset();
}

}   // namespace pipescope::detail
