#include "piper_earliest.hpp"
#include "../../policy.hpp"

#include "../../../trace_hooks.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace pipescope::detail {

namespace {
std::atomic<earliest_check*> installed_check{nullptr};
}   // namespace

void set_earliest_check(earliest_check* c) noexcept { installed_check.store(c, std::memory_order_release); }

piper_earliest_engine::piper_earliest_engine(scheduler& s, const pipe_condition& condition, const pipe_body& body,
                                             const pipeline_options& o)
    : piper_engine(s, condition, body, o),
      words_((throttle_ + 63) / 64),
      suspended_bits_(std::make_unique<std::atomic<std::uint64_t>[]>(words_)),
      check_(installed_check.load(std::memory_order_acquire)) {
    for (unsigned w = 0; w < words_; ++w) suspended_bits_[w].store(0, std::memory_order_relaxed);
    // §4.2, third point: idle workers ask this loop for its earliest resumable iteration whether or
    // not lazy enabling is on.
    idle_source_ = true;
}

// §4.1, insertion: the iteration in r enters the suspended list. The bit is set before the status
// goes odd, and cleared only by whoever claims it (after_claim), so the bit is set whenever the
// status says suspended: a scan that reads the bits misses no suspension published before it, and
// a suspension racing a retirement is seen by one side of PIPER's handshake (suspend() re-checks the
// predecessor after a fence; retire() scans after one).
void piper_earliest_engine::before_publish_suspension(slot_record& r) noexcept {
    const unsigned k = slot_of(r);
    suspended_bits_[k / 64].fetch_or(std::uint64_t{1} << (k % 64), std::memory_order_relaxed);
}

// §4.1, removal: whoever claimed the iteration takes it off the list.
void piper_earliest_engine::after_claim(slot_record& r, bool self) noexcept {
    const unsigned k = slot_of(r);
    suspended_bits_[k / 64].fetch_and(~(std::uint64_t{1} << (k % 64)), std::memory_order_relaxed);
    if (!self) trace_suspended_count();   // a self-claim undoes a suspension nobody saw
}

void piper_earliest_engine::trace_suspended_count() noexcept {
    trace_event(trace::event_kind::suspended_iterations, suspended_.load(std::memory_order_relaxed));
}

// §4.2, first point: "upon an iteration returning" (it replaces PIPER's check of the next
// iteration). Iteration i was the oldest in flight, so every suspended iteration is later than i;
// i+1, if suspended, is the earliest and satisfied, as in PIPER, but when i+1 runs on, a later
// suspended iteration whose predecessor has moved on is taken instead of leaving it for a thief.
piper_engine::slot_record* piper_earliest_engine::enable_at_retire(std::uint64_t) noexcept {
    return resume_earliest(resume_point::retire);
}

// §4.2, second point: "upon an iteration suspending". The suspending worker would go back to the
// scheduler and steal; it goes on with the earliest resumable iteration instead. Pushed on its own
// deque (the bottom, which it pops next) rather than made its assigned job: a worker helping in a
// task group may leave the helping loop before taking an assigned job, and the frame it returns to
// may assign another one.
void piper_earliest_engine::after_suspended() noexcept {
    trace_suspended_count();
    if (slot_record* r = resume_earliest(resume_point::suspend)) sched_.impl().current()->push(r);
}

// §4.2, third point: "upon trying to steal from another worker, and finding a currently-executing
// iteration": the core asks registered pipelines after a round of steals found nothing.
job* piper_earliest_engine::find_enabled_work() noexcept { return resume_earliest(resume_point::steal_found_nothing); }

piper_engine::slot_record* piper_earliest_engine::resume_earliest(resume_point p) noexcept {
    slot_record* r = nullptr;
    if (check_) [[unlikely]] {
        r = checked_scan(p);
    } else {
        if (suspended_.load(std::memory_order_acquire) == 0) return nullptr;
        r = scan(retired.load(std::memory_order_acquire));
    }
    if (r) {
        const std::uint64_t i = r->it.index();
        trace_event(trace::event_kind::earliest_resume, i, suspended_.load(std::memory_order_relaxed),
                    static_cast<std::uint32_t>(p), static_cast<std::uint16_t>(i % throttle_));
    }
    return r;
}

