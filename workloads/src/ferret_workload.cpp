// `ferret` as a named workload.
#include <pipescope/workloads/chain_graph.hpp>
#include <pipescope/workloads/ferret.hpp>
#include <pipescope/workloads/graph_workload.hpp>
#include <pipescope/workloads/workload.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

namespace pipescope::workloads {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct size_defaults {
    unsigned side, database_images, queries;
};

size_defaults defaults_for(input_size s) {
    switch (s) {
        case input_size::tiny: return {24, 48, 12};
        case input_size::small: return {48, 300, 120};
        case input_size::large: return {64, 800, 2000};
    }
    return {48, 300, 120};
}

// stages=6 is PARSEC's pipeline, stages=3 the collapsed SPS form; nothing in between.
ferret::program_form take_form(param_set& params) {
    const auto stages = params.take_uint("stages", 6, 3, 6);
    if (stages != 3 && stages != 6)
        throw std::invalid_argument("--param stages=" + std::to_string(stages) +
                                    ": must be 6 (load | segment | extract | query | rank | output) or 3 "
                                    "(load | segment+extract+query+rank | output)");
    return stages == 6 ? ferret::program_form::six_stage : ferret::program_form::sps;
}

class ferret_workload final : public workload {
public:
    std::string name() const override { return "ferret"; }
    std::string summary() const override {
        return "image similarity search (seed 000 §2.1, seed 001 §10): segment, extract, LSH query, rank; "
               "6-stage or SPS";
    }
    std::string parameters() const override {
        return "stages=6: 6 (load | segment | extract | query | rank | output) or 3 (load | the four middle "
               "stages in one | output)\n"
               "queries=<by size: tiny 12, small 120, large 2000>: query images (1..1000000)\n"
               "database=<by size: tiny 48, small 300, large 800>: database images (1..1000000)\n"
               "side=<by size: tiny 24, small 48, large 64>: image side in pixels (8..1024)\n"
               "regions=8: k of the k-means segmentation (1..32)\n"
               "candidates=32: images the LSH index hands to the ranking (1..100000)\n"
               "top=10: length of each answer list (1..1000)\n" +
               std::string(pipeline_parameters) + "\n" + chain_parameters() + "\n" + graph_policy_parameters();
    }

    run_report run(scheduler& s, run_request& request) const override {
        param_set& params = request.params;
        const ferret::program_form form = take_form(params);
        const size_defaults d = defaults_for(request.size);
        ferret::corpus_config corpus;
        corpus.queries = static_cast<unsigned>(params.take_uint("queries", d.queries, 1, 1000000));
        corpus.database_images = static_cast<unsigned>(params.take_uint("database", d.database_images, 1, 1000000));
        corpus.side = static_cast<unsigned>(params.take_uint("side", d.side, 8, 1024));
        corpus.seed = request.seed;
        ferret::search_config search;
        search.regions = static_cast<unsigned>(params.take_uint("regions", search.regions, 1, 32));
        search.candidates = static_cast<unsigned>(params.take_uint("candidates", search.candidates, 1, 100000));
        search.top = static_cast<unsigned>(params.take_uint("top", search.top, 1, 1000));
        const chain_shape shape = take_chain_parameters(request, params, name());
        const bool graph = is_graph_policy(request.policy);
        pipeline_options options;
        if (graph) {
            reject_unknown_for_graph(request, params, name());
        } else {
            options = pipeline_options_from(request, params);
            params.reject_unknown(name());
        }

        // Set-up, not measured: the database's signatures and the LSH index (seed 000 §2.1: ferret
        // queries a database built beforehand).
        const ferret::database db = ferret::build_database(s, corpus, search);

        run_report report;
        std::vector<ferret::top_list> reference, result;
        if (graph) {
            // The chain graph (issue 6): the same stages, scheduled by a graph policy.
            ferret::search_chain chain(&db, form, shape);
            run_graph_workload(
                name(), s, request, params, chain.program(), [&] { reference = ferret::search_serial(db, request.cancel); },
                [&] { chain.reset(); }, report, chain_sizing(shape));
            result = chain.results();
        } else {
            auto t0 = std::chrono::steady_clock::now();
            reference = ferret::search_serial(db, request.cancel);
            report.reference_seconds = seconds_since(t0);

            if (request.on_measured_start) request.on_measured_start(report.reference_seconds);
            t0 = std::chrono::steady_clock::now();
            result = ferret::search_pipeline(s, db, form, options, &report.stats);
            if (request.on_measured_end) request.on_measured_end();
            report.seconds = seconds_since(t0);
        }

        report.matches_reference = result == reference;
        report.description = std::to_string(corpus.queries) + " queries against " + std::to_string(corpus.database_images) +
                             " images of " + std::to_string(corpus.side) + "x" + std::to_string(corpus.side) + ", " +
                             (form == ferret::program_form::six_stage ? "6 stages" : "SPS") +
                             (graph ? " as a chain graph" : "") + "; " +
                             std::to_string(ferret::queries_finding_source(db, result)) +
                             " found their source image in the top " + std::to_string(search.top);
        return report;
    }

