// The trace model: tracks, slices matched after sorting by (timestamp, file position), instants,
// counters, flows, runs with their metadata, and the pipeline DAG rebuilt from hand-built
// pipescope traces whose DAG is known exactly.
#include <pipescope/trace/trace_model.hpp>

#include "support/pipescope_run_builder.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace pipescope::trace;
using pipescope::test::trace_builder;

namespace {

// A pipescope run in the writer's layout (docs/design.md, "Events and the Perfetto layout").
using run_builder = pipescope::test::pipescope_run_builder;

std::string metadata(unsigned K) {
    return R"({"workload":"pipe-fib","policy":"piper","workers":2,"params":{},"program":{"kind":"pipeline","K":)" +
           std::to_string(K) +
           R"(,"line_slots":8,"stages":[{"index":0,"name":"s0","kind":"serial"},{"index":1,"name":"s1","kind":"parallel"},{"index":2,"name":"s2","kind":"serial"}]},"machine":{}})";
}

using edge_t = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::string>;

std::set<edge_t> edges_of(const pipeline_dag& d) {
    std::set<edge_t> out;
    for (const auto& e : d.edges)
        out.emplace(d.nodes[e.from].iteration, d.nodes[e.from].stage, d.nodes[e.to].iteration, d.nodes[e.to].stage,
                    to_string(e.kind));
    return out;
}

}   // namespace

TEST_CASE("trace model: a hand-built pipescope run gives exactly its DAG", "[trace][model][dag]") {
    trace_builder b;
    run_builder r{b, std::uint64_t{1} << 32, 1000, 2};
    r.describe("pipe-fib · piper · P=2", metadata(2), 2, 1);
    // Iteration 0: stages 0, 1, 2. Iteration 1: 0, 2 (stage 1 is a null node), waits at 2.
    // Iteration 2: 0, 1 (waited), 2 (waited). Iteration 3: 0, 1 (waited), 2.
    r.node(0, 0, 0, 10, 20);
    r.node(0, 0, 1, 20, 30);
    r.node(0, 0, 2, 30, 40);
    r.node(1, 1, 0, 21, 25);
    r.node(1, 1, 2, 41, 50, true);
    r.node(0, 2, 0, 40, 45);
    r.node(0, 2, 1, 45, 55, true);
    r.node(1, 2, 2, 55, 60, true);
    r.node(1, 3, 0, 60, 62);
    r.node(0, 3, 1, 62, 70, true);
    r.node(0, 3, 2, 70, 80);
    b.count(10, r.counter(), 1, 1000 + r.pid);
    b.count(21, r.counter(), 2, 1000 + r.pid);
    b.slice_begin(25, r.line(1), "waiting at stage 2", {{"iteration", 1}}, 1000 + r.pid);
    b.slice_end(41, r.line(1), 1000 + r.pid);

    const trace_model m = load_trace(b.view());
    INFO((m.problems.empty() ? std::string() : m.problems.front()));
    CHECK(m.problems.empty());
    REQUIRE(m.runs.size() == 1);
    const run& ru = m.runs[0];
    CHECK(ru.name == "pipe-fib · piper · P=2");
    CHECK(ru.pid == 1000);
    CHECK(ru.declared_workers == 2);
    CHECK(ru.metadata_valid);
    CHECK(ru.workload == "pipe-fib");
    CHECK(ru.policy == "piper");
    CHECK(ru.program_kind == "pipeline");
    REQUIRE(ru.stages.size() == 3);
    CHECK(ru.stages[1].name == "s1");
    CHECK(ru.stages[1].kind == "parallel");
    REQUIRE(ru.workers.size() == 2);
    CHECK(m.tracks[ru.workers[1]].name == "worker 1");
    CHECK(m.tracks[ru.workers[1]].worker == 1);
    REQUIRE(ru.lines.size() == 2);
    CHECK(m.tracks[ru.lines[1]].kind == track_kind::line);
    CHECK(m.tracks[ru.lines[1]].slices.size() == 1);
    CHECK(ru.tracks.front() == ru.track);
    CHECK(ru.tracks.size() == 1 + 2 + 1 + 2 + 1 + 1);
    const track& live = m.tracks[m.find_track(r.counter())];
    CHECK(live.kind == track_kind::counter);
    REQUIRE(live.counters.size() == 2);
    CHECK(live.counters[1].value == 2);

    const pipeline_dag& d = ru.dag;
    CHECK(d.K == 2);
    CHECK(d.nodes.size() == 11);
    CHECK(d.iterations == 4);
    CHECK(d.find(1, 1) == no_index);   // the null node
    const auto& n12 = d.nodes[d.find(1, 2)];
    CHECK(n12.start == 41);
    CHECK(n12.end == 50);
    CHECK(n12.worker == 1);
    CHECK(n12.waited);
    CHECK(m.tracks[n12.slice.track].slices[n12.slice.index].begin == 41);

    const std::set<edge_t> expected = {
        // stage edges
        {0, 0, 0, 1, "stage"},
        {0, 1, 0, 2, "stage"},
        {1, 0, 1, 2, "stage"},
        {2, 0, 2, 1, "stage"},
        {2, 1, 2, 2, "stage"},
        {3, 0, 3, 1, "stage"},
        {3, 1, 3, 2, "stage"},
        // cross edges: from the node of i-1 that holds stage j (its last node with stage <= j)
        {0, 2, 1, 2, "cross"},
        {1, 0, 2, 1, "cross"},
        {1, 2, 2, 2, "cross"},
        {2, 1, 3, 1, "cross"},
        // the implicit final stage where no cross edge already comes from i-1's last node
        {2, 2, 3, 2, "retire"},
        // throttling, K = 2
        {0, 2, 2, 0, "throttle"},
        {1, 2, 3, 0, "throttle"},
    };
    CHECK(edges_of(d) == expected);
    CHECK(d.edges.size() == expected.size());
}

