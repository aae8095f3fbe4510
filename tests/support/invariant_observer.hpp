// A pipeline observer that checks the invariants of every run (seed 001 §2, §5):
//  - never more than K iterations in flight;
//  - a node entered through stage_wait(j) never starts before node (i-1, j) has finished, and
//    stage 0 of iteration i never starts before stage 0 of i-1 has finished;
//  - iterations retire in order.
// Callbacks come from worker threads; violations are collected and checked on the test thread.
#pragma once

#include "violation_log.hpp"
#include <pipescope/pipeline.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace pipescope::testing {

class invariant_observer final : public pipeline_observer {
public:
    invariant_observer(std::uint64_t max_iterations, unsigned throttle)
        : capacity_(max_iterations),
          throttle_(throttle),
          frontier_(std::make_unique<std::atomic<std::uint64_t>[]>(max_iterations)) {
        for (std::uint64_t i = 0; i < max_iterations; ++i) frontier_[i].store(0);
    }

    void on_iteration_start(std::uint64_t i, int) override {
        if (i >= capacity_) return fail("iteration " + std::to_string(i) + " beyond the expected count");
        const std::uint64_t live = started_.fetch_add(1) + 1 - retired_.load();
        std::uint64_t peak = peak_.load();
        while (live > peak && !peak_.compare_exchange_weak(peak, live)) {
        }
        if (live > throttle_)
            fail("iteration " + std::to_string(i) + " starts with " + std::to_string(live) +
                 " live iterations, K = " + std::to_string(throttle_));
        if (i > 0 && frontier_[i - 1].load() == 0)
            fail("stage 0 of iteration " + std::to_string(i) + " starts before stage 0 of " + std::to_string(i - 1) +
                 " ended");
    }
    void on_node_begin(std::uint64_t i, std::uint64_t stage, bool waited, int) override {
        ++nodes_;
        if (!waited || i == 0 || i >= capacity_) return;
        const std::uint64_t f = frontier_[i - 1].load();
        if (f <= stage)
            fail("node (" + std::to_string(i) + ", " + std::to_string(stage) + ") entered through stage_wait while " +
                 "iteration " + std::to_string(i - 1) + " has only finished the stages below " + std::to_string(f));
    }
    void on_node_end(std::uint64_t i, std::uint64_t, std::uint64_t next, int) override {
        if (i < capacity_) frontier_[i].store(next);
    }
    void on_iteration_retire(std::uint64_t i, int) override {
        const std::uint64_t expected = retired_.load();
        if (i != expected)
            fail("iteration " + std::to_string(i) + " retires while " + std::to_string(expected) + " is the oldest");
        if (i < capacity_) frontier_[i].store(UINT64_MAX);
        retired_.fetch_add(1);
    }

    std::uint64_t violations() const { return log_.violations(); }
    std::string first_violation() const { return log_.first_violation(); }
    std::uint64_t started() const { return started_.load(); }
    std::uint64_t retired() const { return retired_.load(); }
    std::uint64_t peak_live() const { return peak_.load(); }
    std::uint64_t nodes() const { return nodes_.load(); }

private:
    void fail(const std::string& what) { log_.fail(what); }

    std::uint64_t capacity_;
    unsigned throttle_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> frontier_;   // stages below this are done
    std::atomic<std::uint64_t> started_{0}, retired_{0}, peak_{0}, nodes_{0};
    pipescope::testing::violation_log log_;
};

}   // namespace pipescope::testing
