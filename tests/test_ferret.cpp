#include <pipescope/workloads/ferret.hpp>
#include <pipescope/workloads/workload.hpp>

#include "support/test_scale.hpp"

#include <catch2/catch.hpp>

#include <numeric>

using namespace pipescope;
using namespace pipescope::workloads;
using namespace pipescope::workloads::ferret;

namespace {

corpus_config tiny_corpus(std::uint64_t seed = 1) {
    corpus_config c;
    c.side = 24;
    c.database_images = 48;
    c.queries = 12;
    c.seed = seed;
    return c;
}

run_request request_with(std::vector<std::string> params, input_size size = input_size::tiny) {
    run_request r;
    r.size = size;
    r.params = param_set::parse(params);
    return r;
}

}   // namespace

TEST_CASE("ferret: the corpus is a function of the seed", "[ferret]") {
    const corpus_config a = tiny_corpus(1), b = tiny_corpus(2);
    CHECK(database_image(a, 3) == database_image(a, 3));
    CHECK(query_image(a, 5) == query_image(a, 5));
    CHECK(query_source(a, 5) == query_source(a, 5));
    CHECK(database_image(a, 3) != database_image(a, 4));
    CHECK(database_image(a, 3) != database_image(b, 3));
    CHECK(query_image(a, 5) != query_image(b, 5));

    const image img = database_image(a, 0);
    CHECK(img.width == 24);
    CHECK(img.height == 24);
    CHECK(img.rgb.size() == 24u * 24u * 3u);
    // A query is a perturbed copy of its source: same size, different pixels.
    const image q = query_image(a, 0);
    CHECK(query_source(a, 0) < a.database_images);
    CHECK(q.rgb.size() == img.rgb.size());
    CHECK(q != database_image(a, query_source(a, 0)));
}

TEST_CASE("ferret: segmentation labels every pixel and the region weights sum to 1", "[ferret]") {
    const corpus_config c = tiny_corpus();
    for (unsigned id = 0; id < 8; ++id) {
        const image img = database_image(c, id);
        for (unsigned k : {1u, 4u, 8u, 32u}) {
            const segmentation seg = segment(img, k);
            CAPTURE(id, k);
            REQUIRE(seg.label.size() == std::size_t{img.width} * img.height);
            CHECK(seg.regions >= 1);
            CHECK(seg.regions <= k);
            std::vector<bool> used(seg.regions, false);
            for (auto l : seg.label) {
                REQUIRE(l < seg.regions);
                used[l] = true;
            }
            CHECK(std::all_of(used.begin(), used.end(), [](bool u) { return u; }));
            const signature sig = extract_features(img, seg);
            CHECK(sig.size() == seg.regions);
            const float total =
                std::accumulate(sig.begin(), sig.end(), 0.f, [](float s, const region& r) { return s + r.weight; });
            CHECK(total == Approx(1.f).epsilon(1e-5));
        }
    }
    CHECK_THROWS_WITH(segment(database_image(c, 0), 0), Catch::Contains("regions must be between 1 and 32"));
    CHECK_THROWS_WITH(segment(database_image(c, 0), 33), Catch::Contains("regions must be between 1 and 32"));
}

TEST_CASE("ferret: the signature distance is zero on itself and small for a perturbed copy", "[ferret]") {
    const corpus_config c = tiny_corpus();
    const auto sig_of = [](const image& img) { return extract_features(img, segment(img, 8)); };
    const signature q = sig_of(query_image(c, 0));
    const signature source = sig_of(database_image(c, query_source(c, 0)));
    CHECK(signature_distance(source, source) == 0.f);
    const float to_source = signature_distance(q, source);
    unsigned closer = 0;   // other images closer to the query than its source
    for (unsigned id = 0; id < c.database_images; ++id)
        closer += id != query_source(c, 0) && signature_distance(q, sig_of(database_image(c, id))) < to_source;
    CHECK(closer <= 2);
}

