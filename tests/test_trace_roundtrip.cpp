// Round trip: what the runtime recorded is what the trace model reads back from the written file,
// event for event — node slices with their iteration, stage and timestamps per worker, scheduler
// states, steals, counters, line states, flows and the pipeline DAG.
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/workloads/pipe_fib.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

using namespace pipescope;
using trace::event_kind;
using trace::event_record;

namespace {

// i, first stage, last stage, nodes, begin, end (a node: last stage = first, nodes = 1)
using node = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>;

struct recorded_run {
    std::vector<std::vector<event_record>> by_worker;
    trace::clock_sample start, end;
};

recorded_run record_pipe_fib(unsigned workers, unsigned K, trace::trace_detail detail) {
    scheduler s({workers});
    trace::recorder rec(s.workers(), 256u << 20);
    rec.set_detail(detail);
    s.attach_recorder(&rec);
    pipeline_options o;
    o.throttle = K;
    REQUIRE(workloads::pipe_fib_pipeline(s, 3000, 64, o) == workloads::pipe_fib_serial(3000));
    s.attach_recorder(nullptr);
    recorded_run r;
    r.by_worker.resize(workers);
    rec.flush(
        [&](unsigned w, const event_record* p, std::size_t n) { r.by_worker[w].insert(r.by_worker[w].end(), p, p + n); });
    REQUIRE(rec.dropped_total() == 0);
    r.start = rec.start_clock();
    r.end = trace::clock_sample::take();
    return r;
}

}   // namespace

