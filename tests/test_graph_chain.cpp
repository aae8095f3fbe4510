// ferret and dedup as chain stage graphs (issue 6): the same stages as their pipelines, run by every
// graph policy, with outputs equal to the serial references byte for byte.
#include <pipescope/graph/program.hpp>
#include <pipescope/workloads/dedup.hpp>
#include <pipescope/workloads/ferret.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

run_request request_for(const std::string& policy, std::vector<std::string> params) {
    run_request r;
    r.policy = policy;
    r.size = input_size::tiny;
    r.params = param_set::parse(params);
    return r;
}

// The workload's forms, as the parameter that selects each.
std::vector<std::string> forms_of(const std::string& workload) {
    if (workload == "ferret") return {"stages=6", "stages=3"};
    return {"form=skip", "form=fanout"};
}

std::string error_of(const workload& w, scheduler& s, run_request r) {
    try {
        w.run(s, r);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}

// dedup input with repeats close together, so that chunks with equal content are hashed out of
// order by parallel instances (the table's claim order is then really tested).
byte_vector repetitive_input() {
    byte_vector base = dedup_corpus(96 * 1024, 7);
    byte_vector out;
    for (int k = 0; k < 3; ++k) {
        out.insert(out.end(), base.begin(), base.end());
        out[out.size() - 1000] ^= static_cast<std::uint8_t>(k + 1);   // a few bytes changed each time
    }
    return out;
}

}   // namespace

TEST_CASE("chain graphs: ferret and dedup say they have one and run under every graph policy", "[graph][chain]") {
    for (const char* name : {"ferret", "dedup"}) {
        const workload* w = find_workload(name);
        REQUIRE(w != nullptr);
        CHECK(w->has_chain_graph());
        CHECK_FALSE(w->is_graph());
        for (const auto& p : graph::policies()) CHECK(w->cannot_run_under(p.name).empty());
        CHECK(w->cannot_run_under("piper").empty());
    }
}

TEST_CASE("chain graphs: ferret and dedup at tiny match their references under every graph policy, P = 1, 2",
          "[graph][chain]") {
    for (const char* name : {"ferret", "dedup"}) {
        const workload* w = find_workload(name);
        REQUIRE(w != nullptr);
        for (const auto& p : graph::policies()) {
            for (unsigned workers : {1u, 2u}) {
                scheduler s({workers});
                for (const std::string& form : forms_of(name)) {
                    for (const char* packet : {"packet=1", "packet=3"}) {
                        run_request r = request_for(p.name, {form, packet, "capacity=2"});
                        bool started = false;
                        r.on_measured_start = [&](double) { started = true; };
                        const run_report rep = w->run(s, r);
                        INFO(name << " " << form << " " << packet << " under " << p.name << ", P = " << workers << ": "
                                  << rep.description);
                        CHECK(rep.matches_reference);
                        CHECK(started);
                        CHECK_THAT(rep.description, Catch::Contains("as a chain graph"));
                        if (std::string(name) == "dedup") CHECK_THAT(rep.description, Catch::Contains("restores the input"));
                        REQUIRE(rep.graph.has_value());
                        const program_info prog = w->program(request_for(p.name, {form, packet, "capacity=2"}));
                        REQUIRE(rep.graph->queues.size() == prog.stages.size() - 1);
                        // One element per item on every queue: what the source pushed reached the output.
                        const auto items = rep.graph->queues.front().stats.elements_pushed;
                        CHECK(items > 0);
                        for (const auto& q : rep.graph->queues) {
                            CHECK(q.stats.elements_pushed == items);
                            CHECK(q.stats.elements_popped == items);
                        }
                        if (std::string(name) == "ferret") CHECK(items == 12);
                    }
                }
            }
        }
    }
}

