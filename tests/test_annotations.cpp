// User annotations (pipescope::annotate, docs/tracing.md "User annotations"): what stages annotate
// in a real run is what the trace model reads back on their node slices (node by node, and as
// arrays on folded runs), the writer's rules for keys, unattached and excess annotations, and that
// nothing is recorded without a recorder or on a thread that records nothing.
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include "support/test_traces.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <bit>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace pipescope;
using trace::event_kind;
using trace::event_record;
namespace v = trace::vocab;

namespace {

using records_by_writer = std::vector<std::vector<event_record>>;

// The user annotations of an event as "key" -> value text, in the model's flattened names.
template <class Event>
std::map<std::string, std::string> user_args(const trace::trace_model& m, const Event& e) {
    std::map<std::string, std::string> out;
    for (const trace::model_arg* a = m.args_begin(e); a != m.args_end(e); ++a)
        if (v::user_key(m.str(a->name))) out[m.str(a->name)] = m.arg_text(*a);
    return out;
}

std::string write(const records_by_writer& by_writer, trace::perfetto_write_stats* stats = nullptr) {
    std::ostringstream bytes;
    trace::perfetto_writer out(bytes, {true, 1, 0});
    out.begin_run({"annotations · piper · P=2", static_cast<unsigned>(by_writer.size()), "{}", {}},
                  trace::run_clock::fixed(trace::tick_converter({0, 0}, {1000, 1000}), 0));
    for (unsigned w = 0; w < by_writer.size(); ++w) out.add_chunk(w, by_writer[w].data(), by_writer[w].size());
    out.end_run();
    out.finish();
    if (stats) *stats = out.stats();
    return bytes.str();
}

// A 4-stage pipeline whose every node annotates "bytes" = 10 i + j, and stage 2 also "ratio" = i + 0.5.
records_by_writer record_annotated_pipeline(unsigned workers, trace::trace_detail detail, std::uint64_t iterations,
                                            std::uint64_t& calls) {
    scheduler s({workers});
    trace::recorder rec(s.workers(), 64u << 20);
    rec.set_detail(detail);
    s.attach_recorder(&rec);
    std::atomic<std::uint64_t> annotated{0}, next{0};
    pipeline_options o;
    o.throttle = 4;
    pipe_while(
        s, [&] { return next < iterations; },
        [&](iteration& it) -> pipe_task {
            const std::uint64_t i = next++;
            for (std::uint64_t j = 0; j < 4; ++j) {
                if (j == 1) co_await it.stage_wait(j);
                if (j > 1) co_await it.stage(j);
                annotate("bytes", static_cast<std::int64_t>(10 * i + j));
                ++annotated;
                if (j == 2) {
                    annotate("ratio", static_cast<double>(i) + 0.5);
                    ++annotated;
                }
            }
        },
        o);
    // Fork-join tasks annotate their own slices.
    task_group tg(s);
    for (std::uint64_t t = 0; t < 8; ++t)
        tg.spawn([&annotated] {
            annotate("items", 7u);
            ++annotated;
        });
    tg.sync();
    s.attach_recorder(nullptr);
    records_by_writer r(workers);
    rec.flush([&](unsigned w, const event_record* p, std::size_t n) { r[w].insert(r[w].end(), p, p + n); });
    REQUIRE(rec.dropped_total() == 0);
    calls = annotated;
    return r;
}

}   // namespace