TEST_CASE("trace model: BEGIN/END matched after sorting by (timestamp, file position)", "[trace][model]") {
    trace_builder b;
    b.custom(7, 0, "t");
    // File order out of time order; END@100 written before BEGIN@100: siblings.
    b.slice_begin(10, 7, "A.child");
    b.slice_end(20, 7);
    b.slice_begin(0, 7, "A");
    b.slice_end(100, 7);
    b.slice_begin(100, 7, "B");
    b.slice_end(150, 7);
    b.mark(15, 7, "inside child");
    b.slice_end(300, 7);             // nothing open at 300: unmatched
    b.slice_begin(400, 7, "open");   // never closed
    b.mark(450, 7, "last");
    const trace_model m = load_trace(b.view());
    const track& t = m.tracks[m.find_track(7)];
    REQUIRE(t.slices.size() == 4);
    CHECK(m.str(t.slices[0].name) == "A");
    CHECK(t.slices[0].begin == 0);
    CHECK(t.slices[0].end == 100);
    CHECK(t.slices[0].depth == 0);
    CHECK(m.str(t.slices[1].name) == "A.child");
    CHECK(t.slices[1].depth == 1);
    CHECK(m.str(t.slices[2].name) == "B");
    CHECK(t.slices[2].depth == 0);   // a sibling of A, not its child
    CHECK(t.slices[2].end == 150);
    CHECK(t.slices[3].unterminated);
    CHECK(t.slices[3].end == 450);
    CHECK(t.unmatched_ends == 1);
    CHECK(m.unmatched_ends == 1);
    CHECK(m.unterminated_slices == 1);
    REQUIRE(t.instants.size() == 2);
    CHECK(t.instants[0].depth == 2);
    CHECK(t.instants[1].depth == 1);
    CHECK(t.max_depth == 1);
    CHECK(m.first_ts == 0);
    CHECK(m.last_ts == 450);
    CHECK(
        std::is_sorted(t.slices.begin(), t.slices.end(), [](const slice& x, const slice& y) { return x.begin < y.begin; }));
}

