// piper-earliest: PIPER (seed 001 §5, §9) plus the suspended-iteration list of Cheetah-Piper
// (seed 003 §4), which resumes the *earliest* suspended iteration instead of only the next one.
//
//   suspended list (§4.1)  -> a bitmap over the K throttle slots: bit k is set while the iteration in
//                             slot k may be suspended. Iterations in flight are [retired, retired + K),
//                             iteration n in slot n mod K, so scanning the bits circularly from slot
//                             retired mod K visits suspended iterations in iteration order; the
//                             earliest is a rotate and a count-trailing-zeros away (O(1) for K <= 64,
//                             one word per 64 slots beyond). 003 keeps a Harris list of iteration
//                             numbers threaded through the iteration frames; the bitmap gives the same
//                             order and O(1) head, with O(1) insertion instead of O(n).
//   optimization points    -> resume the earliest suspended iteration whose cross edge is satisfied
//   (§4.2)                    (1) when an iteration returns (retires): replaces PIPER's check right;
//                             (2) when an iteration suspends: the suspending worker goes on with it;
//                             (3) when a steal finds nothing to take: the idle-work source that the
//                             core asks after a failed round of steals (registered even with lazy
//                             enabling off, since this point is part of the policy).
//   "resume the PCF if suspended" (the third point's last step) has nothing to do here: the control
//   throttles only while K iterations are in flight, and the retirement that ends that state resumes
//   it (PIPER's check parent), so an idle worker can never find it resumable.
#pragma once

#include "../piper/piper.hpp"
#include "piper_earliest_check.hpp"

#include <memory>
#include <vector>

namespace pipescope::detail {

class piper_earliest_engine final : public piper_engine {
public:
    // Where a resumption happened (the trace operand of earliest_resume).
    using resume_point = trace::earliest_point;

    piper_earliest_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body, const pipeline_options& o);

    job* find_enabled_work() noexcept override;

private:
    void before_publish_suspension(slot_record& r) noexcept override;
    void after_claim(slot_record& r, bool self) noexcept override;
    void after_suspended() noexcept override;
    slot_record* enable_at_retire(std::uint64_t i) noexcept override;

    slot_record* resume_earliest(resume_point p) noexcept;
    slot_record* scan(std::uint64_t base) noexcept;
    slot_record* checked_scan(resume_point p) noexcept;
    unsigned slot_of(const slot_record& r) const noexcept { return static_cast<unsigned>(&r - slots_.get()); }
    void trace_suspended_count() noexcept;

    unsigned words_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> suspended_bits_;
    earliest_check* check_;
};

}   // namespace pipescope::detail