TEST_CASE("annotations: a real pipeline's node slices hold exactly what its stages annotated", "[annotations][roundtrip]") {
    const auto detail = GENERATE(trace::trace_detail::nodes, trace::trace_detail::folded);
    INFO("detail " << trace::to_string(detail));
    const std::uint64_t iterations = 300;
    std::uint64_t calls = 0;
    const records_by_writer recs = record_annotated_pipeline(2, detail, iterations, calls);
    trace::perfetto_write_stats stats;
    const trace::trace_model m = trace::load_trace(write(recs, &stats));
    for (const auto& p : m.problems) FAIL_CHECK(p);
    REQUIRE(m.runs.size() == 1);

    std::uint64_t values = 0, nodes = 0, task_slices = 0, folded = 0;
    for (const std::uint32_t ti : m.runs[0].workers) {
        for (const trace::slice& s : m.tracks[ti].slices) {
            const std::string& name = m.str(s.name);
            const auto got = user_args(m, s);
            if (v::classify_slice(name) == v::slice_class::task) {
                CHECK(got == std::map<std::string, std::string>{{"items", "7"}});
                ++task_slices, ++values;
                continue;
            }
            if (v::classify_slice(name) != v::slice_class::node) {
                CHECK(got.empty());
                continue;
            }
            const std::uint64_t i = *m.uint_arg(s, v::arg_key::iteration), j = *m.uint_arg(s, v::arg_key::stage);
            const std::uint64_t last = m.uint_arg(s, v::arg_key::last_stage).value_or(j);
            const std::uint64_t n = m.uint_arg(s, v::arg_key::nodes).value_or(1);
            INFO(name << " iteration " << i);
            REQUIRE(last - j + 1 == n);
            std::map<std::string, std::string> want;
            for (std::uint64_t k = j; k <= last; ++k)
                want[n == 1 ? "bytes" : "bytes[" + std::to_string(k - j) + "]"] = std::to_string(10 * i + k);
            if (j <= 2 && 2 <= last) want["ratio"] = std::to_string(i) + ".5";
            CHECK(got == want);
            values += want.size();
            nodes += n;
            folded += n > 1;
        }
    }
    CHECK(nodes == 4 * iterations);
    CHECK(task_slices == 8);
    CHECK(values == calls);
    CHECK(stats.annotations == calls);
    CHECK(stats.annotations_unattached == 0);
    CHECK(stats.annotations_lost == 0);
    if (detail == trace::trace_detail::folded) CHECK(folded > 0);
}