// The suspended list in iteration order: slots from base mod K to K-1, then 0 to base mod K - 1,
// slot k holding iteration base + (k - base mod K) mod K. Claims the first whose cross edge is
// satisfied. A bit whose slot no longer holds that iteration (it was claimed, or retired and the
// slot reused since `base` was read) is passed over by try_claim's own checks.
piper_engine::slot_record* piper_earliest_engine::scan(std::uint64_t base) noexcept {
    const unsigned k0 = static_cast<unsigned>(base % throttle_);
    const auto visit = [&](unsigned lo, unsigned hi) -> slot_record* {   // slots [lo, hi)
        for (unsigned w = lo / 64; w * 64 < hi; ++w) {
            std::uint64_t bits = suspended_bits_[w].load(std::memory_order_acquire);
            const unsigned first = w * 64;
            if (lo > first) bits &= ~std::uint64_t{0} << (lo - first);
            if (hi - first < 64) bits &= (std::uint64_t{1} << (hi - first)) - 1;
            while (bits) {
                const unsigned k = first + static_cast<unsigned>(std::countr_zero(bits));
                bits &= bits - 1;
                const std::uint64_t i = base + (k + throttle_ - k0) % throttle_;
                slot_record& r = slots_[k];
                if (!(r.sync.status.load(std::memory_order_acquire) & 1)) continue;
                if (r.sync.index.load(std::memory_order_acquire) != i) continue;
                const std::uint64_t waited = r.sync.waiting_stage.load(std::memory_order_relaxed);
                if (slot_record* claimed = try_claim(r, i, progress_of_predecessor(i, waited))) return claimed;
                if (check_) check_->passed_over.fetch_add(1, std::memory_order_relaxed);
            }
        }
        return nullptr;
    };
    if (slot_record* r = visit(k0, throttle_)) return r;
    return k0 ? visit(0, k0) : nullptr;
}

// The scan under the test hook (piper_earliest_check.hpp explains why the check is sound).
piper_engine::slot_record* piper_earliest_engine::checked_scan(resume_point p) noexcept {
    struct seen {
        unsigned slot;
        std::uint64_t status, index;
        bool satisfied;
    };
    std::vector<seen> before;
    for (unsigned k = 0; k < throttle_; ++k) {
        const std::uint64_t st = slots_[k].sync.status.load(std::memory_order_acquire);
        if (!(st & 1)) continue;
        const std::uint64_t i = slots_[k].sync.index.load(std::memory_order_acquire);
        const std::uint64_t waited = slots_[k].sync.waiting_stage.load(std::memory_order_relaxed);
        before.push_back({k, st, i, progress_of_predecessor(i, waited) > waited});
    }
    const auto point = static_cast<unsigned>(p);
    check_->scans[point].fetch_add(1, std::memory_order_relaxed);
    slot_record* r = nullptr;
    if (suspended_.load(std::memory_order_acquire) != 0) r = scan(retired.load(std::memory_order_acquire));
    const std::uint64_t x = r ? r->it.index() : 0;
    if (r) check_->resumed[point].fetch_add(1, std::memory_order_relaxed);
    static constexpr const char* names[] = {"an iteration retired", "an iteration suspended", "a steal found nothing"};
    for (const seen& s : before) {
        if (!s.satisfied || (r && s.index >= x)) continue;
        if (slots_[s.slot].sync.status.load(std::memory_order_acquire) != s.status) continue;   // claimed meanwhile
        check_->fail(std::string("when ") + names[point] + ", iteration " + std::to_string(s.index) +
                     " was suspended with its cross edge satisfied, but " +
                     (r ? "iteration " + std::to_string(x) + " was resumed instead" : std::string("nothing was resumed")));
    }
    return r;
}

extern const policy_entry piper_earliest_policy{
    .name = "piper-earliest",
    .summary =
        "PIPER plus Cheetah-Piper's suspended list: resume the earliest ready iteration on retire, suspend, failed steal",
    .run = run_engine<piper_earliest_engine>,
    .order = 20,
};

}   // namespace pipescope::detail
