// perfetto_writer: recorded runs become Perfetto traces that our own reader can parse back and
// that obey the importer's rules (sequence ids, flags, interning, described tracks, nesting).
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/proto_reader.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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
            out.problems.push_back("first packet of sequence " + std::to_string(e.seq) + " has flags " + std::to_string(e.flags));
        if (!first && e.flags != 2)
            out.problems.push_back("later packet of sequence " + std::to_string(e.seq) + " has flags " + std::to_string(e.flags));
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

event_record rec(std::uint64_t ticks, event_kind k, std::uint64_t a = 0, std::uint64_t b = 0, std::uint32_t c = 0) {
    return event_record{ticks, a, b, c, k, {}};
}

}  // namespace

TEST_CASE("perfetto writer: a recorded pipe-fib run parses back and follows the importer's rules", "[perfetto]") {
    scheduler s({2});
    trace::recorder recorder(s.workers(), 64u << 20);
    s.attach_recorder(&recorder);
    const auto result = workloads::pipe_fib_pipeline(s, 600, 8, {});
    REQUIRE(result == workloads::pipe_fib_serial(600));
    s.attach_recorder(nullptr);

    const auto path = std::filesystem::temp_directory_path() / "pipescope_test_pipe_fib.pftrace";
    std::filesystem::remove(path);
    std::map<event_kind, std::uint64_t> recorded;
    trace::perfetto_writer out(path);
    out.begin_run({"pipe-fib · piper · P=2", s.workers(), R"({"workload":"pipe-fib","n":600,"bits":8})"});
    recorder.flush([&](unsigned w, const event_record* r, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) ++recorded[r[k].kind];
        out.add_chunk(w, r, n);
    });
    out.end_run(trace::tick_converter(recorder.start_clock(), trace::clock_sample::take()));
    CHECK_FALSE(std::filesystem::exists(path));   // only the temporary file exists until finish()
    out.finish();
    REQUIRE(std::filesystem::exists(path));
    CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));

    const parsed_trace t = parse(read_file(path));
    for (const auto& p : t.problems) FAIL_CHECK(p);
    CHECK(t.problems.empty());
    check_nesting(t);

    std::uint64_t stage_slices = 0, steals = 0;
    // Flows are matched in timestamp order by the importer, not in file order (a wake-up starts in
    // the waker's sequence and ends in the woken worker's, which may come first in the file).
    std::map<std::uint64_t, std::uint64_t> flow_start_ts;
    for (const auto& e : t.events)
        for (auto id : e.flows) CHECK(flow_start_ts.emplace(id, e.ts).second);
    for (const auto& e : t.events) {
        if (e.type == 1 && e.name.rfind("stage ", 0) == 0) {
            ++stage_slices;
            CHECK(e.args.count("iteration") == 1);
            CHECK(e.args.at("stage") == std::stoull(e.name.substr(6)));
        }
        if (e.type == 3 && e.name == "steal") ++steals;
        for (auto id : e.terminating) {
            REQUIRE(flow_start_ts.count(id) == 1);
            CHECK(flow_start_ts.at(id) <= e.ts);   // the arrow points forward in time
        }
    }
    CHECK(stage_slices == recorded[event_kind::node_begin]);
    CHECK(steals == recorded[event_kind::steal]);
    CHECK(out.stats().flows >= steals);
    CHECK(out.stats().dropped_events == 0);
    CHECK(out.stats().unmatched_ends == 0);   // the runtime never records an end without its begin
    INFO("trace left at " << path.string() << " for check-trace.sh");
}

TEST_CASE("perfetto writer: unclosed slices are closed, unmatched ends dropped", "[perfetto]") {
    // Ticks are nanoseconds here: a converter with origin 0 and one ns per tick.
    const trace::tick_converter identity({0, 0}, {1000, 1000});
    const std::vector<event_record> w0 = {
        rec(100, event_kind::node_begin, 1, 0),
        rec(120, event_kind::unpark, 1),
        rec(150, event_kind::node_end, 1, 0),
        rec(160, event_kind::idle_end, 3),   // nothing idle is open: dropped
        rec(170, event_kind::node_begin, 2, 1),
        rec(180, event_kind::idle_begin),    // both still open at the end
    };
    const std::vector<event_record> w1 = {
        rec(100, event_kind::park),
        rec(130, event_kind::park_end),      // woken by worker 0's unpark at 120
        rec(140, event_kind::steal, 0, 0xabc, 1),
        rec(145, event_kind::dropped, 7),
        rec(146, event_kind::node_end, 9, 9),   // unmatched as well
    };

    std::ostringstream bytes;
    trace::perfetto_writer out(bytes);
    out.begin_run({"hand-made · test · P=2", 2, "{}"});
    out.add_chunk(0, w0.data(), 3);            // records of one worker may come in several chunks
    out.add_chunk(1, w1.data(), w1.size());
    out.add_chunk(0, w0.data() + 3, w0.size() - 3);
    out.end_run(identity);
    out.finish();

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
        if (e.name == "dropped 7 events") dropped = &e;
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
        out.begin_run({"abandoned", 1, "{}"});
        const event_record r = rec(5, event_kind::idle_begin);
        out.add_chunk(0, &r, 1);
        CHECK_THROWS_AS(out.add_chunk(1, &r, 1), std::out_of_range);
        out.end_run(trace::tick_converter({0, 0}, {1, 1}));
    }
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}