TEST_CASE("trace model: flows begin, step and terminate in timestamp order", "[trace][model][flows]") {
    trace_builder b;
    b.custom(1, 0, "a");
    b.custom(2, 0, "b");
    b.mark(300, 2, "end", {}, {}, {5});   // terminates flow 5 (file order before its start)
    b.mark(100, 1, "start", {}, {5});
    b.slice_begin(200, 2, "step");
    b.slice_end(250, 2);
    {
        trace_builder::event e;
        e.ts = 250;
        e.type = trace_builder::end;
        e.track = 1;
        b.add(e);   // unmatched END with no flow: ignored
    }
    // A flow on an END binds to the slice it closes.
    b.slice_begin(400, 1, "x");
    {
        trace_builder::event e;
        e.ts = 410, e.type = trace_builder::end, e.track = 1, e.flows = {6};
        b.add(e);
    }
    b.mark(420, 2, "y", {}, {}, {6});
    b.mark(500, 2, "z", {}, {}, {77});   // terminating an inactive id: ignored
    const trace_model m = load_trace(b.view());
    REQUIRE(m.flows.size() == 2);
    const auto& f0 = m.flows[0];
    CHECK(f0.id == 5);
    CHECK(m.tracks[f0.from.track].uuid == 1);
    CHECK(f0.from.is_instant);
    CHECK(m.tracks[f0.to.track].uuid == 2);
    CHECK(m.str(m.tracks[f0.to.track].instants[f0.to.index].name) == "end");
    const auto& f1 = m.flows[1];
    CHECK(f1.id == 6);
    CHECK(!f1.from.is_instant);
    CHECK(m.str(m.tracks[f1.from.track].slices[f1.from.index].name) == "x");
    CHECK(m.str(m.tracks[f1.to.track].instants[f1.to.index].name) == "y");
}

TEST_CASE("trace model: interned names, categories and several sequences", "[trace][model]") {
    trace_builder b;
    b.thread(10, 5, 6, "main");
    for (std::uint64_t seq : {1, 2}) {
        trace_builder::event e;
        e.ts = 10 * seq, e.seq = seq, e.flags = 3, e.type = trace_builder::begin, e.track = 10;
        e.intern_names = {{1, seq == 1 ? "from seq 1" : "from seq 2"}};
        e.name_iid = 1;
        b.add(e);
        e = {};
        e.ts = 10 * seq + 5, e.seq = seq, e.flags = 2, e.type = trace_builder::end, e.track = 10;
        b.add(e);
    }
    const trace_model m = load_trace(b.view());
    CHECK(m.problems.empty());
    const track& t = m.tracks[m.find_track(10)];
    CHECK(t.kind == track_kind::thread);
    REQUIRE(t.slices.size() == 2);
    CHECK(m.str(t.slices[0].name) == "from seq 1");
    CHECK(m.str(t.slices[1].name) == "from seq 2");
    // Each name is stored once however often it is used.
    CHECK(std::count(m.strings.begin(), m.strings.end(), "from seq 1") == 1);
}

TEST_CASE("trace model: truncated at every byte: a decode error or a partial model", "[trace][model][errors]") {
    trace_builder b;
    run_builder r{b, std::uint64_t{1} << 32, 1000, 1};
    r.describe("w · p · P=1", metadata(4), 1, 1);
    r.node(0, 0, 0, 10, 20);
    r.node(0, 0, 1, 20, 30, true);
    const std::string good = b.str();
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
        CAPTURE(cut);
        try {
            const trace_model m = load_trace(std::string_view(good).substr(0, cut));
            CHECK(m.runs.size() <= 1);
        } catch (const proto::decode_error& e) {
            CHECK(e.offset() <= cut);
        }
    }
}

TEST_CASE("trace model: files that cannot be read give a clear error", "[trace][model][errors]") {
    const auto dir = std::filesystem::temp_directory_path() / "pipescope-model-test";
    std::filesystem::create_directories(dir);
    CHECK_THROWS_WITH(load_trace_file(dir / "missing.pftrace"),
                      Catch::Equals("cannot open " + (dir / "missing.pftrace").string() + ": no such file or directory"));
    CHECK_THROWS_WITH(load_trace_file(dir), Catch::Equals(dir.string() + ": is a directory (not a regular file)"));
    { std::ofstream(dir / "big.pftrace") << '\x0a' << std::string(99, 'x'); }
    CHECK_THROWS_WITH(load_trace_file(dir / "big.pftrace", {}, 10), Catch::Contains("larger than the limit of 10 bytes"));
    // A file larger than the memory (sparse: it takes no disk space) is refused before any reading.
    const std::uint64_t memory = physical_memory_bytes();
    REQUIRE(memory > 0);
    std::filesystem::resize_file(dir / "big.pftrace", memory + 1);
    CHECK_THROWS_WITH(load_trace_file(dir / "big.pftrace", {}, ~std::uint64_t{0}),
                      Catch::Contains(std::to_string(memory + 1) + " bytes is larger than this machine's memory"));
    std::filesystem::remove_all(dir);
}

