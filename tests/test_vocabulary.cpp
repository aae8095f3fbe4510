// The trace vocabulary (vocabulary.hpp): every name the writer emits classifies back to its kind,
// numbered names give their number back, and the policy names map to their families.
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/vocabulary.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace pipescope;
namespace v = trace::vocab;
using trace::event_kind;
using trace::event_record;

namespace {

// Records of worker 0 that make the writer emit every kind of name it has, at ticks 1, 2, 3, ...
std::vector<event_record> every_kind_of_record() {
    std::vector<event_record> r;
    std::uint64_t t = 0;
    const auto add = [&](event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0, std::uint16_t d = 0) {
        r.push_back({++t, a, b, c, k, 0, d});
    };
    const std::uint32_t final_stage = trace::final_stage_operand;
    add(event_kind::worker_start);
    add(event_kind::node_begin, 0, 0, trace::node_waited);
    for (const char* key : {"bytes", "stage"})   // user annotations: "bytes", and "user_stage"
        add(event_kind::annotation, reinterpret_cast<std::uintptr_t>(key), 1,
            static_cast<std::uint32_t>(trace::annotation_value::int64));
    add(event_kind::node_end, 0, 0);
    add(event_kind::node_begin, 1, 2, trace::node_resumed);   // folded: stages 2-5 of iteration 1
    add(event_kind::node_fold_end, 1, 5, 4);
    add(event_kind::node_begin, 2, 3);   // folded: 17 instances of stage 3
    add(event_kind::node_fold_end, 18, 3, 17);
    add(event_kind::task_begin, 7);
    add(event_kind::task_end, 7);
    add(event_kind::steal, 1, 5, 1);
    add(event_kind::idle_begin);
    add(event_kind::idle_end, 3);
    add(event_kind::park);
    add(event_kind::park_end, 9);
    add(event_kind::unpark, 1, 9);
    add(event_kind::stage_wait_check, 1, 2, 1);
    add(event_kind::iteration_start, 3, 0, 2, 0);
    add(event_kind::iteration_suspend, 3, t, 2, 0);
    add(event_kind::iteration_resume, 3, t, 2, 0);
    add(event_kind::iteration_suspend, 3, t, final_stage, 0);
    add(event_kind::iteration_resume, 3, t, final_stage, 0);
    add(event_kind::iteration_retire, 3, t, 1, 0);
    add(event_kind::throttle_suspend, 4, 4);
    add(event_kind::throttle_resume, 4, t, 4);
    for (std::uint64_t k = 0; k < 3; ++k) add(event_kind::counter, k, 5);
    add(event_kind::token_acquire, 1, 4, 1);
    add(event_kind::token_release, 1, 4, 0);
    add(event_kind::buffer_put, 1, 0, 1);
    add(event_kind::buffer_take, 1, 0, 0);
    add(event_kind::suspended_iterations, 2);
    for (std::uint32_t point = 0; point < 4; ++point) add(event_kind::earliest_resume, 1, 1, point, 0);
    add(event_kind::queue_put, 1, 1, 3);
    add(event_kind::queue_take, 1, 1, 2);
    add(event_kind::reorder_buffer, 2, 1);
    for (auto why : {trace::blocked_on::full, trace::blocked_on::empty}) {
        add(event_kind::blocked_begin, 1, 0, static_cast<std::uint32_t>(why));
        add(event_kind::blocked_end, 1, 0, static_cast<std::uint32_t>(why));
    }
    add(event_kind::stage_exception, 1, 2);
    add(event_kind::loop_cancelled, 3);
    for (std::uint32_t op = 0; op < 4; ++op) {
        add(event_kind::graph_reserve, 0, 1, op, 1);
        add(event_kind::graph_commit, 0, 1, op, 1);
    }
    for (std::uint32_t why = 0; why < 4; ++why) add(event_kind::graph_blocked, 1, 0, why);
    add(event_kind::graph_preempted, 1, 32);
    add(event_kind::graph_stage_done, 1);
    add(event_kind::detail_decision, trace::all_stages, 100, 1, 5);
    add(event_kind::detail_decision, 2, 100, 0, 5);
    add(event_kind::dropped, 4);
    add(event_kind::worker_stop);
    return r;
}

trace::perfetto_file every_kind_of_trace() {
    std::ostringstream out;
    trace::writer_options options;
    options.counter_quantum_ns = 0;
    trace::perfetto_writer w(out, options);
    const auto clock = trace::run_clock::fixed(trace::tick_converter({0, 0}, {1000, 1000}), 0);
    w.begin_run({"w · p · P=2",
                 2,
                 "{}",
                 {v::queue_packets("a"), std::string(v::footprint_packets), std::string(v::footprint_bytes)}},
                clock);
    const auto records = every_kind_of_record();
    w.add_chunk(0, records.data(), records.size());
    const event_record node[] = {{1, 0, 1, 0, event_kind::node_begin, 0, 0}, {2, 0, 1, 0, event_kind::node_end, 0, 0}};
    w.add_chunk(1, node, 2);
    const event_record stage_thread[] = {{1, 1, 0, 0, event_kind::thread_name, 0, 0}, node[0], node[1]};
    w.add_chunk(2, stage_thread, 3);   // "stage 1 · thread 0"
    w.add_chunk(3, node, 2);           // "thread 3"
    w.end_run();
    w.finish();
    return trace::read_perfetto(out.str());
}

template <class E>
std::set<E> all_but_other(int count) {
    std::set<E> s;
    for (int k = 0; k < count; ++k) s.insert(static_cast<E>(k));
    s.erase(E::other);
    return s;
}

}   // namespace