    program_info program(const run_request& request) const override {
        param_set params = request.params;   // a copy: run() takes the real ones
        ferret::program_form form = ferret::program_form::six_stage;
        try {
            form = take_form(params);
        } catch (const std::invalid_argument&) {
            // run() reports the bad value; describe the default form meanwhile
        }
        if (is_graph_policy(request.policy)) return chain_program(request, params, form);
        program_info p;
        p.shape = "static: one iteration per query image";
        if (form == ferret::program_form::six_stage) {
            p.shape += ", six stages as PARSEC's pthreads ferret (seed 000 §2.1)";
            p.stages = {{"stage 0 · load", "serial", "generate query image i (the pipe_while condition too)"},
                        {"stage 1 · segment", "parallel", "k-means over colour and position"},
                        {"stage 2 · extract", "parallel", "a feature vector per region"},
                        {"stage 3 · query", "parallel", "LSH index: candidate images by region votes"},
                        {"stage 4 · rank", "parallel", "earth-mover-like distance to each candidate, top-k"},
                        {"stage 5 · output", "stage_wait", "append query i's top-k after query i-1's"}};
        } else {
            p.shape += ", the collapsed SPS form (seed 000 §3.1, seed 001 §1)";
            p.stages = {{"stage 0 · load", "serial", "generate query image i (the pipe_while condition too)"},
                        {"stage 1 · search", "parallel", "segment, extract, LSH query and rank in one node"},
                        {"stage 2 · output", "stage_wait", "append query i's top-k after query i-1's"}};
        }
        return p;
    }

    bool has_chain_graph() const override { return true; }

private:
    // The chain graph's structure (its shape, from a copy of the parameters: run() reports bad values).
    static program_info chain_program(const run_request& request, param_set& params, ferret::program_form form) {
        chain_shape shape;
        try {
            shape = take_chain_parameters(request, params, "ferret");
        } catch (const std::invalid_argument&) {
            // describe the default shape meanwhile
        }
        const ferret::search_chain chain(nullptr, form, shape);
        const std::string packets = std::to_string(shape.packet) + (shape.packet == 1 ? " query" : " queries");
        if (form == ferret::program_form::six_stage)
            return describe_graph(chain.program(), request,
                                  "chain graph of PARSEC's six stages (seed 000 §2.1), " + packets +
                                      " per packet; every queue ordered, so the output sees queries in order",
                                  {"generate query image i, push its number", "k-means over colour and position",
                                   "a feature vector per region", "LSH index: candidate images by region votes",
                                   "earth-mover-like distance to each candidate, top-k",
                                   "append query i's top-k after query i-1's (ordered input)"},
                                  chain_sizing(shape));
        return describe_graph(chain.program(), request,
                              "chain graph of the collapsed SPS form (seed 000 §3.1), " + packets +
                                  " per packet; every queue ordered, so the output sees queries in order",
                              {"generate query image i, push its number",
                               "segment, extract, LSH query and rank in one instance",
                               "append query i's top-k after query i-1's (ordered input)"},
                              chain_sizing(shape));
    }
};

}   // namespace

const workload& ferret_search() {
    static const ferret_workload w;
    return w;
}

}   // namespace pipescope::workloads