// Not a test: the reading speed on a big synthetic pipescope trace. Run with
//   pipescope_tests "[.bench]"   (build type Release for a meaningful number)
TEST_CASE("trace model: reading speed", "[.bench]") {
    const unsigned workers = 4;
    const std::uint64_t iterations = 1'000'000;   // 3 stages: 6 M node events + instants
    trace_builder b;
    run_builder r{b, std::uint64_t{1} << 32, 1000, workers};
    r.describe("bench · piper · P=4", metadata(16), 2, 1);
    b.bytes.reserve(600u << 20);
    // The writer's form: interned names and annotation names per sequence.
    std::vector<std::vector<std::uint8_t>> seqs(workers);
    std::uint64_t events = 0;
    {
        pipescope::trace::proto::writer w(b.bytes);
        std::uint64_t ts = 100;
        for (std::uint64_t i = 0; i < iterations; ++i) {
            const unsigned wk = static_cast<unsigned>(i % workers);
            for (std::uint64_t j = 0; j < 3; ++j) {
                for (int end = 0; end < 2; ++end) {
                    pipescope::trace::proto::nested packet(w, 1);
                    w.uint_field(8, ts += 7);
                    w.uint_field(10, 1 + wk);
                    const bool first = i < workers && j == 0 && end == 0;
                    w.uint_field(13, first ? 3 : 2);
                    if (first) {
                        pipescope::trace::proto::nested in(w, 12);
                        for (std::uint64_t s = 0; s < 3; ++s) {
                            pipescope::trace::proto::nested en(w, 2);
                            w.uint_field(1, s + 1);
                            w.bytes_field(2, "stage " + std::to_string(s));
                        }
                        const char* names[] = {"iteration", "stage", "waited"};
                        for (std::uint64_t s = 0; s < 3; ++s) {
                            pipescope::trace::proto::nested en(w, 3);
                            w.uint_field(1, s + 1);
                            w.bytes_field(2, std::string_view(names[s]));
                        }
                    }
                    pipescope::trace::proto::nested te(w, 11);
                    w.uint_field(9, end ? 2 : 1);
                    w.uint_field(11, r.worker(wk));
                    if (!end) {
                        w.uint_field(10, j + 1);
                        const std::uint64_t vals[] = {i, j, j == 1};
                        for (std::uint64_t a = 0; a < 3; ++a) {
                            pipescope::trace::proto::nested da(w, 4);
                            w.uint_field(1, a + 1);
                            w.uint_field(3, vals[a]);
                        }
                    }
                    ++events;
                }
            }
        }
    }
    struct null_visitor final : perfetto_visitor {
        std::uint64_t n = 0;
        void on_track(const decoded_track&) override {}
        void on_event(const decoded_event&) override { ++n; }
        void on_problem(std::string) override {}
    } nv;
    string_table st;
    const auto d0 = std::chrono::steady_clock::now();
    decode_perfetto(b.view(), nv, st);
    const double ds = std::chrono::duration<double>(std::chrono::steady_clock::now() - d0).count();
    std::printf("decode only: %llu events in %.3f s: %.1f M events/s\n", (unsigned long long)nv.n, ds, nv.n / ds / 1e6);
    const auto t0 = std::chrono::steady_clock::now();
    const trace_model m = load_trace(b.view());
    const auto t1 = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    std::printf("read %llu events (%.1f MB) in %.3f s: %.1f M events/s, %.0f MB/s; DAG: %zu nodes, %zu edges\n",
                (unsigned long long)events, b.bytes.size() / 1e6, s, events / s / 1e6, b.bytes.size() / s / 1e6,
                m.runs[0].dag.nodes.size(), m.runs[0].dag.edges.size());
    CHECK(m.slices == events / 2);
}

// ---------------------------------------------------------------------------------------------
// Foreign traces written by Perfetto's Python TraceProtoBuilder (tests/data/make_foreign_traces.py),
// compared with what the script says it wrote (tests/data/foreign_expected.json).

#include <nlohmann/json.hpp>

namespace {

const std::filesystem::path data_dir = std::filesystem::path(__FILE__).parent_path() / "data";

nlohmann::json label(const trace_model& m, const event_ref& r) {
    const track& t = m.tracks[r.track];
    if (r.is_instant) return {t.name, "instant", m.str(t.instants[r.index].name), t.instants[r.index].ts};
    return {t.name, "slice", m.str(t.slices[r.index].name), t.slices[r.index].begin};
}

}   // namespace

