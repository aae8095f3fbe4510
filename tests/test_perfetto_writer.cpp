// perfetto_writer: recorded runs become Perfetto traces that our own reader can parse back and
// that obey the importer's rules (sequence ids, flags, interning, described tracks, nesting).
#include <pipescope/pipescope.hpp>
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

struct track_event_packet {
    bool has_ts = false, has_seq = false;
    std::uint64_t ts = 0, seq = 0, flags = 0;
    std::uint64_t type = 0, track = 0;
    std::string name;   // resolved through the sequence's interned event names
    std::vector<std::uint64_t> flows, terminating;
    std::map<std::string, std::uint64_t> args;   // uint debug annotations, names resolved
};

struct parsed_trace {
    std::vector<track_event_packet> events;
    std::set<std::uint64_t> described;   // track uuids described so far
    std::vector<std::string> problems;   // rule violations found while reading, in file order
};

parsed_trace parse(const std::string& bytes) {
    parsed_trace out;
    struct seq_state {
        bool seen = false;
        std::map<std::uint64_t, std::string> names, arg_names;
    };
    std::map<std::uint64_t, seq_state> seqs;
    trace::proto::reader file(bytes);
    while (!file.done()) {
        const auto pf = file.next();
        REQUIRE(pf.number == 1);
        auto packet = trace::proto::reader::nested(pf);
        track_event_packet p;
        bool is_event = false;
        std::string_view te_bytes, interned;
        while (!packet.done()) {
            const auto fl = packet.next();
            switch (fl.number) {
                case 8: p.has_ts = true; p.ts = fl.value; break;
                case 10: p.has_seq = true; p.seq = fl.value; break;
                case 13: p.flags = fl.value; break;
                case 11: is_event = true; te_bytes = fl.bytes; break;
                case 12: interned = fl.bytes; break;
                case 58: out.problems.push_back("timestamp_clock_id set"); break;
                case 42: out.problems.push_back("previous_packet_dropped set"); break;
                case 60: {
                    auto td = trace::proto::reader::nested(fl);
                    while (!td.done()) {
                        const auto t = td.next();
                        if (t.number == 1) out.described.insert(t.value);
                    }
                    break;
                }
                default: break;
            }
        }
        if (!is_event) continue;
        if (!p.has_ts || !p.has_seq || p.seq == 0) out.problems.push_back("track event without timestamp or sequence id");
        seq_state& s = seqs[p.seq];
        if (!s.seen && p.flags != 3) out.problems.push_back("first packet of sequence " + std::to_string(p.seq) + " has flags " + std::to_string(p.flags));
        if (s.seen && p.flags != 2) out.problems.push_back("later packet of sequence " + std::to_string(p.seq) + " has flags " + std::to_string(p.flags));
        if (p.flags & 1) s.names.clear(), s.arg_names.clear();
        s.seen = true;
        if (!interned.empty()) {
            trace::proto::reader in(interned);
            while (!in.done()) {
                const auto e = in.next();
                if (e.number != 2 && e.number != 3) continue;
                auto entry = trace::proto::reader::nested(e);
                std::uint64_t iid = 0;
                std::string name;
                while (!entry.done()) {
                    const auto x = entry.next();
                    if (x.number == 1) iid = x.value;
                    if (x.number == 2) name = std::string(x.bytes);
                }
                (e.number == 2 ? s.names : s.arg_names)[iid] = name;
            }
        }
        trace::proto::reader te(te_bytes);
        while (!te.done()) {
            const auto x = te.next();
            switch (x.number) {
                case 9: p.type = x.value; break;
                case 11: p.track = x.value; break;
                case 10:
                    if (!s.names.count(x.value)) out.problems.push_back("event name iid not interned");
                    p.name = s.names[x.value];
                    break;
                case 23: p.name = std::string(x.bytes); break;
                case 47: REQUIRE(x.wire_type == 1); p.flows.push_back(x.value); break;
                case 48: REQUIRE(x.wire_type == 1); p.terminating.push_back(x.value); break;
                case 4: {
                    auto da = trace::proto::reader::nested(x);
                    std::string key;
                    std::uint64_t v = 0;
                    while (!da.done()) {
                        const auto y = da.next();
                        if (y.number == 1) {
                            if (!s.arg_names.count(y.value)) out.problems.push_back("annotation name iid not interned");
                            key = s.arg_names[y.value];
                        }
                        if (y.number == 3) v = y.value;
                    }
                    p.args[key] = v;
                    break;
                }
                default: break;
            }
        }
        if (p.type == 2 && !p.name.empty()) out.problems.push_back("SLICE_END with a name");
        if (!out.described.count(p.track)) out.problems.push_back("track " + std::to_string(p.track) + " used before it was described");
        out.events.push_back(std::move(p));
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