TEST_CASE("chain graphs: the direct APIs equal the serial programs", "[graph][chain]") {
    // ferret: search_graph against search_serial, with packets of one and of several queries.
    ferret::corpus_config corpus;
    corpus.side = 24;
    corpus.database_images = 40;
    corpus.queries = 17;   // not a multiple of the packet size: the source flushes a short packet
    scheduler s2({2});
    const ferret::database db = ferret::build_database(s2, corpus, {});
    const auto expected = ferret::search_serial(db);
    // dedup: dedup_graph against dedup_serial on input with near repeats.
    dedup_config c;
    c.coarse_size = 16 * 1024;
    c.min_chunk = 256;
    c.avg_chunk = 1024;
    c.max_chunk = 4096;
    c.level = 1;
    const byte_vector input = repetitive_input();
    memory_reader serial_in(input);
    dedup_stats serial_stats;
    const byte_vector serial = dedup_serial(serial_in, c, &serial_stats);
    REQUIRE(serial_stats.duplicate_chunks > 0);

    for (const auto& p : graph::policies()) {
        for (unsigned workers : {1u, 2u}) {
            scheduler s({workers});
            graph::run_options o;
            o.policy = p.name;
            for (std::size_t packet : {std::size_t{1}, std::size_t{4}}) {
                chain_shape shape;
                shape.packet = packet;
                shape.capacity = 3;
                INFO(p.name << ", P = " << workers << ", packet " << packet);
                for (auto form : {ferret::program_form::six_stage, ferret::program_form::sps}) {
                    graph::run_stats st;
                    CHECK(ferret::search_graph(s, db, form, shape, o, &st) == expected);
                    CHECK(st.instances ==
                          (form == ferret::program_form::six_stage ? 4u : 1u) * ((17 + packet - 1) / packet));
                }
                for (dedup_form form : {dedup_form::skip, dedup_form::fanout}) {
                    memory_reader in(input);
                    dedup_stats st;
                    const byte_vector archive = dedup_graph(s, in, c, form, shape, o, nullptr, &st);
                    CHECK(archive == serial);
                    CHECK(dedup_restore(archive) == input);
                    CHECK(st.fine_chunks == serial_stats.fine_chunks);
                    CHECK(st.new_chunks == serial_stats.new_chunks);
                }
            }
        }
    }
}

TEST_CASE("chain graphs: as many stages as the declared pipeline, every queue ordered", "[graph][chain]") {
    for (const char* name : {"ferret", "dedup"}) {
        const workload* w = find_workload(name);
        REQUIRE(w != nullptr);
        for (const std::string& form : forms_of(name)) {
            const program_info pipeline = w->program(request_for("piper", {form}));
            for (const auto& p : graph::policies()) {
                INFO(name << " " << form << " under " << p.name);
                const program_info chain = w->program(request_for(p.name, {form, "packet=2", "capacity=5"}));
                CHECK(pipeline.kind == "pipeline");
                CHECK(chain.kind == "graph");
                REQUIRE(chain.stages.size() == pipeline.stages.size());
                // Serial where the pipeline's stage is serial (stage 0, and the in-order last stage,
                // a stage_wait), parallel where it is parallel.
                for (std::size_t k = 0; k < chain.stages.size(); ++k) {
                    const std::string& kind = pipeline.stages[k].kind;
                    CHECK(chain.stages[k].kind == (kind == "parallel" ? "parallel" : "serial"));
                }
                REQUIRE(chain.queues.size() == chain.stages.size() - 1);
                for (std::size_t q = 0; q < chain.queues.size(); ++q) {
                    CHECK(chain.queues[q].ordered);
                    CHECK(chain.queues[q].packet_elements == 2);
                    CHECK(chain.queues[q].capacity_packets == 5);
                    CHECK(chain.queues[q].producers == std::vector<std::size_t>{q});
                    CHECK(chain.queues[q].consumer == q + 1);
                }
            }
        }
    }
}

TEST_CASE("chain graphs: parameters of the other kind of policy are refused, naming the key", "[graph][chain]") {
    scheduler s({1});
    for (const char* name : {"ferret", "dedup"}) {
        const workload* w = find_workload(name);
        REQUIRE(w != nullptr);
        for (const auto& p : graph::policies()) {
            for (const char* kv : {"K=4", "lazy=off", "folding=off", "c=2", "queue=4"}) {
                INFO(name << " under " << p.name << " with " << kv);
                const std::string msg = error_of(*w, s, request_for(p.name, {kv}));
                CHECK_THAT(msg, Catch::Contains(std::string("--param ") + kv) && Catch::Contains("pipe_while parameter") &&
                                    Catch::Contains(p.name));
            }
            CHECK_THAT(error_of(*w, s, request_for(p.name, {"packet=0"})),
                       Catch::Contains("--param packet=0: must be between 1"));
            CHECK_THAT(error_of(*w, s, request_for(p.name, {"colour=1"})),
                       Catch::Contains(std::string("unknown parameter(s) for ") + name + ": colour"));
        }
        for (const char* kv : {"packet=2", "capacity=4"}) {
            INFO(name << " under piper with " << kv);
            CHECK_THAT(error_of(*w, s, request_for("piper", {kv})),
                       Catch::Contains(std::string("--param ") + kv) && Catch::Contains("only the graph policies"));
        }
    }
}
