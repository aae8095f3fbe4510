// Queue capacities of the graph workloads (docs/virtual.md, "Queue capacities"): DANBI's rule
// max(P·T, C·T) with T the run's workers (seed 002 §IV-A), the application's capacities otherwise
// (GRAMPS, seed 004 §II-C), --param capacity=N on every graph workload, and its minimums.
#include <pipescope/graph/program.hpp>
#include <pipescope/workloads/fm_radio.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

run_request request_for(const std::string& policy, std::vector<std::string> params, unsigned workers = 0) {
    run_request r;
    r.policy = policy;
    r.size = input_size::tiny;
    r.params = param_set::parse(params);
    r.workers = workers;
    return r;
}

const workload& named(const std::string& name) {
    const workload* w = find_workload(name);
    REQUIRE(w != nullptr);
    return *w;
}

// Queue name -> capacity, as the run's metadata describes the program (program()).
std::map<std::string, std::size_t> described(const std::string& workload, const run_request& r) {
    std::map<std::string, std::size_t> out;
    for (const queue_info& q : named(workload).program(r).queues) out[q.name] = q.capacity_packets;
    return out;
}

// Queue name -> capacity, as the run used it (its graph stats), on `workers` virtual workers.
std::map<std::string, std::size_t> used(const std::string& workload, run_request r, unsigned workers) {
    scheduler s({.workers = workers, .virtual_time = true});
    const run_report rep = named(workload).run(s, r);
    CHECK(rep.matches_reference);
    REQUIRE(rep.graph.has_value());
    std::map<std::string, std::size_t> out;
    for (const auto& q : rep.graph->queues) out[q.name] = q.capacity_packets;
    return out;
}

std::string error_of(const std::string& workload, const std::string& policy, std::vector<std::string> params) {
    scheduler s({1});
    run_request r = request_for(policy, std::move(params));
    try {
        named(workload).run(s, r);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}

}   // namespace

TEST_CASE("danbi sizes every queue max(P·T, C·T) with T the run's workers", "[graph][capacity]") {
    // fm-radio (10 bands, 64 taps, 64-sample packets at size tiny), built as the workload builds it: a queue read
    // by a FIR filter is read a packet at a time plus 63 samples of peek, C = 2 packets; the others
    // C = 1; every producer reserves one packet (P = 1). The peeking filters' minimum is 3 packets.
    fm_radio_state st;
    st.design = design_fm_radio(fm_default_bands, fm_default_taps);
    const graph::program g = build_fm_radio_graph(st);
    std::map<std::string, std::size_t> at_once;
    for (graph::queue_id q = 0; q < g.queues().size(); ++q) at_once[g.queues()[q].name] = graph::packets_at_once(g, q);
    std::size_t peeked = 0;
    for (const auto& [name, packets] : at_once) {
        CHECK((packets == 1 || packets == 2));
        peeked += packets == 2;
    }
    CHECK(peeked >= 2 * fm_default_bands);   // at least each band's two low-pass filters
    for (unsigned workers : {1u, 4u, 40u}) {
        INFO("P = " << workers);
        const auto caps = described("fm-radio", request_for("danbi", {}, workers));
        REQUIRE(caps.size() == at_once.size());
        for (const auto& [name, capacity] : caps) {
            INFO("queue " << name);
            CHECK(capacity == std::max<std::size_t>(at_once.at(name) * workers, 3));
        }
    }
    CHECK(described("fm-radio", request_for("danbi", {}, 40)).at("band 0 upper in") == 80);
    // Under gramps the application's 4 packets, whatever P.
    for (unsigned workers : {4u, 40u})
        for (const auto& [name, capacity] : described("fm-radio", request_for("gramps", {}, workers))) CHECK(capacity == 4);
}