TEST_CASE("trace round trip: the model reads back what the runtime recorded, event for event", "[trace][roundtrip]") {
    const unsigned P = 2, K = 3;
    const auto detail = GENERATE(trace::trace_detail::nodes, trace::trace_detail::folded, trace::trace_detail::automatic);
    INFO("detail " << trace::to_string(detail));
    const recorded_run run = record_pipe_fib(P, K, detail);
    const trace::tick_converter conv(run.start, run.end);

    for (const bool compress : {true, false}) {
        INFO("compressed: " << compress);
        std::ostringstream bytes;
        trace::perfetto_writer out(bytes, {compress, 1, 0});   // quantum 0: every counter sample, counted below
        out.begin_run({"pipe-fib-64 · piper · P=2", P, R"({"program":{"kind":"pipeline","K":3}})", {}},
                      trace::run_clock::fixed(conv, run.start.ticks));
        for (unsigned w = 0; w < P; ++w) {   // in several chunks, workers interleaved
            const auto& rs = run.by_worker[w];
            const std::size_t half = rs.size() / 2;
            out.add_chunk(w, rs.data(), half);
            out.add_chunk((w + 1) % P, run.by_worker[(w + 1) % P].data(), 0);
            out.add_chunk(w, rs.data() + half, rs.size() - half);
        }
        out.end_run();
        out.finish();

        const trace::trace_model m = trace::load_trace(bytes.str());
        for (const auto& p : m.problems) FAIL_CHECK(p);
        REQUIRE(m.runs.size() == 1);
        const trace::run& r = m.runs[0];
        REQUIRE(r.workers.size() == P);
        CHECK(r.dag.K == K);

        std::uint64_t all_nodes = 0, all_slices = 0, folded_runs = 0, steals = 0, live_samples = 0, running = 0, waiting = 0,
                      resumes = 0, decisions = 0;
        for (unsigned w = 0; w < P; ++w) {
            // What the runtime recorded on worker w, converted the way the writer converts.
            std::vector<node> want;
            std::map<std::string, std::uint64_t> want_states;
            std::vector<std::pair<std::uint64_t, std::uint64_t>> open;   // iteration, begin ns
            for (const auto& e : run.by_worker[w]) {
                const std::uint64_t ns = conv.to_ns(e.ticks);
                switch (e.kind) {
                    case event_kind::node_begin: open.emplace_back(e.a, ns); break;
                    case event_kind::node_end:
                        REQUIRE_FALSE(open.empty());
                        want.emplace_back(e.a, e.b, e.b, 1, open.back().second, ns);
                        open.pop_back();
                        break;
                    case event_kind::node_fold_end:   // a folded run: stages [its begin's, e.b] of iteration e.a
                        REQUIRE(detail != trace::trace_detail::nodes);
                        REQUIRE_FALSE(open.empty());
                        REQUIRE(open.back().first == e.a);
                        want.emplace_back(e.a, e.b + 1 - e.c, e.b, e.c, open.back().second, ns);
                        open.pop_back();
                        folded_runs += e.c > 1;
                        break;
                    case event_kind::detail_decision: ++decisions; break;
                    case event_kind::idle_begin: ++want_states["idle"]; break;
                    case event_kind::park: ++want_states["parked"]; break;
                    case event_kind::steal: ++steals; break;
                    case event_kind::iteration_start:
                    case event_kind::iteration_retire:
                        ++live_samples;
                        if (e.kind == event_kind::iteration_retire) ++running;
                        break;
                    case event_kind::iteration_suspend: ++running; break;
                    case event_kind::iteration_resume: ++waiting, ++resumes; break;
                    default: break;
                }
            }
            REQUIRE(open.empty());

            const trace::track& t = m.tracks.at(r.workers[w]);
            std::vector<node> got;
            std::map<std::string, std::uint64_t> got_states;
            for (const auto& s : t.slices) {
                const std::string& name = m.str(s.name);
                if (name.rfind("stage ", 0) == 0) {
                    const std::uint64_t j = *m.uint_arg(s, "stage");
                    got.emplace_back(*m.uint_arg(s, "iteration"), j, m.uint_arg(s, "last_stage").value_or(j),
                                     m.uint_arg(s, "nodes").value_or(1), s.begin, s.end);
                    CHECK_FALSE(s.unterminated);
                } else {
                    ++got_states[name];
                }
            }
            const auto by_begin = [](const node& x, const node& y) { return std::get<4>(x) < std::get<4>(y); };
            std::sort(want.begin(), want.end(), by_begin);
            std::sort(got.begin(), got.end(), by_begin);
            CHECK(got == want);
            CHECK(got_states == want_states);
            for (const node& n : want) all_nodes += std::get<3>(n);
            all_slices += want.size();
        }

        // Steals: a "steal" instant on the thief and a "stolen" one on the victim, joined by a flow.
        std::uint64_t steal_instants = 0, stolen_instants = 0, line_running = 0, line_waiting = 0;
        for (const auto& t : m.tracks) {
            for (const auto& i : t.instants) {
                steal_instants += m.str(i.name) == "steal";
                stolen_instants += m.str(i.name) == "stolen";
            }
            if (t.kind == trace::track_kind::line)
                for (const auto& s : t.slices) {
                    line_running += m.str(s.name) == "running";
                    line_waiting += m.str(s.name).rfind("waiting", 0) == 0;
                }
            if (t.name == "live iterations") live_samples -= t.counters.size();
        }
        CHECK(steal_instants == steals);
        CHECK(stolen_instants == steals);
        CHECK(live_samples == 0);   // one counter sample per iteration start and retirement
        CHECK(line_running == running);
        CHECK(line_waiting == waiting);
        CHECK(m.flows.size() == out.stats().flows);
        std::uint64_t steal_flows = 0;
        for (const auto& f : m.flows) {
            REQUIRE(f.from.valid());
            REQUIRE(f.to.valid());
            if (f.from.is_instant && m.str(m.tracks[f.from.track].instants[f.from.index].name) == "stolen") ++steal_flows;
        }
        CHECK(steal_flows == steals);
        CHECK(r.dag.nodes.size() == all_slices);
        CHECK(r.dag.node_count == all_nodes);
        CHECK(out.stats().folded_runs == folded_runs);
        // The program is deterministic: every level holds the same nodes (GENERATE runs `nodes` first).
        static std::uint64_t nodes_at_node_level = 0;
        if (detail == trace::trace_detail::nodes) nodes_at_node_level = all_nodes;
        CHECK(all_nodes == nodes_at_node_level);
        if (detail == trace::trace_detail::folded) CHECK(folded_runs > 0);
        if (detail == trace::trace_detail::nodes) CHECK(folded_runs == 0);
        CHECK(decisions == (detail == trace::trace_detail::automatic ? 1u : 0u));
        INFO(resumes << " resumptions");
    }
}