TEST_CASE("trace model: foreign traces read exactly what Perfetto's Python builder wrote", "[trace][model][foreign]") {
    std::ifstream in(data_dir / "foreign_expected.json");
    REQUIRE(in);
    const auto expected = nlohmann::json::parse(in);
    REQUIRE(expected.size() == 3);
    for (const auto& [file, exp] : expected.items()) {
        SECTION(file) {
            const trace_model m = load_trace_file(data_dir / file);
            CHECK(m.problems.empty());
            std::size_t tracks_with_events = 0;
            for (const auto& et : exp.at("tracks")) {
                const std::string name = et.at("name");
                INFO(file << " track " << name);
                const track* t = nullptr;
                for (const auto& mt : m.tracks)
                    if (mt.name == name) t = &mt;
                REQUIRE(t != nullptr);
                ++tracks_with_events;
                REQUIRE(t->slices.size() == et.at("slices").size());
                for (std::size_t i = 0; i < t->slices.size(); ++i) {
                    const auto& es = et.at("slices")[i];
                    CHECK(m.str(t->slices[i].name) == es[0].get<std::string>());
                    CHECK(t->slices[i].begin == es[1].get<std::uint64_t>());
                    CHECK(t->slices[i].end == es[2].get<std::uint64_t>());
                    CHECK(t->slices[i].depth == es[3].get<unsigned>());
                    CHECK(!t->slices[i].unterminated);
                }
                REQUIRE(t->instants.size() == et.at("instants").size());
                for (std::size_t i = 0; i < t->instants.size(); ++i) {
                    const auto& ei = et.at("instants")[i];
                    CHECK(m.str(t->instants[i].name) == ei[0].get<std::string>());
                    CHECK(t->instants[i].ts == ei[1].get<std::uint64_t>());
                    CHECK(t->instants[i].depth == ei[2].get<unsigned>());
                }
                REQUIRE(t->counters.size() == et.at("counters").size());
                for (std::size_t i = 0; i < t->counters.size(); ++i) {
                    CHECK(t->counters[i].ts == et.at("counters")[i][0].get<std::uint64_t>());
                    CHECK(t->counters[i].value == et.at("counters")[i][1].get<double>());
                }
            }
            CHECK(tracks_with_events == exp.at("tracks").size());
            REQUIRE(m.flows.size() == exp.at("flows").size());
            for (std::size_t i = 0; i < m.flows.size(); ++i) {
                CHECK(label(m, m.flows[i].from) == exp.at("flows")[i][0]);
                CHECK(label(m, m.flows[i].to) == exp.at("flows")[i][1]);
            }
        }
    }
}

TEST_CASE("trace model: foreign annotations, categories and interned annotation names", "[trace][model][foreign]") {
    const trace_model m = load_trace_file(data_dir / "foreign_nested.pftrace");
    const track& main = m.tracks[m.find_track(10)];
    const slice& outer = main.slices.at(0);
    CHECK(m.str(outer.name) == "outer");
    std::map<std::string, std::string> args;
    for (auto a = m.args_begin(outer); a != m.args_end(outer); ++a) args[m.str(a->name)] = m.arg_text(*a);
    CHECK(args == std::map<std::string, std::string>{{"n", "3"}, {"label", "x"}, {"ratio", "0.5"}, {"ok", "true"}});
    CHECK(main.max_depth == 2);
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].name == "foreign app");
    CHECK(m.runs[0].dag.nodes.empty());

    const trace_model i = load_trace_file(data_dir / "foreign_interned.pftrace");
    const track& one = i.tracks[i.find_track(30)];
    REQUIRE(one.slices.size() == 2);
    CHECK(i.uint_arg(one.slices[0], "k") == 1u);
    CHECK(i.str(one.instants.at(0).name) == "after reset");
}

// ---------------------------------------------------------------------------------------------
// Matching on the fly. load_trace matches BEGIN/END while a track's BEGINs and ENDs arrive in
// timestamp order, places instants that arrive out of order afterwards, and switches a track to
// sorting its buffered events when a BEGIN/END arrives out of order. Whichever path a track takes,
// the result must be what sorting every track's events by (timestamp, file position) first gives:
// checked here against that reference, computed directly from the events written.

#include <random>

