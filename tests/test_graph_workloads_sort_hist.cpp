// The `mergesort` and `histogram` stage-graph workloads: exact outputs against their serial
// references under every graph policy, their parameters, and the shape of their graphs.
#include <pipescope/graph/program.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

run_request request_for(const std::string& policy, std::vector<std::string> params, std::uint64_t seed = 1) {
    run_request r;
    r.policy = policy;
    r.size = input_size::tiny;
    r.seed = seed;
    r.params = param_set::parse(params);
    return r;
}

const graph::queue_run_stats* queue_named(const run_report& rep, const std::string& name) {
    for (const auto& q : rep.graph->queues)
        if (q.name == name) return &q;
    return nullptr;
}

std::string error_of(const workload& w, std::vector<std::string> params) {
    scheduler s({1});
    run_request r = request_for("graph-serial", std::move(params));
    try {
        w.run(s, r);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}

}   // namespace

TEST_CASE("mergesort sorts exactly under every graph policy and packet size", "[graph][workloads][mergesort]") {
    const workload* w = find_workload("mergesort");
    REQUIRE(w != nullptr);
    CHECK(w->is_graph());
    // 4096: 16 chunks, 4 levels; 512: 128 chunks; 65536: the tiny input is a single chunk (no merge:
    // the sort forms the whole array); 1 << 20: larger than the input, also a single chunk.
    for (const char* chunk : {"4096", "512", "65536", "1048576"}) {   // packet=: keys per leaf chunk
        for (const auto& p : graph::policies()) {
            for (unsigned workers : {1u, 2u}) {
                INFO("policy " << p.name << ", P = " << workers << ", packet " << chunk);
                scheduler s({workers});
                run_request r = request_for(p.name, {std::string("packet=") + chunk}, 3);
                const run_report rep = w->run(s, r);
                CAPTURE(rep.description);
                CHECK(rep.matches_reference);
                if (std::stoull(chunk) >= 65536) CHECK_THAT(rep.description, Catch::Contains("a single chunk, no merge"));
                REQUIRE(rep.graph.has_value());
                const auto* runs = queue_named(rep, "runs");
                const auto* merges = queue_named(rep, "merges");
                const auto* sorted = queue_named(rep, "sorted");
                REQUIRE(runs != nullptr);
                REQUIRE(merges != nullptr);
                REQUIRE(sorted != nullptr);
                const std::uint64_t chunks = std::max<std::uint64_t>(65536 / std::stoull(chunk), 1);
                std::uint64_t levels = 0;
                while ((std::uint64_t{1} << levels) < chunks) ++levels;
                // Every chunk and every merged run goes round the feedback queue once (2C - 1 runs),
                // each level is merged in C / 2 pieces, and exactly one run reaches the sink.
                CHECK(runs->stats.elements_pushed == 2 * chunks - 1);
                CHECK(merges->stats.elements_pushed == levels * (chunks / 2));
                CHECK(sorted->stats.elements_pushed == 1);
                CHECK(rep.graph->instances == chunks + levels * (chunks / 2));
                for (const auto& q : rep.graph->queues)
                    if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
            }
        }
    }
}

TEST_CASE("mergesort runs with other seeds and its graph has a backward feedback queue", "[graph][workloads][mergesort]") {
    const workload* w = find_workload("mergesort");
    REQUIRE(w != nullptr);
    scheduler s({2});
    run_request a = request_for("graph-serial", {}, 1), b = request_for("graph-serial", {}, 2);
    const run_report ra = w->run(s, a), rb = w->run(s, b);
    CHECK(ra.matches_reference);
    CHECK(rb.matches_reference);
    CHECK_THAT(ra.description, Catch::Contains("sorted 65536 keys: 16 chunks of 4096, 4 merge levels"));

    const program_info info = w->program(request_for("graph-serial", {}));
    CHECK(info.kind == "graph");
    REQUIRE(info.stages.size() == 5);
    CHECK(info.stages[2].name == "pair");
    CHECK(info.stages[2].kind == "serial");
    CHECK(info.stages[3].name == "merge");
    CHECK(info.stages[3].kind == "parallel");
    bool feedback = false;
    for (const queue_info& q : info.queues) {
        CHECK(q.backward == (q.name == "runs"));
        if (q.name == "runs") {
            feedback = true;
            CHECK(q.producers.size() == 2);   // sort and merge
            CHECK(q.consumer == 2);           // pair
        }
    }
    CHECK(feedback);
}

