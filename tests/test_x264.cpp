// x264-like workload (seed 001 §3): the pipeline's output equals the serial encoder's, the GOP
// patterns come out as asked, and the recorded DAG has the shape the frame types imply.
#include <pipescope/pipescope.hpp>
#include <pipescope/trace/perfetto_writer.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/workloads/workload.hpp>
#include <pipescope/workloads/x264.hpp>

#include <catch2/catch.hpp>

#include "support/test_scale.hpp"

#include <map>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

x264_video_params tiny_video(std::uint64_t seed = 7, unsigned frames = 10) {
    x264_video_params v;
    v.mb_cols = 4;
    v.mb_rows = 3;
    v.frames = frames;
    v.seed = seed;
    return v;
}

x264_encoder_params gop(unsigned keyint, unsigned bframes, bool scenecut = false) {
    x264_encoder_params e;
    e.keyint = keyint;
    e.bframes = bframes;
    e.scenecut = scenecut;
    return e;
}

// The frame types in coding order, e.g. "IPBBPBB".
std::string coding_order(const x264_output& out) {
    std::string s;
    for (const auto& f : out.frames) s += static_cast<char>(f.type);
    return s;
}

// One I/P frame per pipeline iteration, with the B-frames coded after it.
struct iteration_shape {
    x264_frame_type type;
    std::size_t bframes = 0;
};
std::vector<iteration_shape> iterations_of(const x264_output& out) {
    std::vector<iteration_shape> its;
    for (const auto& f : out.frames) {
        if (f.type == x264_frame_type::B) ++its.back().bframes;
        else its.push_back({f.type, 0});
    }
    return its;
}

// A construct-and-run policy (filters declared up front) cannot run x264: pipe_while refuses the
// loop, which declares no stages, before running anything. True when the policy refused.
bool refuses(scheduler& s, const x264_video_params& v, const x264_encoder_params& e, const pipeline_options& o) {
    if (o.policy == "piper" || o.policy == "serial") return false;
    try {
        x264_pipeline(s, v, e, o);
    } catch (const std::invalid_argument& error) {
        CHECK_THAT(error.what(), Catch::Contains("on the fly"));
        return true;
    }
    return false;
}

}   // namespace

TEST_CASE("x264: GOP parameters give the frame patterns asked for", "[x264]") {
    const x264_video_params v = tiny_video(7, 10);
    const x264_output all_i = x264_serial(v, gop(1, 2));
    CHECK(coding_order(all_i) == "IIIIIIIIII");

    const x264_output ippp = x264_serial(v, gop(100, 0));
    CHECK(coding_order(ippp) == "IPPPPPPPPP");

    // IBBP in display order is coded I P B B P B B ...; the last frame is never a B-frame.
    const x264_output ibbp = x264_serial(v, gop(100, 2));
    CHECK(coding_order(ibbp) == "IPBBPBBPBB");
    std::vector<unsigned> display;
    for (const auto& f : ibbp.frames) display.push_back(f.display);
    CHECK(display == std::vector<unsigned>{0, 3, 1, 2, 6, 4, 5, 9, 7, 8});

    const x264_output keyint4 = x264_serial(v, gop(4, 1));
    CHECK(coding_order(keyint4) == "IPBIBPBIBP");
    CHECK(keyint4.count_i == 3);
    CHECK(keyint4.count_b == 4);
}

TEST_CASE("x264: the encoder does real work — quality and size follow qp, and depend on the data", "[x264]") {
    const x264_video_params v = tiny_video(3, 6);
    x264_encoder_params fine = gop(100, 2), coarse = gop(100, 2);
    fine.qp = 4;
    coarse.qp = 40;
    const x264_output a = x264_serial(v, fine), b = x264_serial(v, coarse);
    CHECK(a.psnr(v) > 45.0);
    CHECK(b.psnr(v) < a.psnr(v));
    CHECK(b.psnr(v) > 20.0);
    CHECK(a.total_bits > 2 * b.total_bits);
    // Inter frames cost fewer bits than intra frames of the same content.
    const x264_output intra = x264_serial(v, gop(1, 0)), inter = x264_serial(v, gop(100, 0));
    CHECK(inter.total_bits < intra.total_bits);
    std::set<std::uint64_t> bits;
    for (const auto& f : inter.frames) bits.insert(f.bits);
    CHECK(bits.size() > 1);
}

