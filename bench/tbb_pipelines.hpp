// ferret and dedup as oneTBB parallel_pipeline programs, for bench_pipelines_vs_tbb.
//
// Each filter calls exactly the stage function the pipescope pipeline calls in the same stage
// (workloads/src/ferret_pipeline.cpp, workloads/src/dedup_pipeline.cpp), with the same filter
// modes as the stage kinds those pipelines declare, and the result is built the same way, so it
// must equal the serial program's byte for byte. An item travels between filters as a pointer to a
// heap object that holds what pipescope keeps in the iteration's coroutine frame.
//
// Call these inside the tbb::task_arena that limits oneTBB to P threads.
#pragma once

#include <pipescope/workloads/dedup.hpp>
#include <pipescope/workloads/ferret.hpp>

// dedup's chunk table and its three per-chunk steps (hash_and_claim, compress_job, emit) live in a
// header internal to the workloads library; bench/CMakeLists.txt adds workloads/src to this
// program's include path so that oneTBB runs the very same code as the pipescope pipeline.
#include "dedup_table.hpp"

#include <oneapi/tbb/parallel_pipeline.h>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace bench::tbb_pipelines {

// ---------------------------------------------------------------------------------------------
// ferret

namespace ferret = pipescope::workloads::ferret;

// What one query carries from stage to stage (the locals of the pipescope iteration body).
struct ferret_item {
    unsigned q = 0;
    ferret::image img;
    ferret::segmentation seg;
    ferret::signature sig;
    std::vector<unsigned> cand;
    ferret::top_list top;
};

// Six filters: load (serial in order) | segment | extract | query | rank (parallel) | output
// (serial in order); or, for program_form::sps, load | the four middle stages in one | output.
inline std::vector<ferret::top_list> ferret_tbb(const ferret::database& db, ferret::program_form form, std::size_t tokens) {
    const ferret::search_config& cfg = db.search;
    const ferret::lsh_index& index = *db.index;
    std::vector<ferret::top_list> results;
    results.reserve(db.corpus.queries);
    unsigned next = 0;
    using tbb::filter_mode;

    auto load =
        tbb::make_filter<void, ferret_item*>(filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> ferret_item* {
            if (next >= db.corpus.queries) {
                fc.stop();
                return nullptr;
            }
            auto item = std::make_unique<ferret_item>();
            item->q = next++;
            item->img = ferret::query_image(db.corpus, item->q);
            return item.release();
        });
    auto output = tbb::make_filter<ferret_item*, void>(filter_mode::serial_in_order, [&](ferret_item* raw) {
        std::unique_ptr<ferret_item> item(raw);
        results.push_back(std::move(item->top));
    });

    if (form == ferret::program_form::six_stage) {
        auto seg = tbb::make_filter<ferret_item*, ferret_item*>(filter_mode::parallel, [&](ferret_item* item) {
            item->seg = ferret::segment(item->img, cfg.regions);
            return item;
        });
        auto extract = tbb::make_filter<ferret_item*, ferret_item*>(filter_mode::parallel, [&](ferret_item* item) {
            item->sig = ferret::extract_features(item->img, item->seg);
            return item;
        });
        auto query = tbb::make_filter<ferret_item*, ferret_item*>(filter_mode::parallel, [&](ferret_item* item) {
            item->cand = index.candidates(item->sig, cfg.candidates);
            return item;
        });
        auto rank = tbb::make_filter<ferret_item*, ferret_item*>(filter_mode::parallel, [&](ferret_item* item) {
            item->top = ferret::rank(index, item->sig, item->cand, cfg.top);
            return item;
        });
        tbb::parallel_pipeline(tokens, load & seg & extract & query & rank & output);
    } else {
        auto middle = tbb::make_filter<ferret_item*, ferret_item*>(filter_mode::parallel, [&](ferret_item* item) {
            const ferret::signature sig = ferret::extract_features(item->img, ferret::segment(item->img, cfg.regions));
            item->top = ferret::rank(index, sig, index.candidates(sig, cfg.candidates), cfg.top);
            return item;
        });
        tbb::parallel_pipeline(tokens, load & middle & output);
    }
    return results;
}

// ---------------------------------------------------------------------------------------------
// dedup (the pipescope "skip" form: one item per fine chunk)

namespace dd = pipescope::workloads::dedup_detail;

// Stage 0: hands out fine chunks in input order, reading and cutting the next coarse chunk when the
// current one is used up — read_coarse_chunk and fine_chunk_ends, as the pipescope skip form's
// stage 0 does.
class fine_chunk_source {
public:
    fine_chunk_source(pipescope::workloads::byte_reader& in, const pipescope::workloads::dedup_config& c)
        : in_(in), config_(c) {}

    // The next fine chunk, or nullptr at the end of the input.
    std::unique_ptr<dd::chunk_job> next() {
        while (fine_ == ends_.size()) {
            pipescope::workloads::byte_vector bytes = pipescope::workloads::read_coarse_chunk(in_, config_);
            if (bytes.empty()) return nullptr;
            ends_ = pipescope::workloads::fine_chunk_ends(bytes.data(), bytes.size(), config_);
            coarse_ = std::make_shared<const pipescope::workloads::byte_vector>(std::move(bytes));
            coarse_index_ = coarse_count_++;
            fine_ = 0;
        }
        auto job = std::make_unique<dd::chunk_job>();
        job->coarse = coarse_;
        job->begin = fine_ == 0 ? 0 : ends_[fine_ - 1];
        job->length = ends_[fine_] - job->begin;
        job->order = dd::chunk_order(coarse_index_, fine_);
        ++fine_;
        return job;
    }

private:
    pipescope::workloads::byte_reader& in_;
    const pipescope::workloads::dedup_config& config_;
    std::shared_ptr<const pipescope::workloads::byte_vector> coarse_;
    std::vector<std::size_t> ends_;
    std::size_t fine_ = 0;
    std::uint64_t coarse_index_ = 0;
    std::uint64_t coarse_count_ = 0;
};

// Four filters: read and cut (serial in order) | SHA-1 and table claim (parallel) | zlib compress
// (parallel; a chunk already known to be a duplicate passes through, since a TBB token cannot skip
// a filter) | write the record (serial in order). Returns the archive.
inline pipescope::workloads::byte_vector dedup_tbb(pipescope::workloads::byte_reader& in,
                                                   const pipescope::workloads::dedup_config& c, std::size_t tokens) {
    pipescope::workloads::validate(c);
    fine_chunk_source source(in, c);
    dd::chunk_table table;
    pipescope::workloads::archive_writer out(c);
    pipescope::workloads::dedup_stats st;
    using tbb::filter_mode;
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, dd::chunk_job*>(filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> dd::chunk_job* {
            std::unique_ptr<dd::chunk_job> job = source.next();
            if (!job) fc.stop();
            return job.release();
        }) & tbb::make_filter<dd::chunk_job*, dd::chunk_job*>(filter_mode::parallel, [&](dd::chunk_job* job) {
            dd::hash_and_claim(*job, table);
            return job;
        }) & tbb::make_filter<dd::chunk_job*, dd::chunk_job*>(filter_mode::parallel, [&](dd::chunk_job* job) {
            if (!job->known_duplicate) dd::compress_job(*job, c.level);
            return job;
        }) & tbb::make_filter<dd::chunk_job*, void>(filter_mode::serial_in_order, [&](dd::chunk_job* raw) {
            std::unique_ptr<dd::chunk_job> job(raw);
            dd::emit(*job, out, st);
        }));
    return out.finish();
}

}   // namespace bench::tbb_pipelines