TEST_CASE("every name the writer emits classifies back to its kind", "[vocabulary]") {
    const trace::perfetto_file f = every_kind_of_trace();
    REQUIRE(f.problems.empty());
    std::set<v::track_name> tracks;
    std::set<v::counter_name> counters;
    std::set<v::slice_class> slices;
    std::set<v::instant_name> instants;
    std::set<std::string> user_keys;
    for (const auto& [uuid, t] : f.tracks) {
        if (t.is_process) continue;   // named by the run ("workload · policy · P=n")
        if (t.is_counter) {
            INFO(t.name);
            CHECK(v::classify_counter(t.name) != v::counter_name::other);
            counters.insert(v::classify_counter(t.name));
        } else {
            INFO(t.name);
            CHECK(v::classify_track(t.name) != v::track_name::other);
            tracks.insert(v::classify_track(t.name));
        }
    }
    for (const auto& e : f.events) {
        INFO(e.name);
        for (const auto& [key, value] : e.args) {   // the vocabulary's, or the user's as annotated
            INFO(key);
            CHECK((v::classify_arg(key) || v::user_key(key) == "bytes" || v::user_key(key) == "stage"));
            if (!v::classify_arg(key)) user_keys.insert(key);
        }
        for (const auto& [key, value] : e.str_args) CHECK(v::classify_arg(key));
        if (e.type == 1) {
            CHECK(v::classify_slice(e.name) != v::slice_class::other);
            slices.insert(v::classify_slice(e.name));
        } else if (e.type == 3) {
            CHECK(v::classify_instant(e.name) != v::instant_name::other);
            instants.insert(v::classify_instant(e.name));
        }
    }
    CHECK(user_keys == std::set<std::string>{"bytes", "user_stage"});
    CHECK(tracks == all_but_other<v::track_name>(static_cast<int>(v::track_name::other) + 1));
    CHECK(counters == all_but_other<v::counter_name>(static_cast<int>(v::counter_name::other) + 1));
    CHECK(instants == all_but_other<v::instant_name>(static_cast<int>(v::instant_name::other) + 1));
    // Queue operations as slices come only from other tracers.
    std::set<v::slice_class> written = all_but_other<v::slice_class>(static_cast<int>(v::slice_class::other) + 1);
    written.erase(v::slice_class::queue_operation);
    CHECK(slices == written);
}