TEST_CASE("x264: the same seed gives the same output, another seed another", "[x264]") {
    const x264_encoder_params e = gop(24, 2, true);
    CHECK(x264_serial(tiny_video(11), e) == x264_serial(tiny_video(11), e));
    CHECK_FALSE(x264_serial(tiny_video(11), e) == x264_serial(tiny_video(12), e));
    scheduler s({2});
    CHECK(x264_pipeline(s, tiny_video(11), e, {}) == x264_pipeline(s, tiny_video(11), e, {}));
}

TEST_CASE("x264: scene-cut detection starts I-frames beyond what keyint asks for", "[x264]") {
    x264_video_params v = tiny_video(5, 60);
    v.mb_cols = 6;
    const x264_output with = x264_serial(v, gop(1000, 0, true)), without = x264_serial(v, gop(1000, 0, false));
    CHECK(without.count_i == 1);
    CHECK(with.count_i > 1);
}

TEST_CASE("x264: the pipeline equals the serial encoder for every policy, P and GOP pattern", "[x264]") {
    const unsigned seeds = static_cast<unsigned>(testing::scaled(2, 1));
    const std::vector<x264_encoder_params> patterns = {gop(1, 0), gop(100, 0), gop(100, 2), gop(5, 3, true)};
    std::map<std::string, int> ran;
    for (unsigned p : {1u, 2u}) {
        scheduler s({p});
        for (std::size_t k = 0; k < patterns.size(); ++k)
            for (unsigned seed = 1; seed <= seeds; ++seed) {
                const x264_video_params v = tiny_video(seed, 12);
                const x264_output expected = x264_serial(v, patterns[k]);
                for (const auto& policy : pipeline_policies())
                    for (int variant = 0; variant < 3; ++variant) {
                        pipeline_options o;
                        o.policy = policy.name;
                        o.lazy_enabling = variant != 1;
                        o.dependency_folding = variant != 2;
                        o.throttle = variant == 2 ? 1 : 0;
                        CAPTURE(p, k, seed, policy.name, variant);
                        if (refuses(s, v, patterns[k], o)) continue;
                        REQUIRE(x264_pipeline(s, v, patterns[k], o) == expected);
                        ++ran[policy.name];
                    }
            }
    }
    // The on-the-fly policies run it; construct-and-run ones (tbb) refuse, as refuses() checked.
    CHECK(ran["piper"] > 0);
    CHECK(ran["serial"] > 0);
}

TEST_CASE("x264: search ranges change the row offset w and the pipeline still equals serial", "[x264]") {
    scheduler s({2});
    for (unsigned range : {0u, 5u, 16u, 17u, 40u}) {
        x264_encoder_params e = gop(100, 1);
        e.search_range = range;
        CHECK(x264_row_offset(e) == (range + 15) / 16);
        x264_video_params v = tiny_video(9, 8);
        v.mb_rows = 5;
        CAPTURE(range);
        REQUIRE(x264_pipeline(s, v, e, {}) == x264_serial(v, e));
    }
}

TEST_CASE("x264: the workload checks its parameters and says why a static pipeline cannot run it", "[x264]") {
    const workload* w = find_workload("x264");
    REQUIRE(w != nullptr);
    scheduler s({2});
    run_request r;
    r.size = input_size::tiny;
    r.params = param_set::parse({"qp=60"});
    CHECK_THROWS_WITH(w->run(s, r), Catch::Contains("qp=60: must be between 0 and 51"));
    r.params = param_set::parse({"gop=IBBP"});
    CHECK_THROWS_WITH(w->run(s, r), Catch::Contains("unknown parameter(s) for x264: gop"));
    r.params = param_set::parse({"bframes=1", "K=2"});
    const run_report report = w->run(s, r);
    CHECK(report.matches_reference);
    CHECK(report.description.find("10 frames 64x48") != std::string::npos);
    CHECK(w->program(r).stages.size() == 5);

    CHECK(x264_construct_and_run_refusal.find("decided on the fly") != std::string_view::npos);
    CHECK(x264_construct_and_run_refusal.find("001 §10") != std::string_view::npos);
}

