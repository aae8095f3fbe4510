// pipescope — fork-join parallelism: spawn tasks, then sync.
//
//     pipescope::task_group g(sched);
//     g.spawn([&] { left = sum(a, mid); });
//     right = sum(mid, b);
//     g.sync();            // rethrows the first exception any task threw
//
// Usable from any thread and inside pipeline stages. A worker that syncs runs other work while it
// waits, so nested fork-join never blocks a worker.
#pragma once

#include <pipescope/detail/job.hpp>
#include <pipescope/scheduler.hpp>

#include <type_traits>
#include <utility>

namespace pipescope {

class task_group {
public:
    explicit task_group(scheduler& s) noexcept : sched_(&s) {}
    // Waits for outstanding tasks; an exception not collected by sync() is dropped here, because
    // a destructor must not throw. Call sync() to see it.
    ~task_group() { latch_.wait(*sched_); }
    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;

    template <class F>
    void spawn(F&& f) {
        latch_.add();
        detail::submit(*sched_, new task<std::decay_t<F>>(*this, std::forward<F>(f)));
    }

    void sync() {
        latch_.wait(*sched_);
        errors_.rethrow_and_reset();
    }

private:
    template <class F>
    class task final : public detail::job {
    public:
        task(task_group& g, F&& f) : group_(&g), spawn_(detail::task_spawning()), fn_(std::move(f)) {}
        task(task_group& g, const F& f) : group_(&g), spawn_(detail::task_spawning()), fn_(f) {}
        void run() noexcept override {
            task_group* g = group_;
            const detail::task_ids ids = detail::task_started(spawn_);
            try {
                fn_();
            } catch (...) {
                g->errors_.capture(std::current_exception());
            }
            detail::task_finished(ids);
            delete this;   // before arrive(): the group may be gone right after it
            g->latch_.arrive();
        }

    private:
        task_group* group_;
        detail::task_spawn spawn_;   // who spawned it, and when (recorded in its task slice)
        F fn_;
    };

    scheduler* sched_;
    detail::completion_latch latch_;
    detail::exception_slot errors_;
};

}   // namespace pipescope
