// dedup as a pipe_while loop, in two forms (see dedup.hpp). Both share the chunk table and the
// three steps of dedup_table.hpp; only the shape of the iterations differs.
#include "dedup_table.hpp"

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

// Stage 0 of the skip form: hands out fine chunks one at a time, reading and cutting the next
// coarse chunk when the current one is used up (seed 000 §2.2: DataProcess, then FindAllAnchors).
class fine_chunk_stream {
public:
    fine_chunk_stream(byte_reader& in, const dedup_config& c, dedup_stats& st) : in_(in), config_(c), stats_(st) {}

    bool next(chunk_job& job) {
        while (fine_ == ends_.size()) {
            byte_vector bytes = read_coarse_chunk(in_, config_);
            if (bytes.empty()) return false;
            ++stats_.coarse_chunks;
            stats_.input_bytes += bytes.size();
            ends_ = fine_chunk_ends(bytes.data(), bytes.size(), config_);
            coarse_ = std::make_shared<const byte_vector>(std::move(bytes));
            coarse_index_ = stats_.coarse_chunks - 1;
            fine_ = 0;
        }
        job = chunk_job{};
        job.coarse = coarse_;
        job.begin = fine_ == 0 ? 0 : ends_[fine_ - 1];
        job.length = ends_[fine_] - job.begin;
        job.order = chunk_order(coarse_index_, fine_);
        ++fine_;
        return true;
    }

private:
    byte_reader& in_;
    const dedup_config& config_;
    dedup_stats& stats_;
    std::shared_ptr<const byte_vector> coarse_;
    std::vector<std::size_t> ends_;
    std::size_t fine_ = 0;
    std::uint64_t coarse_index_ = 0;
};

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
            hash_and_claim(job, table);
            if (!job.known_duplicate) {
                co_await it.stage(2);             // stage 2 (parallel): compress; duplicates skip it
                compress_job(job, c.level);
            }
            co_await it.stage_wait(3);            // stage 3 (serial, in order): write the record
            emit(job, out, st);
        },
        options);
}

// One iteration per coarse chunk; stage 1 cuts it and processes its fine chunks by fork-join
// (seed 000 §2.2: FindAllAnchors makes many items from one; seed 001 §10: nested parallelism
// inside a stage).
pipeline_stats run_fanout_form(scheduler& s, byte_reader& in, const dedup_config& c, const pipeline_options& options,
                               chunk_table& table, archive_writer& out, dedup_stats& st) {
    std::shared_ptr<const byte_vector> pending;
    auto read_next = [&] {
        byte_vector bytes = read_coarse_chunk(in, c);
        if (bytes.empty()) return false;
        ++st.coarse_chunks;
        st.input_bytes += bytes.size();
        pending = std::make_shared<const byte_vector>(std::move(bytes));
        return true;
    };
    return pipe_while(
        s, read_next,
        [&](iteration& it) -> pipe_task {
            std::shared_ptr<const byte_vector> coarse = std::move(pending);   // stage 0
            const std::uint64_t coarse_index = st.coarse_chunks - 1;
            co_await it.stage(1);   // stage 1 (parallel): anchors, then every fine chunk in parallel
            std::vector<chunk_job> jobs;
            {
                const std::vector<std::size_t> ends = fine_chunk_ends(coarse->data(), coarse->size(), c);
                jobs.resize(ends.size());
                for (std::size_t k = 0; k < ends.size(); ++k) {
                    jobs[k].coarse = coarse;
                    jobs[k].begin = k == 0 ? 0 : ends[k - 1];
                    jobs[k].length = ends[k] - jobs[k].begin;
                    jobs[k].order = chunk_order(coarse_index, k);
                }
                // Two fork-join rounds: all claims first, so that a chunk repeated within this
                // coarse chunk is known to be a duplicate before anything is compressed.
                task_group g(s);
                for (chunk_job& j : jobs) g.spawn([&j, &table] { hash_and_claim(j, table); });
                g.sync();
                for (chunk_job& j : jobs)
                    if (!j.known_duplicate) g.spawn([&j, level = c.level] { compress_job(j, level); });
                g.sync();
            }
            co_await it.stage_wait(2);   // stage 2 (serial, in order): write this coarse chunk's records
            for (chunk_job& j : jobs) emit(j, out, st);
        },
        options);
}

}  // namespace

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
    const pipeline_stats ps = form == dedup_form::skip ? run_skip_form(s, in, c, o, table, out, st)
                                                       : run_fanout_form(s, in, c, o, table, out, st);
    byte_vector archive = out.finish();
    st.archive_bytes = archive.size();
    if (pstats) *pstats = ps;
    if (stats) *stats = st;
    return archive;
}

}  // namespace pipescope::workloads