TEST_CASE("x264: the recorded DAG has the cross edges and skipped stages the frame types imply", "[x264][trace]") {
    const unsigned P = 2;
    x264_video_params v = tiny_video(4, 14);
    v.mb_rows = 4;
    x264_encoder_params e = gop(6, 2);   // I B B P B B I ... : I-frame iterations with B-frames too
    e.search_range = 20;                 // w = 2
    const unsigned w = x264_row_offset(e);
    REQUIRE(w == 2);

    scheduler s({P});
    trace::recorder rec(s.workers(), 64u << 20);
    s.attach_recorder(&rec);
    pipeline_options o;
    o.throttle = 6;
    const x264_output out = x264_pipeline(s, v, e, o);
    s.attach_recorder(nullptr);
    REQUIRE(out == x264_serial(v, e));
    REQUIRE(rec.dropped_total() == 0);

    std::ostringstream bytes;
    trace::perfetto_writer writer(bytes);
    writer.begin_run({"x264 · piper · P=2", P, R"({"program":{"kind":"pipeline","K":6}})", {}},
                     trace::run_clock::calibrating(rec.start_clock()));
    rec.flush(writer.sink());
    writer.end_run();
    writer.finish();
    const trace::trace_model m = trace::load_trace(bytes.str());
    for (const auto& problem : m.problems) FAIL_CHECK(problem);
    REQUIRE(m.runs.size() == 1);
    const trace::pipeline_dag& dag = m.runs[0].dag;

    const std::vector<iteration_shape> its = iterations_of(out);
    REQUIRE(coding_order(out) == "IPBBIBBPBBIBBP");
    REQUIRE(dag.iterations == its.size());

    // Cross edges by target node.
    std::vector<std::vector<std::uint32_t>> cross_into(dag.nodes.size());
    for (const auto& edge : dag.edges)
        if (edge.kind == trace::dag_edge_kind::cross) cross_into[edge.to].push_back(edge.from);

    for (std::uint64_t i = 0; i < its.size(); ++i) {
        CAPTURE(i, static_cast<char>(its[i].type), its[i].bframes);
        const bool is_p = its[i].type == x264_frame_type::P;
        const bool gate = !is_p && its[i].bframes > 0 && i > 0;
        // The stages iteration i passes, in order; every other stage is skipped.
        std::vector<std::uint64_t> want = {0};
        for (unsigned r = 0; r < v.mb_rows; ++r) want.push_back(x264_row_stage(i, r, w));
        if (gate) want.push_back(x264_row_stage(i, v.mb_rows, w));
        if (its[i].bframes) want.push_back(x264_stage_bframes);
        want.push_back(x264_stage_output);
        std::vector<std::uint64_t> got;
        for (const auto& n : dag.nodes)
            if (n.iteration == i) got.push_back(n.stage);
        CHECK(got == want);

        for (unsigned r = 0; r < v.mb_rows; ++r) {
            const std::uint32_t at = dag.find(i, x264_row_stage(i, r, w));
            REQUIRE(at != trace::no_index);
            CAPTURE(r);
            // P-frame rows wait; I-frame rows do not.
            CHECK(dag.nodes[at].waited == is_p);
            CHECK(cross_into[at].size() == (is_p ? 1u : 0u));
            if (is_p && !cross_into[at].empty()) {
                // ... for the previous frame's row r + w, or its last row when r + w is past the end.
                const auto& from = dag.nodes[cross_into[at][0]];
                CHECK(from.iteration == i - 1);
                CHECK(from.stage <= x264_row_stage(i, r, w));
                CHECK(from.stage >= x264_row_stage(i - 1, std::min(r + w, v.mb_rows - 1), w));
            }
        }
        if (gate) {
            const std::uint32_t at = dag.find(i, x264_row_stage(i, v.mb_rows, w));
            REQUIRE(at != trace::no_index);
            REQUIRE(cross_into[at].size() == 1);
            CHECK(dag.nodes[cross_into[at][0]].stage >= x264_row_stage(i - 1, v.mb_rows - 1, w));
        }
        if (its[i].bframes) {
            const std::uint32_t at = dag.find(i, x264_stage_bframes);
            REQUIRE(at != trace::no_index);
            CHECK_FALSE(dag.nodes[at].waited);
        }
        const std::uint32_t end = dag.find(i, x264_stage_output);
        REQUIRE(end != trace::no_index);
        CHECK(dag.nodes[end].waited);   // in order (iteration 0's edge is from nothing)
        if (i > 0) CHECK(cross_into[end].size() == 1);
    }
}