TEST_CASE("mergesort and histogram run under the policies' own variants", "[graph][workloads][mergesort][histogram]") {
    // Preempting the serial stages after every output packet (pair in the middle of handing out a
    // level's pieces), and DANBI's scheduler configurations: the cycle must still close.
    const std::vector<std::pair<std::string, std::string>> variants = {{"gramps", "preempt=1"},
                                                                       {"gramps", "preempt=0"},
                                                                       {"danbi", "config=ws"},
                                                                       {"danbi", "config=qes"}};
    for (const auto& [policy, param] : variants) {
        bool known = false;
        for (const auto& p : graph::policies()) known = known || p.name == policy;
        if (!known) continue;
        for (const char* name : {"mergesort", "histogram"}) {
            for (unsigned workers : {1u, 2u}) {
                INFO(name << " under " << policy << " " << param << ", P = " << workers);
                scheduler s({workers});
                run_request r = request_for(policy, {param}, 7);
                const run_report rep = find_workload(name)->run(s, r);
                CAPTURE(rep.description);
                CHECK(rep.matches_reference);
            }
        }
    }
}

TEST_CASE("mergesort rejects bad parameters naming the key", "[graph][workloads][mergesort]") {
    const workload& w = *find_workload("mergesort");
    CHECK_THAT(error_of(w, {"packet=3000"}), Catch::Contains("packet=3000") && Catch::Contains("power of two"));
    CHECK_THAT(error_of(w, {"packet=32"}), Catch::Contains("packet=32") && Catch::Contains("between 64"));
    CHECK_THAT(error_of(w, {"packet=1"}), Catch::Contains("packet=1") && Catch::Contains("between 64"));
    CHECK_THAT(error_of(w, {"packet=lots"}), Catch::Contains("packet=lots"));
    // `chunk` is `packet` now, the name every graph workload uses for its packet size.
    CHECK_THAT(error_of(w, {"chunk=4096"}), Catch::Contains("unknown parameter(s) for mergesort: chunk"));
}

TEST_CASE("histogram counts exactly under every graph policy, with and without combine", "[graph][workloads][histogram]") {
    const workload* w = find_workload("histogram");
    REQUIRE(w != nullptr);
    CHECK(w->is_graph());
    // tiny: 256×256 pixels = 64 blocks of 1024; packet=8192 puts them in 8 packets; packet=3072 (3
    // blocks) leaves a short last packet (22 packets, the last with one block); block=1000 leaves a
    // short last block in every packet (9 blocks per packet of 8192: 72 partials); packet=1000 with
    // block=1024 makes one short block per packet (66 packets, the last of 536 pixels). The defaults
    // (tiny: packet=4096, block=8192) make one short block per packet: 16 packets of one partial.
    struct form {
        std::vector<std::string> params;
        bool combine;
        std::uint64_t packets, partials;
    };
    const std::vector<form> forms = {{{"packet=8192", "block=1024", "combine=on"}, true, 8, 64},
                                     {{"packet=8192", "block=1024", "combine=off"}, false, 8, 64},
                                     {{"packet=3072", "block=1024"}, true, 22, 64},
                                     {{"packet=8192", "block=1000", "combine=off"}, false, 8, 72},
                                     {{"packet=1000", "block=1024"}, true, 66, 66},
                                     {{"combine=on"}, true, 16, 16}};
    for (const form& f : forms) {
        for (const auto& p : graph::policies()) {
            for (unsigned workers : {1u, 2u}) {
                const bool combine = f.combine;
                INFO("policy " << p.name << ", P = " << workers << ", " << f.params[0]);
                scheduler s({workers});
                run_request r = request_for(p.name, f.params, 5);
                const run_report rep = w->run(s, r);
                CAPTURE(rep.description);
                CHECK(rep.matches_reference);
                REQUIRE(rep.graph.has_value());
                const auto* partials = queue_named(rep, "partials");
                REQUIRE(partials != nullptr);
                CHECK(partials->stats.elements_pushed == f.partials);
                CHECK(partials->stats.packets_pushed == f.packets);
                // The source hands out one range of pixel indices per packet; no pixel travels in a queue.
                const auto* ranges = queue_named(rep, "ranges");
                REQUIRE(ranges != nullptr);
                CHECK(ranges->stats.elements_pushed == f.packets);
                CHECK(queue_named(rep, "pixels") == nullptr);
                const auto* combined = queue_named(rep, "combined");
                CHECK((combined != nullptr) == combine);
                if (combined) CHECK(combined->stats.elements_pushed == f.packets);
                CHECK_THAT(rep.description, Catch::Contains(combine ? std::to_string(f.packets) + " combined histograms"
                                                                    : std::to_string(f.partials) + " partials"));
                for (const auto& q : rep.graph->queues)
                    if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
            }
        }
    }
}

