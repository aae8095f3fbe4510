// pipescope::annotate in a program built against a runtime without tracing: the runtime's CMake
// target passes PIPESCOPE_TRACING=0 on to its users, and annotate compiles to nothing. This file
// plays such a program (the suite's runtime records): even with a recorder attached, its
// annotations leave no record, while the runtime's own events are recorded as usual.
#undef PIPESCOPE_TRACING
#define PIPESCOPE_TRACING 0
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/recorder.hpp>

#include <catch2/catch.hpp>

#include <atomic>

using namespace pipescope;

TEST_CASE("annotations: built with PIPESCOPE_TRACING=0, annotate compiles to nothing", "[annotations]") {
    static_assert(noexcept(annotate("bytes", 1)));
    scheduler s({2});
    trace::recorder rec(s.workers(), 8u << 20);
    rec.set_detail(trace::trace_detail::nodes);
    s.attach_recorder(&rec);
    std::atomic<int> next{0};
    pipe_while(
        s, [&] { return next < 20; },
        [&](iteration& it) -> pipe_task {
            ++next;
            annotate("bytes", 1);
            co_await it.stage(1);
            annotate("ratio", 0.5);
        });
    s.attach_recorder(nullptr);
    std::size_t annotations = 0, nodes = 0;
    rec.flush([&](unsigned, const trace::event_record* p, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) {
            annotations += p[k].kind == trace::event_kind::annotation;
            nodes += p[k].kind == trace::event_kind::node_begin;
        }
    });
    CHECK(annotations == 0);
    CHECK(nodes == 40);
}