namespace {

struct written_event {
    std::uint64_t ts, track, type;   // 1 begin, 2 end, 3 instant
    std::string name;                // unique per event (END: empty)
    std::vector<std::uint64_t> flows, terminating;
};

// What the importer's rules give for `events` (in file order) on `tracks`.
struct reference_track {
    std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string, unsigned, bool>>
        slices;                                                               // begin, end, name, depth, unterminated
    std::vector<std::tuple<std::uint64_t, std::string, unsigned>> instants;   // ts, name, depth
    std::uint64_t unmatched = 0;
    unsigned max_depth = 0;
};
using flow_names = std::vector<std::tuple<std::uint64_t, std::string, std::string>>;   // id, from, to (event names)

void reference(const std::vector<written_event>& events, const std::vector<std::uint64_t>& tracks,
               std::map<std::uint64_t, reference_track>& out, flow_names& flows) {
    struct step {
        std::uint64_t ts, position, id;
        bool terminating;
        std::string at;   // the slice's or instant's name
    };
    std::vector<step> steps;
    for (const auto uuid : tracks) {
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < events.size(); ++i)
            if (events[i].track == uuid) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return events[a].ts < events[b].ts; });
        reference_track& t = out[uuid];
        std::vector<std::size_t> open;   // indices into t.slices
        std::uint64_t last = 0;
        for (const auto i : order) {
            const written_event& e = events[i];
            last = e.ts;
            std::string at;
            if (e.type == 1) {
                t.max_depth = std::max<unsigned>(t.max_depth, static_cast<unsigned>(open.size()));
                open.push_back(t.slices.size());
                t.slices.emplace_back(e.ts, e.ts, e.name, static_cast<unsigned>(open.size() - 1), false);
                at = e.name;
            } else if (e.type == 2) {
                if (open.empty()) {
                    ++t.unmatched;
                    continue;   // its flow ids are ignored
                }
                std::get<1>(t.slices[open.back()]) = e.ts;
                at = std::get<2>(t.slices[open.back()]);
                open.pop_back();
            } else {
                t.instants.emplace_back(e.ts, e.name, static_cast<unsigned>(open.size()));
                at = e.name;
            }
            for (auto id : e.flows) steps.push_back({e.ts, i, id, false, at});
            for (auto id : e.terminating) steps.push_back({e.ts, i, id, true, at});
        }
        for (auto k : open) {
            std::get<1>(t.slices[k]) = last;
            std::get<4>(t.slices[k]) = true;
        }
    }
    std::stable_sort(steps.begin(), steps.end(),
                     [](const step& a, const step& b) { return std::tie(a.ts, a.position) < std::tie(b.ts, b.position); });
    std::map<std::uint64_t, std::string> active;
    for (const auto& s : steps) {
        auto it = active.find(s.id);
        if (s.terminating) {
            if (it == active.end()) continue;
            if (it->second != s.at) flows.emplace_back(s.id, it->second, s.at);
            active.erase(it);
        } else if (it == active.end()) {
            active.emplace(s.id, s.at);
        } else {
            if (it->second != s.at) flows.emplace_back(s.id, it->second, s.at);
            it->second = s.at;
        }
    }
}

// Writes `events` (each on the sequence given by `seq_of`) and compares load_trace with the reference.
void check_against_reference(const std::vector<written_event>& events, const std::vector<std::uint64_t>& seq_of,
                             const std::vector<std::uint64_t>& tracks) {
    trace_builder b;
    for (const auto uuid : tracks) b.custom(uuid, 0, "t" + std::to_string(uuid));
    for (std::size_t i = 0; i < events.size(); ++i) {
        trace_builder::event e;
        e.ts = events[i].ts, e.seq = seq_of[i], e.type = events[i].type, e.track = events[i].track;
        e.name = events[i].name, e.flows = events[i].flows, e.terminating = events[i].terminating;
        b.add(e);
    }
    std::map<std::uint64_t, reference_track> want;
    flow_names want_flows;
    reference(events, tracks, want, want_flows);

    const trace_model m = load_trace(b.view());
    std::uint64_t slices = 0, instants = 0, unmatched = 0, unterminated = 0;
    for (const auto uuid : tracks) {
        CAPTURE(uuid);
        const track& t = m.tracks[m.find_track(uuid)];
        const reference_track& r = want[uuid];
        std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string, unsigned, bool>> got_slices;
        for (const auto& s : t.slices) got_slices.emplace_back(s.begin, s.end, m.str(s.name), s.depth, s.unterminated);
        CHECK(got_slices == r.slices);
        std::vector<std::tuple<std::uint64_t, std::string, unsigned>> got_instants;
        for (const auto& in : t.instants) got_instants.emplace_back(in.ts, m.str(in.name), in.depth);
        CHECK(got_instants == r.instants);
        CHECK(t.unmatched_ends == r.unmatched);
        CHECK(t.max_depth == r.max_depth);
        slices += r.slices.size(), instants += r.instants.size(), unmatched += r.unmatched;
        for (const auto& s : r.slices) unterminated += std::get<4>(s);
    }
    CHECK(m.slices == slices);
    CHECK(m.instants == instants);
    CHECK(m.unmatched_ends == unmatched);
    CHECK(m.unterminated_slices == unterminated);
    const auto name_of = [&](const event_ref& e) {
        const track& t = m.tracks[e.track];
        return m.str(e.is_instant ? t.instants.at(e.index).name : t.slices.at(e.index).name);
    };
    flow_names got_flows;
    for (const auto& f : m.flows) got_flows.emplace_back(f.id, name_of(f.from), name_of(f.to));
    CHECK(got_flows == want_flows);
}

}   // namespace