TEST_CASE("ferret: every form, policy and worker count gives the serial answer", "[ferret]") {
    const std::vector<std::uint64_t> seeds =
        testing::scaled(2, 1) == 2 ? std::vector<std::uint64_t>{1, 7} : std::vector<std::uint64_t>{1};
    for (unsigned p : {1u, 2u}) {
        scheduler s({p});
        for (std::uint64_t seed : seeds) {
            const database db = build_database(s, tiny_corpus(seed), search_config{});
            const std::vector<top_list> expected = search_serial(db);
            REQUIRE(expected.size() == db.corpus.queries);
            for (const auto& top : expected) REQUIRE(top.size() == db.search.top);
            for (program_form form : {program_form::six_stage, program_form::sps}) {
                for (const auto& policy : pipeline_policies()) {
                    for (unsigned throttle : {0u, 1u}) {
                        pipeline_options o;
                        o.policy = policy.name;
                        o.throttle = throttle;
                        pipeline_stats st;
                        CAPTURE(p, seed, form == program_form::sps, policy.name, throttle);
                        REQUIRE(search_pipeline(s, db, form, o, &st) == expected);
                        CHECK(st.iterations == db.corpus.queries);
                    }
                }
            }
        }
    }
}

TEST_CASE("ferret: the search finds the source of most perturbed queries", "[ferret]") {
    scheduler s({2});
    corpus_config c;
    c.side = 32;
    c.database_images = static_cast<unsigned>(testing::scaled(200, 80));
    c.queries = static_cast<unsigned>(testing::scaled(60, 20));
    for (std::uint64_t seed : {1u, 2u}) {
        c.seed = seed;
        const database db = build_database(s, c, search_config{});
        const auto results = search_serial(db);
        CAPTURE(seed);
        // Nearly all must find their source; the few misses are queries whose source looks like
        // another image after the perturbation.
        CHECK(queries_finding_source(db, results) * 10 >= c.queries * 9);
        // And usually in first place.
        unsigned first = 0;
        for (unsigned q = 0; q < c.queries; ++q) first += results[q].front().image == query_source(c, q);
        CHECK(first * 10 >= c.queries * 7);
    }
}

TEST_CASE("ferret: the same seed gives the same answer, another seed another corpus", "[ferret]") {
    scheduler s({2});
    const database a = build_database(s, tiny_corpus(11), search_config{});
    const database b = build_database(s, tiny_corpus(11), search_config{});
    const database c = build_database(s, tiny_corpus(12), search_config{});
    CHECK(search_serial(a) == search_serial(b));
    CHECK(search_serial(a) != search_serial(c));
    CHECK(a.index->database_signature(0) == b.index->database_signature(0));
    CHECK(a.index->database_signature(0) != c.index->database_signature(0));
}

TEST_CASE("ferret: the workload runs both forms and matches its reference", "[ferret]") {
    const workload* w = find_workload("ferret");
    REQUIRE(w != nullptr);
    scheduler s({2});
    for (const char* stages : {"6", "3"}) {
        for (const auto& policy : pipeline_policies()) {
            run_request r = request_with({std::string("stages=") + stages});
            r.policy = policy.name;
            const std::size_t expected_stages = std::string(stages) == "6" ? 6 : 3;
            CHECK(w->program(r).stages.size() == expected_stages);
            bool started = false;
            r.on_measured_start = [&](double) { started = true; };
            const run_report rep = w->run(s, r);
            CAPTURE(stages, policy.name);
            CHECK(rep.matches_reference);
            CHECK(started);
            CHECK(rep.stats.iterations == 12);
            CHECK_THAT(rep.description, Catch::Contains("12 queries against 48 images"));
        }
    }
}

TEST_CASE("ferret: bad parameters are refused with a message naming them", "[ferret]") {
    const workload* w = find_workload("ferret");
    REQUIRE(w != nullptr);
    scheduler s({1});
    const auto fails_with = [&](std::vector<std::string> params, const std::string& message) {
        run_request r = request_with(std::move(params));
        CAPTURE(message);
        CHECK_THROWS_WITH(w->run(s, r), Catch::Contains(message));
    };
    fails_with({"stages=4"}, "--param stages=4: must be 6");
    fails_with({"stages=7"}, "--param stages=7: must be between 3 and 6");
    fails_with({"queries=0"}, "--param queries=0: must be between 1 and 1000000");
    fails_with({"database=0"}, "--param database=0: must be between 1 and 1000000");
    fails_with({"side=4"}, "--param side=4: must be between 8 and 1024");
    fails_with({"regions=33"}, "--param regions=33: must be between 1 and 32");
    fails_with({"candidates=0"}, "--param candidates=0: must be between 1 and 100000");
    fails_with({"top=0"}, "--param top=0: must be between 1 and 1000");
    fails_with({"top=x"}, "--param top=x: not a non-negative integer");
    fails_with({"colour=1"}, "unknown parameter(s) for ferret: colour");
}