TEST_CASE("the run uses the capacities the rule gives for its own workers", "[graph][capacity]") {
    // histogram (combine on): source -> ranges -> map -> partials -> combine -> combined -> reduce,
    // one packet reserved at a time on either side of every queue: P = C = 1.
    for (unsigned workers : {4u, 40u}) {
        INFO("P = " << workers);
        const auto caps = used("histogram", request_for("danbi", {}), workers);
        CHECK(caps == std::map<std::string, std::size_t>{{"ranges", workers}, {"partials", workers}, {"combined", workers}});
        CHECK(caps == described("histogram", request_for("danbi", {}, workers)));   // what the metadata records
    }
    CHECK(used("histogram", request_for("gramps", {}), 4) ==
          std::map<std::string, std::size_t>{{"ranges", 16}, {"partials", 16}, {"combined", 16}});
}

TEST_CASE("capacity: the parameter is taken by ray-0, ray-1, mergesort and histogram and used", "[graph][capacity]") {
    // ray-0: every queue N, under any policy, whatever P.
    for (const char* policy : {"gramps", "danbi"}) {
        INFO(policy);
        const auto caps = used("ray-0", request_for(policy, {"capacity=3"}), 4);
        REQUIRE(caps.size() == 5);
        for (const auto& [name, capacity] : caps) CHECK(capacity == 3);
    }
    const auto ray1 = used("ray-1", request_for("danbi", {"capacity=2"}), 3);
    for (const auto& [name, capacity] : ray1) CHECK(capacity == 2);
    // mergesort, tiny: 2^16 keys in 16 chunks of 4096; the feedback queues keep their floors.
    const auto sort = used("mergesort", request_for("danbi", {"capacity=5"}), 8);
    CHECK(sort == std::map<std::string, std::size_t>{{"chunks", 5}, {"runs", 32}, {"merges", 16}, {"sorted", 5}});
    const auto big = used("mergesort", request_for("gramps", {"capacity=100"}), 2);
    CHECK(big == std::map<std::string, std::size_t>{{"chunks", 100}, {"runs", 100}, {"merges", 100}, {"sorted", 100}});
    // Without it, danbi's rule: one descriptor at a time on either side, so P packets, and the floors.
    CHECK(described("mergesort", request_for("danbi", {}, 40)) ==
          std::map<std::string, std::size_t>{{"chunks", 40}, {"runs", 40}, {"merges", 40}, {"sorted", 40}});
    CHECK(described("mergesort", request_for("gramps", {}, 40)) ==
          std::map<std::string, std::size_t>{{"chunks", 16}, {"runs", 32}, {"merges", 16}, {"sorted", 1}});
    const auto hist = used("histogram", request_for("task-stealing", {"capacity=7"}), 2);
    for (const auto& [name, capacity] : hist) CHECK(capacity == 7);
}

TEST_CASE("a capacity below a workload's minimum is refused saying why", "[graph][capacity]") {
    // fm-radio's FIR filters peek 63 samples past a 64-sample packet: 2 + 1 packets at least.
    const std::string fm = error_of("fm-radio", "gramps", {"capacity=2"});
    CHECK(fm == "--param capacity=2: fm-radio's queues need at least 3 packets: a 64-tap filter peeks 63 samples past "
                "its packet of 64 and its producer needs a free packet meanwhile");
    // ray-1's camera reserves two packets of rays at once.
    CHECK(error_of("ray-1", "danbi", {"capacity=1"}) ==
          "--param capacity=1: queue 'rays' needs at least 2 packets: stage 'camera' reserves 2 at once");
    CHECK_THAT(error_of("mergesort", "danbi", {"capacity=0"}), Catch::Contains("must be between 1 and 65536"));
    CHECK_THAT(error_of("ferret", "danbi", {"capacity=x"}), Catch::Contains("not a non-negative integer"));
    CHECK_THAT(error_of("ferret", "piper", {"capacity=4"}), Catch::Contains("only the graph policies take it"));
}

TEST_CASE("every graph workload's capacity parameter states the rules", "[graph][capacity]") {
    for (const workload* w : all_workloads()) {
        if (!w->is_graph() && !w->has_chain_graph()) continue;
        INFO(w->name());
        const std::string p = w->parameters();
        CHECK_THAT(p, Catch::Contains("capacity=<danbi: max(P·T, C·T) packets") && Catch::Contains("seed 002 §IV-A") &&
                          Catch::Contains("gramps") && Catch::Contains("seed 004 §II-C"));
    }
}