TEST_CASE("trace model: a worker track with instants written out of order by other sequences", "[trace][model]") {
    // Worker track 1, written by sequence 1 in order; sequence 2 (a thief) writes "stolen" marks on
    // it, the first before any of the worker's own events (a newer timestamp, earlier in the file).
    std::vector<written_event> ev;
    std::vector<std::uint64_t> seq;
    const auto add = [&](std::uint64_t s, written_event e) {
        ev.push_back(std::move(e));
        seq.push_back(s);
    };
    add(2, {50, 1, 3, "stolen@50", {9}, {}});   // inside B (40..60), which arrives later
    add(2, {20, 1, 3, "stolen@20", {}, {}});    // out of order among the instants too
    add(1, {10, 1, 1, "A", {}, {}});
    add(1, {15, 1, 3, "mark@15", {}, {}});
    add(1, {20, 1, 2, "", {}, {}});          // END@20 after "stolen@20" in the file: the mark is inside A
    add(1, {40, 1, 1, "B", {}, {9}});        // terminates flow 9 from stolen@50: a later instant
    add(1, {50, 1, 1, "B.child", {}, {}});   // BEGIN@50 after stolen@50 in the file: the mark is outside it
    add(1, {55, 1, 2, "", {}, {}});
    add(1, {60, 1, 2, "", {}, {}});
    add(2, {60, 1, 3, "stolen@60", {}, {}});   // after END@60 in the file: depth 0
    add(1, {70, 1, 2, "", {7}, {}});           // unmatched END: its flow id is ignored
    add(1, {80, 1, 1, "C", {}, {}});           // never closed
    check_against_reference(ev, seq, {1});

    trace_builder b;
    b.custom(1, 0, "t");
    for (std::size_t i = 0; i < ev.size(); ++i) {
        trace_builder::event e;
        e.ts = ev[i].ts, e.seq = seq[i], e.type = ev[i].type, e.track = ev[i].track, e.name = ev[i].name;
        e.flows = ev[i].flows, e.terminating = ev[i].terminating;
        b.add(e);
    }
    const trace_model m = load_trace(b.view());
    const track& t = m.tracks[m.find_track(1)];
    REQUIRE(t.instants.size() == 4);
    CHECK(m.str(t.instants[0].name) == "mark@15");
    CHECK(t.instants[0].depth == 1);
    CHECK(m.str(t.instants[1].name) == "stolen@20");
    CHECK(t.instants[1].depth == 1);
    CHECK(m.str(t.instants[2].name) == "stolen@50");
    CHECK(t.instants[2].depth == 1);
    CHECK(m.str(t.instants[3].name) == "stolen@60");
    CHECK(t.instants[3].depth == 0);
    CHECK(t.unmatched_ends == 1);
    REQUIRE(t.slices.size() == 4);
    CHECK(t.slices[3].unterminated);
    CHECK(t.slices[3].end == 80);
    // Flow ids are taken in timestamp order: B@40 terminates 9 while it is not active (ignored),
    // then stolen@50 begins a flow that nothing ends.
    CHECK(m.flows.empty());
}

