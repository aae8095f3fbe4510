// dedup as a pipe_while loop, in two forms (see dedup.hpp). Both share the chunk table and the
// stage functions of dedup_table.hpp (as does the chain graph, dedup_graph.cpp); only the shape of
// the iterations differs.
#include "dedup_table.hpp"

#include <pipescope/annotate.hpp>
#include <pipescope/task_group.hpp>

namespace pipescope::workloads {

using namespace dedup_detail;

dedup_form parse_dedup_form(const std::string& name) {
    if (name == "skip") return dedup_form::skip;
    if (name == "fanout") return dedup_form::fanout;
    throw std::invalid_argument("--param form=" + name + ": expected skip or fanout");
}

const char* dedup_form_name(dedup_form f) { return f == dedup_form::skip ? "skip" : "fanout"; }

namespace {

// One iteration per fine chunk; a known duplicate skips stage 2 (seed 003 Alg. 2, seed 001 Fig. 4,
// with the hash stage parallel as in seed 000 §2.2 and the order decided in the output stage).
pipeline_stats run_skip_form(scheduler& s, byte_reader& in, const dedup_config& c, const pipeline_options& options,
                             chunk_table& table, archive_writer& out, dedup_stats& st) {
    fine_chunk_stream stream(in, c, st);
    chunk_job pending;
    return pipe_while(
        s, [&] { return stream.next(pending); },
        [&](iteration& it) -> pipe_task {
            chunk_job job = std::move(pending);   // stage 0: the chunk stage 0 just read
            co_await it.stage(1);                 // stage 1 (parallel): SHA-1 and the table
            annotate("bytes", job.length);        // in the trace: what each node worked on
            hash_and_claim(job, table);
            if (!job.known_duplicate) {
                co_await it.stage(2);   // stage 2 (parallel): compress; duplicates skip it
                compress_job(job, c.level);
                if (job.compressed_ready) annotate("compressed", job.compressed.size());
            }
            co_await it.stage_wait(3);   // stage 3 (serial, in order): write the record
            emit(job, out, st);
        },
        options);
}

// One iteration per coarse chunk; stage 1 cuts it and processes its fine chunks by fork-join
// (seed 000 §2.2: FindAllAnchors makes many items from one; seed 001 §10: nested parallelism
// inside a stage).
pipeline_stats run_fanout_form(scheduler& s, byte_reader& in, const dedup_config& c, const pipeline_options& options,
                               chunk_table& table, archive_writer& out, dedup_stats& st) {
    coarse_job pending;
    // The fine chunks of one coarse chunk, in parallel: a task each, then sync.
    const auto fork_join = [&s](std::vector<chunk_job*>& jobs, const auto& fn) {
        task_group g(s);
        for (chunk_job* j : jobs)
            g.spawn([j, &fn] {
                annotate("bytes", j->length);   // on the task's slice
                fn(*j);
            });
        g.sync();
    };
    return pipe_while(
        s, [&] { return next_coarse_chunk(in, c, st, pending); },
        [&](iteration& it) -> pipe_task {
            coarse_job job = std::move(pending);   // stage 0: the coarse chunk stage 0 just read
            co_await it.stage(1);                  // stage 1 (parallel): anchors, then every fine chunk in parallel
            annotate("bytes", job.coarse->size());
            process_coarse_chunk(job, c, table, fork_join);
            annotate("chunks", job.fine.size());
            co_await it.stage_wait(2);   // stage 2 (serial, in order): write this coarse chunk's records
            emit_coarse(job, out, st);
        },
        options);
}

}   // namespace

byte_vector dedup_pipeline(scheduler& s, byte_reader& in, const dedup_config& c, dedup_form form,
                           const pipeline_options& options, pipeline_stats* pstats, dedup_stats* stats) {
    validate(c);
    // The structure is fixed (only skipping varies), so construct-and-run policies can run it too.
    pipeline_options o = options;
    if (o.declared_stages.empty()) {
        using k = stage_kind;
        o.declared_stages = form == dedup_form::skip
                                ? std::vector<k>{k::serial_in_order, k::parallel, k::parallel, k::serial_in_order}
                                : std::vector<k>{k::serial_in_order, k::parallel, k::serial_in_order};
    }
    dedup_stats st;
    chunk_table table;
    archive_writer out(c);
    const pipeline_stats ps =
        form == dedup_form::skip ? run_skip_form(s, in, c, o, table, out, st) : run_fanout_form(s, in, c, o, table, out, st);
    byte_vector archive = out.finish();
    st.archive_bytes = archive.size();
    if (pstats) *pstats = ps;
    if (stats) *stats = st;
    return archive;
}

}   // namespace pipescope::workloads