TEST_CASE("numbered names the writer emits give their number back", "[vocabulary]") {
    const trace::perfetto_file f = every_kind_of_trace();
    for (const auto& e : f.events) {
        INFO(e.name);
        if (e.type == 1 && v::classify_slice(e.name) == v::slice_class::node) {
            CHECK(v::leading_number(e.name, v::stage_prefix) == e.args.at("stage"));
            if (e.args.count("nodes")) CHECK(v::is_folded_node(e.name));
        }
        if (e.type == 1 && v::starts_with(e.name, v::waiting_at_stage))
            CHECK(v::whole_number(e.name, v::waiting_at_stage) == 2u);
        if (e.type == 3 && v::classify_instant(e.name) == v::instant_name::wake)
            CHECK(v::whole_number(e.name, v::wake_prefix) == e.args.at("worker"));
    }
    std::set<std::uint64_t> workers;
    for (const auto& [uuid, t] : f.tracks)
        if (v::classify_track(t.name) == v::track_name::worker) workers.insert(*v::whole_number(t.name, v::worker_prefix));
    CHECK(workers == std::set<std::uint64_t>{0, 1});

    CHECK(v::numbered(v::stage_prefix, 3) == "stage 3");
    CHECK(v::numbered(v::queue_prefix, 2, v::fill_suffix) == "queue 2 fill");
    CHECK(v::leading_number("stage 3 \u00d717", v::stage_prefix) == 3u);
    CHECK(v::leading_number("stage 3\u201340", v::stage_prefix) == 3u);
    CHECK(v::leading_number("stage 12 (folded)", v::stage_prefix) == 12u);
    CHECK_FALSE(v::leading_number("stage x", v::stage_prefix));
    CHECK_FALSE(v::leading_number("stage ", v::stage_prefix));
    CHECK_FALSE(v::leading_number("stages 3", v::stage_prefix));
    CHECK(v::whole_number("worker 12", v::worker_prefix) == 12u);
    CHECK_FALSE(v::whole_number("worker 1x", v::worker_prefix));
    CHECK_FALSE(v::whole_number("worker ", v::worker_prefix));
    CHECK_FALSE(v::whole_number("worker 99999999999999999999999", v::worker_prefix));   // beyond 64 bits
    CHECK(v::classify_counter("stage 4 reorder buffer") == v::counter_name::reorder_buffer);
    CHECK(v::classify_counter("stage 4 buffer") == v::counter_name::stage_buffer);
    CHECK(v::classify_counter("queue 4 fill") == v::counter_name::queue_fill);
    CHECK(v::classify_counter("queue rays packets") == v::counter_name::queue_packets);
    CHECK(v::classify_track("stage 2 \u00b7 thread 1") == v::track_name::stage_thread);
    CHECK(v::classify_track("stage 2 \u00b7 thread") == v::track_name::other);
}

TEST_CASE("slice classes follow the prefixes the analysis and the viewer read", "[vocabulary]") {
    CHECK(v::classify_slice("stage 7") == v::slice_class::node);
    CHECK(v::classify_slice("stage x") == v::slice_class::other);
    CHECK(v::classify_slice("blocked: queue 1 full") == v::slice_class::blocked);
    CHECK(v::classify_slice("blocked on a lock") == v::slice_class::blocked);
    CHECK(v::classify_slice("waiting: queue 1 empty") == v::slice_class::waiting);
    CHECK(v::classify_slice("waiting to retire") == v::slice_class::waiting);
    for (std::string_view p : v::queue_operation_prefixes)
        CHECK(v::classify_slice(std::string(p) + " x") == v::slice_class::queue_operation);
    CHECK(v::classify_slice("something") == v::slice_class::other);
}

TEST_CASE("annotation keys, policies and programs round-trip", "[vocabulary]") {
    for (int k = 0; k < static_cast<int>(v::arg_key::count_); ++k)
        CHECK(v::classify_arg(v::key(static_cast<v::arg_key>(k))) == static_cast<v::arg_key>(k));
    CHECK_FALSE(v::classify_arg("no such key"));
    CHECK(v::classify_policy(v::piper) == v::policy_family::work_stealing);
    CHECK(v::classify_policy(v::piper_earliest) == v::policy_family::work_stealing);
    CHECK(v::classify_policy(v::tbb) == v::policy_family::tokens);
    CHECK(v::classify_policy(v::bind_to_stage) == v::policy_family::bound_threads);
    CHECK(v::classify_policy(v::serial) == v::policy_family::serial);
    for (std::string_view g : v::graph_policies) CHECK(v::classify_policy(g) == v::policy_family::stage_graph);
    CHECK(v::classify_policy("") == v::policy_family::unknown);
    CHECK(v::classify_policy("tbb2") == v::policy_family::unknown);
}
