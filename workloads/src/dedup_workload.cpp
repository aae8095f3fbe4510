// `dedup` as a named workload: compress the generated corpus (or input=PATH) in the chosen form,
// check the archive against the serial program's byte for byte, and check that it restores.
#include <pipescope/workloads/chain_graph.hpp>
#include <pipescope/workloads/dedup.hpp>
#include <pipescope/workloads/graph_workload.hpp>
#include <pipescope/workloads/workload.hpp>

#include <pipescope/trace/atomic_output.hpp>

#include "description.hpp"

#include <chrono>
#include <memory>
#include <optional>

namespace pipescope::workloads {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::size_t default_bytes(input_size s) {
    switch (s) {
        case input_size::tiny: return 256 * 1024;
        case input_size::small: return 8u << 20;
        case input_size::large: return 256u << 20;
    }
    return 8u << 20;
}

// Coarse chunks shrink with the input so that tiny runs still have several fan-out iterations.
std::size_t default_coarse(input_size s) { return s == input_size::tiny ? 32 * 1024 : 512 * 1024; }

struct dedup_params {
    dedup_config config;
    dedup_form form = dedup_form::skip;
    std::optional<std::string> input, output;
    std::size_t bytes = 0;
};

dedup_params take_params(param_set& params, input_size size) {
    dedup_params p;
    p.form = parse_dedup_form(params.take_string("form").value_or("skip"));
    p.input = params.take_string("input");
    p.output = params.take_string("output");
    if (p.output) trace::check_output_path(*p.output);   // before the run, not after it
    p.bytes = params.take_uint("bytes", default_bytes(size), 0, std::uint64_t{4} << 30);
    dedup_config& c = p.config;
    c.coarse_size = params.take_uint("coarse", default_coarse(size), 4096, 1u << 26);
    c.min_chunk = params.take_uint("min_chunk", c.min_chunk, 64, 1u << 20);
    c.avg_chunk = params.take_uint("avg_chunk", c.avg_chunk, 66, 1u << 22);
    c.max_chunk = params.take_uint("max_chunk", c.max_chunk, 67, 1u << 24);
    c.level = static_cast<int>(params.take_uint("level", 6, 0, 9));
    validate(c);   // the relations between them (min < avg < max)
    return p;
}

class dedup_workload final : public workload {
public:
    std::string name() const override { return "dedup"; }
    std::string summary() const override {
        return "deduplicating compressor (seed 000 §2.2, 001 §10, 003 Alg. 2): Gear chunking, SHA-1, zlib; "
               "stage skipping or fan-out";
    }
    std::string parameters() const override {
        return "form=skip: skip (one iteration per fine chunk, duplicates skip compression) or fanout (one "
               "iteration per coarse chunk, fork-join inside)\n"
               "input=<generated corpus>: a file to compress instead\n"
               "output=<none>: write the archive here (restore with `pipescope dedup-restore`)\n"
               "bytes=<by size: tiny 262144, small 8388608, large 268435456>: generated corpus size\n"
               "coarse=<by size: tiny 32768, else 524288>: coarse chunk bytes (4096..67108864)\n"
               "min_chunk=1024, avg_chunk=4096, max_chunk=32768: fine chunk sizes (64 <= min < avg < max)\n"
               "level=6: zlib level (0..9)\n" +
               std::string(pipeline_parameters) + "\n" + chain_parameters() + "\n" + graph_policy_parameters();
    }

