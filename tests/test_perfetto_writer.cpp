// perfetto_writer: recorded runs become Perfetto traces that our own reader can parse back and
// that obey the importer's rules (sequence ids, flags, interning, described tracks, nesting).
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/proto_reader.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include "support/test_traces.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using pipescope::testing::checked_trace_path;
using pipescope::testing::save_for_checks;
using namespace pipescope;
using trace::event_kind;
using trace::event_record;

namespace {

// The library's reader checks the importer's rules; on top of it, our writer's own conventions:
// the first packet of every sequence clears incremental state (flags 3), later ones only need it.
using parsed_trace = trace::perfetto_file;
using track_event_packet = trace::track_event;

parsed_trace parse(const std::string& bytes) {
    parsed_trace out = trace::read_perfetto(bytes);
    std::set<std::uint64_t> seen;
    for (const auto& e : out.events) {
        const bool first = seen.insert(e.seq).second;
        if (first && e.flags != 3)
            out.problems.push_back("first packet of sequence " + std::to_string(e.seq) + " has flags " +
                                   std::to_string(e.flags));
        // After a loss the marker packet clears the state again (flags 3, previous_packet_dropped).
        if (!first && e.flags != 2 && !(e.flags == 3 && e.name == "events lost"))
            out.problems.push_back("later packet of sequence " + std::to_string(e.seq) + " has flags " +
                                   std::to_string(e.flags));
    }
    return out;
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Per track: BEGIN/END balance, and in timestamp order (ties in file order, as the importer
// sorts) an END never closes a slice that is not open.
void check_nesting(const parsed_trace& t) {
    std::map<std::uint64_t, std::vector<const track_event_packet*>> by_track;
    for (const auto& e : t.events)
        if (e.type == 1 || e.type == 2) by_track[e.track].push_back(&e);
    for (auto& [track, evs] : by_track) {
        std::stable_sort(evs.begin(), evs.end(), [](auto* x, auto* y) { return x->ts < y->ts; });
        long depth = 0;
        for (auto* e : evs) {
            depth += e->type == 1 ? 1 : -1;
            INFO("track " << track << " at " << e->ts);
            REQUIRE(depth >= 0);
        }
        INFO("track " << track);
        CHECK(depth == 0);
    }
}

event_record rec(std::uint64_t ticks, event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0,
                 std::uint16_t d = 0) {
    return event_record{ticks, a, b, c, k, 0, d};
}

// Ticks are nanoseconds in the hand-made tests: origin 0, one ns per tick.
trace::run_clock identity_clock() { return trace::run_clock::fixed(trace::tick_converter({0, 0}, {1000, 1000}), 0); }
const trace::writer_options plain{false, 1};   // uncompressed: the packets are directly visible

}   // namespace

TEST_CASE("perfetto writer: a recorded pipe-fib run parses back and follows the importer's rules",
          "[perfetto][trace-file]") {
    scheduler s({2});
    trace::recorder recorder(s.workers(), 64u << 20);
    s.attach_recorder(&recorder);
    const auto result = workloads::pipe_fib_pipeline(s, 600, 8, {});
    REQUIRE(result == workloads::pipe_fib_serial(600));
    s.attach_recorder(nullptr);

    const auto path = checked_trace_path("writer-pipe-fib.pftrace");
    std::filesystem::remove(path);
    std::map<event_kind, std::uint64_t> recorded;
    trace::perfetto_writer out(path);
    out.begin_run({"pipe-fib · piper · P=2", s.workers(), R"({"workload":"pipe-fib","n":600,"bits":8})", {}},
                  trace::run_clock::calibrating(recorder.start_clock()));
    recorder.flush([&](unsigned w, const event_record* r, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) ++recorded[r[k].kind];
        out.add_chunk(w, r, n);
    });
    out.end_run();
    CHECK_FALSE(std::filesystem::exists(path));   // only the temporary file exists until finish()
    out.finish();
    REQUIRE(std::filesystem::exists(path));
    CHECK(pipescope::testing::temporaries_of(path).empty());

    const parsed_trace t = parse(read_file(path));
    for (const auto& p : t.problems) FAIL_CHECK(p);
    CHECK(t.problems.empty());
    check_nesting(t);

    std::uint64_t stage_slices = 0, steals = 0;
    // Flows are matched in timestamp order by the importer, not in file order (a wake-up starts in
    // the waker's sequence and ends in the woken worker's, which may come first in the file). A
    // resumption flow's id names the iteration, so an iteration that suspends twice reuses it after
    // the first flow has ended (the importer closes a flow at its terminating id).
    std::map<std::uint64_t, std::vector<std::uint64_t>> flow_starts;
    for (const auto& e : t.events)
        for (auto id : e.flows) flow_starts[id].push_back(e.ts);
    for (const auto& e : t.events) {
        if (e.type == 1 && e.name.rfind("stage ", 0) == 0) {
            ++stage_slices;
            CHECK(e.args.count("iteration") == 1);
            CHECK(e.args.at("stage") == std::stoull(e.name.substr(6)));
        }
        if (e.type == 3 && e.name == "steal") ++steals;
        for (auto id : e.terminating) {
            REQUIRE(flow_starts.count(id) == 1);
            const auto& starts = flow_starts.at(id);
            // the arrow points forward in time: some start of this id comes no later than its end
            CHECK(std::any_of(starts.begin(), starts.end(), [&](std::uint64_t ts) { return ts <= e.ts; }));
        }
    }
    CHECK(stage_slices == recorded[event_kind::node_begin]);
    CHECK(steals == recorded[event_kind::steal]);
    CHECK(out.stats().flows >= steals);
    CHECK(out.stats().dropped_events == 0);
    CHECK(out.stats().unmatched_ends == 0);   // the runtime never records an end without its begin
    INFO("trace left at " << path.string() << " for check-trace.sh");
}

TEST_CASE("perfetto writer: unclosed slices are closed, unmatched ends dropped", "[perfetto][trace-file]") {
    const std::vector<event_record> w0 = {
        rec(100, event_kind::node_begin, 1, 0), rec(120, event_kind::unpark, 1, 77),   // wake id 77
        rec(150, event_kind::node_end, 1, 0),   rec(160, event_kind::idle_end, 3),     // nothing idle is open: dropped
        rec(170, event_kind::node_begin, 2, 1), rec(180, event_kind::idle_begin),      // both still open at the end
    };
    const std::vector<event_record> w1 = {
        rec(100, event_kind::park),
        rec(130, event_kind::park_end, 77),   // woken by worker 0's unpark at 120
        rec(140, event_kind::steal, 0, 0xabc, 1),
        rec(145, event_kind::dropped, 7),
        rec(146, event_kind::node_end, 9, 9),   // unmatched as well
    };

    std::ostringstream bytes;
    trace::perfetto_writer out(bytes, plain);
    out.begin_run({"hand-made · test · P=2", 2, "{}", {}}, identity_clock());
    out.add_chunk(0, w0.data(), 3);   // records of one worker may come in several chunks
    out.add_chunk(1, w1.data(), w1.size());
    out.add_chunk(0, w0.data() + 3, w0.size() - 3);
    out.end_run();
    out.finish();
    save_for_checks("writer-repaired.pftrace", bytes.str());

    CHECK(out.stats().unmatched_ends == 2);
    CHECK(out.stats().closed_at_end == 2);
    CHECK(out.stats().flows == 2);
    CHECK(out.stats().dropped_events == 7);

    const parsed_trace t = parse(bytes.str());
    for (const auto& p : t.problems) FAIL_CHECK(p);
    check_nesting(t);

    std::vector<const track_event_packet*> ends0, begins0;
    std::uint64_t track0 = 0;
    for (const auto& e : t.events)
        if (e.name == "stage 0") track0 = e.track;
    REQUIRE(track0 != 0);
    for (const auto& e : t.events) {
        if (e.track != track0) continue;
        if (e.type == 1) begins0.push_back(&e);
        if (e.type == 2) ends0.push_back(&e);
    }
    REQUIRE(begins0.size() == 3);   // stage 0, stage 1, idle
    REQUIRE(ends0.size() == 3);     // stage 0 at 150; idle and stage 1 closed at the last timestamp
    CHECK(ends0[0]->ts == 150);
    CHECK(ends0[1]->ts == 180);
    CHECK(ends0[2]->ts == 180);
    for (const auto* e : ends0) CHECK(e->args.count("failed_steals") == 0);   // the dropped idle_end left no trace

    // The steal: "stolen" on worker 0's track starts the flow, "steal" on worker 1's ends it.
    const track_event_packet *stolen = nullptr, *steal = nullptr, *wake = nullptr, *woken = nullptr, *dropped = nullptr;
    for (const auto& e : t.events) {
        if (e.name == "stolen") stolen = &e;
        if (e.name == "steal") steal = &e;
        if (e.name == "wake worker 1") wake = &e;
        if (e.name == "woken") woken = &e;
        if (e.name == "events lost") dropped = &e;
    }
    REQUIRE(stolen);
    REQUIRE(steal);
    CHECK(stolen->track == track0);
    CHECK(steal->track != track0);
    CHECK(stolen->ts == 140);
    CHECK(steal->ts == 140);
    REQUIRE(stolen->flows.size() == 1);
    CHECK(steal->terminating == stolen->flows);
    CHECK(steal->args.at("victim") == 0);
    REQUIRE(wake);
    REQUIRE(woken);
    CHECK(woken->ts == 130);
    CHECK(woken->track == steal->track);
    CHECK(woken->terminating == wake->flows);
    REQUIRE(dropped);
    CHECK(dropped->args.at("dropped") == 7);
}

TEST_CASE("perfetto writer: without finish() the target file is not created", "[perfetto]") {
    const auto path = std::filesystem::temp_directory_path() / "pipescope_test_abandoned.pftrace";
    std::filesystem::remove(path);
    {
        trace::perfetto_writer out(path);
        out.begin_run({"abandoned", 1, "{}", {}}, identity_clock());
        const event_record r = rec(5, event_kind::idle_begin);
        out.add_chunk(0, &r, 1);
        // Writers beyond the run's workers are recording threads that are not workers (their tracks are
        // described at their first record); only writers beyond the format's limit are refused.
        CHECK_THROWS_AS(out.add_chunk(0xFFFF, &r, 1), std::out_of_range);
        out.end_run();
    }
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK(pipescope::testing::temporaries_of(path).empty());
}

TEST_CASE("perfetto writer: line tracks, resumption flows and the live-iterations counter", "[perfetto][trace-file]") {
    // Iteration 3 (slot 1) starts at 100 on worker 0, suspends at 200 waiting at stage 2, is resumed
    // by worker 1 at 300 and runs stage 2 on worker 0 from 400; it retires at 500. The control is
    // throttled from 150 to 500.
    const std::vector<event_record> w0 = {
        rec(100, event_kind::iteration_start, 3, 0, 1, 1),
        rec(100, event_kind::node_begin, 3, 0),
        rec(150, event_kind::throttle_suspend, 4, 4),
        rec(190, event_kind::node_end, 3, 0),
        rec(200, event_kind::iteration_suspend, 3, 100, 2, 1),
        rec(400, event_kind::node_begin, 3, 2, trace::node_waited | trace::node_resumed),
        rec(480, event_kind::node_end, 3, 2),
        rec(500, event_kind::iteration_retire, 3, 300, 0, 1),
    };
    const std::vector<event_record> w1 = {
        rec(250, event_kind::node_begin, 2, 2),
        rec(300, event_kind::iteration_resume, 3, 200, 2, 1),
        rec(310, event_kind::node_end, 2, 2),
        rec(500, event_kind::throttle_resume, 3, 150, 4),
    };
    for (const bool compress : {false, true}) {
        INFO("compressed: " << compress);
        std::ostringstream bytes;
        trace::perfetto_writer out(bytes, {compress, 6});
        out.begin_run({"lines · test · P=2", 2, "{}", {}}, identity_clock());
        out.add_chunk(1, w1.data(), w1.size());   // chunks arrive in any order across workers
        out.add_chunk(0, w0.data(), w0.size());
        out.end_run();
        out.finish();
        save_for_checks(compress ? "writer-lines-compressed.pftrace" : "writer-lines.pftrace", bytes.str());

        const parsed_trace t = parse(bytes.str());
        for (const auto& p : t.problems) FAIL_CHECK(p);
        check_nesting(t);

        std::map<std::string, std::uint64_t> track_named;
        for (const auto& [uuid, info] : t.tracks) track_named[info.name] = uuid;
        REQUIRE(track_named.count("line 1") == 1);
        REQUIRE(track_named.count("control") == 1);
        REQUIRE(track_named.count("live iterations") == 1);
        CHECK(t.tracks.at(track_named["line 1"]).parent == track_named.at("lines"));

        // Each state's begin and end are written together (by the worker that ended it), so
        // pairs can be read in file order. The line shows running [100, 200], waiting at stage 2 [200, 300], running [300, 500],
        // each begin moved 1 ns later so that no begin shares a timestamp with the previous end.
        std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> line;
        std::vector<const track_event_packet*> open;
        for (const auto& e : t.events) {
            if (e.track != track_named["line 1"]) continue;
            if (e.type == 1) open.push_back(&e);
            if (e.type == 2) {
                REQUIRE_FALSE(open.empty());
                line.emplace_back(open.back()->name, open.back()->ts, e.ts);
                CHECK(open.back()->args.at("iteration") == 3);
                open.pop_back();
            }
        }
        using state = std::tuple<std::string, std::uint64_t, std::uint64_t>;
        std::sort(line.begin(), line.end(), [](const state& x, const state& y) { return std::get<1>(x) < std::get<1>(y); });
        CHECK(line == std::vector<state>{{"running", 101, 200}, {"waiting at stage 2", 201, 300}, {"running", 301, 500}});

        const track_event_packet *resume = nullptr, *resumed_node = nullptr, *throttled = nullptr;
        std::vector<std::int64_t> live;
        for (const auto& e : t.events) {
            if (e.name == "resume") resume = &e;
            if (e.type == 1 && e.name == "stage 2" && e.args.at("iteration") == 3) resumed_node = &e;
            if (e.type == 1 && e.name == "throttled") throttled = &e;
            if (e.type == 4) live.push_back(e.counter_value);
        }
        REQUIRE(resume);
        REQUIRE(resumed_node);
        REQUIRE(resume->flows.size() == 1);
        CHECK(resumed_node->terminating == resume->flows);   // resume (worker 1) -> stage 2 (worker 0)
        CHECK(resumed_node->args.at("waited") == 1);
        REQUIRE(throttled);
        CHECK(throttled->track == track_named["control"]);
        CHECK(throttled->ts == 151);
        CHECK(live == std::vector<std::int64_t>{1, 0});
        CHECK(out.stats().flows == 1);
    }
}

TEST_CASE("perfetto writer: streams each chunk to the file at once, compressed or not", "[perfetto]") {
    std::vector<event_record> chunk;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        chunk.push_back(rec(10 * i, event_kind::node_begin, i, 1));
        chunk.push_back(rec(10 * i + 5, event_kind::node_end, i, 1));
    }
    std::map<bool, std::size_t> sizes;
    for (const bool compress : {false, true}) {
        std::ostringstream bytes;
        trace::perfetto_writer out(bytes, {compress, 6});
        out.begin_run({"stream", 1, "{}", {}}, identity_clock());
        std::size_t before = bytes.str().size();
        for (int k = 0; k < 3; ++k) {
            for (auto& r : chunk) r.ticks += 100000;
            out.add_chunk(0, chunk.data(), chunk.size());
            const std::size_t now = bytes.str().size();
            CHECK(now > before);   // nothing is held back until the end of the run
            before = now;
        }
        out.end_run();
        out.finish();
        CHECK(out.stats().bytes == bytes.str().size());
        const parsed_trace t = parse(bytes.str());
        for (const auto& p : t.problems) FAIL_CHECK(p);
        const auto s = trace::summarize(t);
        CHECK(s.slices == 3000);
        CHECK(s.open_slices == 0);
        sizes[compress] = bytes.str().size();
    }
    INFO("plain " << sizes[false] << " bytes, compressed " << sizes[true] << " bytes");
    CHECK(sizes[true] * 4 < sizes[false]);
}
