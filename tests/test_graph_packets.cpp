// Issue 17: every graph workload takes `packet` (elements per packet) and gives exactly the serial
// reference's output whatever the packet size — one element per packet, an odd size that leaves
// short packets at the end of every stream, and a large one — under the graph policies.
#include "support/run_workload.hpp"

#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

run_report run_with(const std::string& name, const std::string& policy, unsigned workers, std::vector<std::string> params) {
    return testing::run_tiny(name, policy, workers, param_set::parse(params), 11);
}

// Extra parameters that keep a run with tiny packets short: fm-radio with one-sample packets takes
// a step per sample in each of its 47 stages, so it gets fewer samples (and fewer bands).
std::vector<std::string> small_input(const std::string& name, const std::string& packet) {
    std::vector<std::string> p = {"packet=" + packet};
    if (name == "fm-radio") {
        p.push_back("samples=16000");   // not a multiple of any packet here: a short last packet
        p.push_back("bands=3");
    }
    if (name == "ferret" || name == "dedup") p.push_back("capacity=2");
    return p;
}

bool has_policy(const std::string& name) {
    for (const auto& p : graph::policies())
        if (p.name == name) return true;
    return false;
}

}   // namespace

TEST_CASE("every graph workload lists a packet parameter with its default", "[graph][workloads][packet]") {
    for (const char* name : {"ray-0", "ray-1", "fm-radio", "histogram", "mergesort", "ferret", "dedup"}) {
        INFO(name);
        const workload* w = find_workload(name);
        REQUIRE(w != nullptr);
        const std::string params = w->parameters();
        const bool listed = params.rfind("packet=", 0) == 0 || params.find("\npacket=") != std::string::npos;
        CHECK(listed);
    }
}

TEST_CASE("graph workloads match their serial references at packet sizes 1, odd and large", "[graph][workloads][packet]") {
    // 1: every element its own packet (the most steps); 7 and 37: odd sizes, so streams end in a
    // short packet and, in fm-radio, the FIR peek spans several packets; 1000: larger than the default
    // of some workloads, smaller than that of others.
    const std::vector<std::string> sizes = {"1", "7", "37", "1000"};
    const std::vector<std::string> policies = {"graph-serial",  "gramps",        "danbi",
                                               "task-stealing", "breadth-first", "static"};
    for (const char* name : {"ray-0", "ray-1", "fm-radio", "histogram", "ferret", "dedup"}) {
        for (const std::string& packet : sizes) {
            for (const std::string& policy : policies) {
                if (!has_policy(policy)) continue;
                // One-element packets are slow under every policy alike: two are enough for them.
                if (packet == "1" && policy != "graph-serial" && policy != "gramps") continue;
                const unsigned workers = policy == "graph-serial" ? 1u : 2u;
                INFO(name << " packet=" << packet << " under " << policy << ", P = " << workers);
                const run_report rep = run_with(name, policy, workers, small_input(name, packet));
                CAPTURE(rep.description);
                CHECK(rep.matches_reference);
                REQUIRE(rep.graph.has_value());
                for (const auto& q : rep.graph->queues)
                    if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
            }
        }
    }
}

TEST_CASE("mergesort's packet is a power of two of at least 64 keys: other sizes are refused, others sort exactly",
          "[graph][workloads][packet][mergesort]") {
    // A leaf chunk of `packet` keys pairs with its sibling level by level, so packets must be powers
    // of two: 1 and odd sizes are refused, naming the parameter; the smallest and a few others sort.
    for (const char* bad : {"1", "7", "37", "1000"}) {
        INFO("packet=" << bad);
        try {
            run_with("mergesort", "graph-serial", 1, {std::string("packet=") + bad});
            FAIL("accepted");
        } catch (const std::invalid_argument& e) {
            CHECK_THAT(e.what(), Catch::Contains(std::string("--param packet=") + bad));
        }
    }
    for (const char* packet : {"64", "128", "2048"}) {
        for (const std::string policy : {"graph-serial", "gramps", "danbi", "task-stealing"}) {
            if (!has_policy(policy)) continue;
            const unsigned workers = policy == "graph-serial" ? 1u : 2u;
            INFO("packet=" << packet << " under " << policy);
            const run_report rep = run_with("mergesort", policy, workers, {std::string("packet=") + packet});
            CAPTURE(rep.description);
            CHECK(rep.matches_reference);
        }
    }
}

TEST_CASE("graph workloads say what packet size they ran with", "[graph][workloads][packet]") {
    CHECK_THAT(run_with("ray-0", "graph-serial", 1, {"packet=37"}).description, Catch::Contains("37-ray packets"));
    CHECK_THAT(run_with("fm-radio", "graph-serial", 1, small_input("fm-radio", "37")).description,
               Catch::Contains("37-sample packets"));
    // histogram: 65536 pixels in packets of 1000 → 66 packets.
    CHECK_THAT(run_with("histogram", "graph-serial", 1, {"packet=1000"}).description, Catch::Contains("in 66 packets"));
}