TEST_CASE("histogram's map reads its ranges of the image in any order and at any packet size, exactly",
          "[graph][workloads][histogram]") {
    // The map instances read their pixels from the image given a range; whatever order they run in
    // and however the image is cut (one pixel per range, odd sizes, ranges crossing rows, one range
    // for the whole image), the histogram is the serial one, under every policy at P = 1, 2, 4.
    const workload* w = find_workload("histogram");
    REQUIRE(w != nullptr);
    for (const auto& p : graph::policies()) {
        for (unsigned workers : {1u, 2u, 4u}) {
            for (const char* packet : {"16", "999", "4096", "65536"}) {
                INFO("policy " << p.name << ", P = " << workers << ", packet=" << packet);
                scheduler s({workers});
                run_request r = request_for(p.name, {std::string("packet=") + packet, "block=1024"}, 9);
                const run_report rep = w->run(s, r);
                CAPTURE(rep.description);
                CHECK(rep.matches_reference);
            }
        }
    }
}

TEST_CASE("histogram's graph has a combine stage only when asked", "[graph][workloads][histogram]") {
    const workload* w = find_workload("histogram");
    REQUIRE(w != nullptr);
    const program_info c = w->program(request_for("graph-serial", {}));
    REQUIRE(c.stages.size() == 4);
    CHECK(c.stages[0].name == "source");
    CHECK(c.stages[0].kind == "serial");
    CHECK(c.stages[1].name == "map");
    CHECK(c.stages[1].kind == "parallel");
    REQUIRE(!c.queues.empty());
    // The source's queue carries ranges (16 bytes, one per packet), not pixels.
    CHECK(c.queues[0].name == "ranges");
    CHECK(c.queues[0].packet_elements == 1);
    CHECK(c.queues[0].element_bytes == 16);
    CHECK(c.stages[2].name == "combine");
    CHECK(c.stages[2].kind == "parallel");
    CHECK(c.stages[3].kind == "serial");
    const program_info r = w->program(request_for("graph-serial", {"combine=off"}));
    REQUIRE(r.stages.size() == 3);
    CHECK(r.stages[2].name == "reduce");
    for (const queue_info& q : r.queues) CHECK_FALSE(q.backward);
}

TEST_CASE("histogram rejects bad parameters naming the key", "[graph][workloads][histogram]") {
    const workload& w = *find_workload("histogram");
    CHECK_THAT(error_of(w, {"combine=maybe"}), Catch::Contains("combine=maybe") && Catch::Contains("on or off"));
    CHECK_THAT(error_of(w, {"block=8"}), Catch::Contains("block=8") && Catch::Contains("between 16"));
    CHECK_THAT(error_of(w, {"packet=0"}), Catch::Contains("packet=0") && Catch::Contains("between 1 and 1048576"));
    CHECK_THAT(error_of(w, {"packet=65537", "block=1024"}),
               Catch::Contains("packet=65537") && Catch::Contains("block=1024") && Catch::Contains("at most 64"));
    // `blocks` is `packet` now (packet = block × blocks), the name every graph workload uses.
    CHECK_THAT(error_of(w, {"blocks=8"}), Catch::Contains("unknown parameter(s) for histogram: blocks"));
    CHECK_THAT(error_of(w, {"bins=512"}), Catch::Contains("unknown parameter(s) for histogram: bins"));
}