TEST_CASE("annotations: the writer puts them on their slice's END, keys, unattached and excess ones",
          "[annotations][trace-file]") {
    records_by_writer r(1);
    std::uint64_t t = 0;
    const auto add = [&](event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0) {
        r[0].push_back({++t, a, b, c, k, 0, 0});
    };
    const auto note = [&](const char* key, std::uint64_t bits, trace::annotation_value kind) {
        add(event_kind::annotation, reinterpret_cast<std::uintptr_t>(key), bits, static_cast<std::uint32_t>(kind));
    };
    using av = trace::annotation_value;
    note("before", 1, av::int64);        // no slice open: ignored
    add(event_kind::node_begin, 0, 0);   // node (0, 0)
    note("bytes", 4096, av::int64);
    note("ratio", std::bit_cast<std::uint64_t>(0.5), av::float64);
    note("stage", 7, av::int64);   // a vocabulary key: "user_stage"
    note("delta", static_cast<std::uint64_t>(-3), av::int64);
    add(event_kind::node_end, 0, 0);
    add(event_kind::node_begin, 1, 1);   // folded run: stages 1-3 of iteration 1
    for (std::uint64_t b : {10, 20, 30}) note("bytes", b, av::uint64);
    add(event_kind::node_fold_end, 1, 3, 3);
    add(event_kind::node_begin, 2, 0);   // a node with a task inside
    add(event_kind::task_begin, 5);
    note("items", 7, av::int64);   // the task's
    add(event_kind::task_end, 5);
    note("bytes", 1, av::int64);   // the node's again
    add(event_kind::node_end, 2, 0);
    add(event_kind::node_begin, 3, 0);   // more than the writer keeps pending
    for (int k = 0; k < 4100; ++k) note("many", static_cast<std::uint64_t>(k), av::int64);
    add(event_kind::node_end, 3, 0);
    add(event_kind::node_begin, 4, 0);   // still open at the end of the run
    note("bytes", 5, av::int64);

    trace::perfetto_write_stats stats;
    const std::string bytes = write(r, &stats);
    testing::save_for_checks("annotations.pftrace", bytes);   // perfetto.annotations queries its args
    const trace::trace_model m = trace::load_trace(bytes);
    for (const auto& p : m.problems) FAIL_CHECK(p);
    const trace::track& track = m.tracks.at(m.runs.at(0).workers.at(0));
    std::vector<std::map<std::string, std::string>> got;
    for (const trace::slice& s : track.slices) got.push_back(user_args(m, s));
    REQUIRE(got.size() == 6);
    CHECK(got[0] ==
          std::map<std::string, std::string>{{"bytes", "4096"}, {"ratio", "0.5"}, {"user_stage", "7"}, {"delta", "-3"}});
    CHECK(got[1] == std::map<std::string, std::string>{{"bytes[0]", "10"}, {"bytes[1]", "20"}, {"bytes[2]", "30"}});
    CHECK(got[2] == std::map<std::string, std::string>{{"bytes", "1"}});
    CHECK(got[3] == std::map<std::string, std::string>{{"items", "7"}});
    CHECK(got[4].size() == 4096);
    CHECK(got[4].at("many[4095]") == "4095");
    CHECK(got[5] == std::map<std::string, std::string>{{"bytes", "5"}});
    // The node's own annotations stay, the folded run's too (its END repeats them: merged once).
    CHECK(m.uint_arg(track.slices[0], v::arg_key::stage) == 0u);
    CHECK(m.uint_arg(track.slices[1], v::arg_key::nodes) == 3u);
    CHECK(m.uint_arg(track.slices[4], v::arg_key::annotations_lost) == 4u);
    std::size_t nodes_args = 0;
    for (const trace::model_arg* a = m.args_begin(track.slices[1]); a != m.args_end(track.slices[1]); ++a)
        nodes_args += m.str(a->name) == "nodes";
    CHECK(nodes_args == 1);
    CHECK(stats.annotations == 4 + 3 + 1 + 1 + 4096 + 1);
    CHECK(stats.annotations_unattached == 1);
    CHECK(stats.annotations_lost == 4);

    CHECK(v::user_arg_name("bytes") == "bytes");
    CHECK(v::user_arg_name("stage") == "user_stage");
    CHECK(v::user_arg_name("user_x") == "user_user_x");
    CHECK(v::user_key("user_user_x") == "user_x");
    CHECK(v::user_key("user_stage") == "stage");
    CHECK_FALSE(v::user_key("iteration"));
}

TEST_CASE("annotations: nothing is recorded without a recorder or on a thread that records nothing", "[annotations]") {
    scheduler s({2});
    std::atomic<int> ran{0};
    const auto annotated_loop = [&] {
        std::atomic<int> next{0};
        pipe_while(
            s, [&] { return next < 50; },
            [&](iteration& it) -> pipe_task {
                ++next;
                annotate("bytes", 1);
                co_await it.stage(1);
                annotate("ratio", 0.25f);
                ++ran;
            });
    };
    annotated_loop();   // no recorder: a branch, nothing else
    CHECK(ran == 50);

    trace::recorder rec(s.workers(), 8u << 20);
    s.attach_recorder(&rec);
    annotate("main thread", 1);   // not a worker: nothing
    pipeline_options serial;
    serial.policy = "serial";   // runs on this thread, which records nothing
    std::atomic<int> next{0};
    pipe_while(
        s, [&] { return next < 5; },
        [&](iteration&) -> pipe_task {
            ++next;
            annotate("serial", 1);
            co_return;
        },
        serial);
    annotated_loop();
    s.attach_recorder(nullptr);
    std::map<std::string, int> keys;
    rec.flush([&](unsigned, const event_record* p, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k)
            if (p[k].kind == event_kind::annotation)
                ++keys[reinterpret_cast<const char*>(static_cast<std::uintptr_t>(p[k].a))];
    });
    CHECK(keys == std::map<std::string, int>{{"bytes", 50}, {"ratio", 50}});
}