TEST_CASE("trace model: a track whose BEGIN/END arrive out of order midway is switched to sorting", "[trace][model]") {
    // Matched on the fly for a while (with instants, an unmatched END and flows), then a BEGIN older
    // than the latest END: the events so far are rebuilt and everything is sorted at the end.
    std::vector<written_event> ev;
    std::vector<std::uint64_t> seq;
    const auto add = [&](std::uint64_t s, written_event e) {
        ev.push_back(std::move(e));
        seq.push_back(s);
    };
    add(1, {5, 3, 2, "", {1}, {}});   // unmatched so far; later it closes "early"
    add(1, {10, 3, 1, "x", {2}, {}});
    add(2, {8, 3, 3, "late instant", {}, {2}});   // out of order: depth 0 after sorting
    add(1, {12, 3, 3, "in x", {3}, {}});
    add(1, {20, 3, 2, "", {}, {3}});
    add(1, {30, 3, 1, "y", {}, {}});
    add(2, {3, 3, 1, "early", {}, {1}});   // BEGIN@3 < 30: switch; it contains END@5
    add(2, {30, 3, 2, "", {}, {}});        // END@30 after BEGIN y@30: closes y
    add(1, {40, 3, 3, "after", {4}, {}});
    add(2, {35, 3, 1, "z", {}, {4}});   // buffered from now on
    check_against_reference(ev, seq, {3});
}

TEST_CASE("trace model: random tracks: every path gives what sorting first gives", "[trace][model]") {
    std::mt19937_64 rng(20240611);
    const std::vector<std::uint64_t> tracks = {1, 2, 3};
    for (int round = 0; round < 400; ++round) {
        CAPTURE(round);
        // Per round, how disordered: 0 in order per track (one sequence each), 1 instants out of
        // order only, 2 BEGIN/ENDs out of order too, 3 any order, 4 each track written by three
        // sequences, each in order (like line tracks), 5 one sequence writing BEGIN/END pairs that
        // overlap (begin a little in the past).
        const int mode = round % 6;
        const std::size_t n = 20 + rng() % 200;
        std::vector<written_event> ev;
        std::vector<std::uint64_t> seq;
        std::map<std::uint64_t, std::uint64_t> now;
        const std::uint64_t spread = 1 + rng() % 4;   // small: many equal timestamps
        for (std::size_t i = 0; i < n; ++i) {
            written_event e;
            e.track = tracks[rng() % tracks.size()];
            const unsigned r = rng() % 10;
            e.type = r < 4 ? 1 : r < 8 ? 2 : 3;
            std::uint64_t s = e.track;   // the track's own sequence
            bool late = false;
            if (mode == 1 && e.type == 3 && rng() % 3 == 0) late = true;
            if (mode == 2 && rng() % 8 == 0) late = true;
            if (mode == 3) late = rng() % 2 == 0;
            if (mode == 4) {
                s = 20 + rng() % 3;
                e.ts = (now[e.track * 100 + s] += rng() % (spread + 1));
            } else if (mode == 5 && e.type == 1) {
                e.ts = now[e.track] + rng() % (spread + 1);
                now[e.track] = e.ts;
                e.ts = e.ts >= 2 * spread ? e.ts - rng() % (2 * spread + 1) : 0;
            } else if (late) {
                s = 10 + rng() % 3;
                e.ts = now[e.track] + spread * 3 - rng() % (spread * 8 + 1);
                if (e.ts > now[e.track] + spread * 3) e.ts = 0;   // wrapped below 0
            } else {
                e.ts = (now[e.track] += rng() % (spread + 1));
            }
            if (e.type != 2) e.name = "e" + std::to_string(i);
            if (rng() % 6 == 0) (rng() % 2 ? e.flows : e.terminating).push_back(1 + rng() % 4);
            ev.push_back(std::move(e));
            seq.push_back(s);
        }
        check_against_reference(ev, seq, tracks);
    }
}

TEST_CASE("trace model: a large track in random order is sorted like a small one", "[trace][model]") {
    // Too disordered for sorting by insertion (which gives up after a budget of moves, then sorts
    // what it left): the result must still be the stable sort.
    std::mt19937_64 rng(7);
    for (int round = 0; round < 3; ++round) {
        std::vector<written_event> ev;
        std::vector<std::uint64_t> seq;
        for (std::size_t i = 0; i < 3000; ++i) {
            written_event e;
            e.track = 1 + rng() % 2;
            const unsigned r = rng() % 10;
            e.type = r < 4 ? 1 : r < 8 ? 2 : 3;
            e.ts = round == 0 ? rng() % 50 : 3000 - i + rng() % 40;   // random, or mostly descending
            if (e.type != 2) e.name = "e" + std::to_string(i);
            if (rng() % 8 == 0) (rng() % 2 ? e.flows : e.terminating).push_back(1 + rng() % 4);
            ev.push_back(std::move(e));
            seq.push_back(1 + rng() % 3);
        }
        check_against_reference(ev, seq, {1, 2});
    }
}