    run_report run(scheduler& s, run_request& request) const override {
        const dedup_params p = take_params(request.params, request.size);
        const chain_shape shape = take_chain_parameters(request, request.params, name());
        const bool graph = is_graph_policy(request.policy);
        pipeline_options options;
        if (graph) {
            reject_unknown_for_graph(request, request.params, name());
        } else {
            options = pipeline_options_from(request, request.params);
            request.params.reject_unknown(name());
        }

        byte_vector corpus;
        if (!p.input) corpus = dedup_corpus(p.bytes, request.seed);
        auto make_reader = [&]() -> std::unique_ptr<byte_reader> {
            if (p.input) return std::make_unique<file_reader>(*p.input);
            return std::make_unique<memory_reader>(corpus);
        };

        run_report report;
        byte_vector reference, archive;
        dedup_stats st;
        if (graph) {
            // The chain graph (issue 6): the same stages, scheduled by a graph policy.
            dedup_chain chain(p.config, p.form, shape);
            std::unique_ptr<byte_reader> reader;
            run_graph_workload(
                name(), s, request, request.params, chain.program(),
                [&] { reference = dedup_serial(*make_reader(), p.config, nullptr, request.cancel); },
                [&] {
                    reader = make_reader();
                    chain.reset(*reader);
                },
                report, chain_sizing(shape));
            archive = chain.finish(&st);
        } else {
            auto t0 = std::chrono::steady_clock::now();
            reference = dedup_serial(*make_reader(), p.config, nullptr, request.cancel);
            report.reference_seconds = seconds_since(t0);

            auto reader = make_reader();
            if (request.on_measured_start) request.on_measured_start(report.reference_seconds);
            t0 = std::chrono::steady_clock::now();
            archive = dedup_pipeline(s, *reader, p.config, p.form, options, &report.stats, &st);
            if (request.on_measured_end) request.on_measured_end();
            report.seconds = seconds_since(t0);
        }

        const bool restores = dedup_restore(archive) == (p.input ? read_whole_file(*p.input) : corpus);
        report.matches_reference = archive == reference && restores;
        if (p.output) write_file_atomically(*p.output, archive);

        report.description =
            fmt::format("form {}{}, {} {} -> {}; {} chunks: {} new, {} duplicates ({} compressed in vain); {}{}",
                        dedup_form_name(p.form), graph ? " as a chain graph" : "", p.input ? *p.input : "generated corpus",
                        human_bytes(st.input_bytes), human_bytes(st.archive_bytes), st.fine_chunks, st.new_chunks,
                        st.duplicate_chunks, st.wasted_compressions,
                        restores ? "restores the input" : "DOES NOT RESTORE THE INPUT",
                        p.output ? "; archive written to " + *p.output : "");
        return report;
    }

    program_info program(const run_request& request) const override {
        param_set params = request.params;   // a copy: only the form (and a chain graph's shape) matter here
        const dedup_form form = parse_dedup_form(params.take_string("form").value_or("skip"));
        if (is_graph_policy(request.policy)) return chain_program(request, params, form);
        program_info p;
        if (form == dedup_form::skip) {
            p.shape = "one iteration per fine chunk; a chunk whose SHA-1 is already claimed by an earlier chunk "
                      "skips stage 2 (stage skipping)";
            p.stages = {{"stage 0 · read", "serial", "next fine chunk; reads and cuts a coarse chunk when needed"},
                        {"stage 1 · hash", "parallel", "SHA-1 and a claim in the global chunk table"},
                        {"stage 2 · compress", "parallel", "zlib; skipped by chunks known to be duplicates"},
                        {"stage 3 · write", "stage_wait", "in input order: new chunk or reference to an earlier one"}};
        } else {
            p.shape = "one iteration per coarse chunk; stage 1 forks one task per fine chunk";
            p.stages = {{"stage 0 · read", "serial", "next coarse chunk"},
                        {"stage 1 · chunk, hash, compress", "parallel",
                         "Gear anchors, then task_group: SHA-1, table claim, zlib per fine chunk"},
                        {"stage 2 · write", "stage_wait", "the coarse chunk's records, in input order"}};
        }
        return p;
    }

    bool has_chain_graph() const override { return true; }

private:
    // The chain graph's structure (its shape from a copy of the parameters: run() reports bad values).
    static program_info chain_program(const run_request& request, param_set& params, dedup_form form) {
        chain_shape shape;
        try {
            shape = take_chain_parameters(request, params, "dedup");
        } catch (const std::invalid_argument&) {
            // describe the default shape meanwhile
        }
        const dedup_chain chain(dedup_config{}, form, shape);   // the structure does not depend on the sizes
        const std::string per_packet = std::to_string(shape.packet) + " per packet";
        if (form == dedup_form::skip)
            return describe_graph(chain.program(), request,
                                  "chain graph, one element per fine chunk (" + per_packet +
                                      "); a known duplicate passes through compress untouched; every queue ordered, "
                                      "so the write stage sees chunks in input order",
                                  {"next fine chunk; reads and cuts a coarse chunk when needed",
                                   "SHA-1 and a claim in the global chunk table",
                                   "zlib, unless the chunk is known to be a duplicate",
                                   "in input order: new chunk or reference to an earlier one"},
                                  chain_sizing(shape));
        return describe_graph(chain.program(), request,
                              "chain graph, one element per coarse chunk (" + per_packet +
                                  "); every queue ordered, so the write stage sees chunks in input order",
                              {"next coarse chunk",
                               "Gear anchors, then SHA-1, table claim and zlib per fine chunk, one after the other",
                               "the coarse chunk's records, in input order"},
                              chain_sizing(shape));
    }
};

}   // namespace

const workload& dedup_compressor() {
    static const dedup_workload w;
    return w;
}

}   // namespace pipescope::workloads
