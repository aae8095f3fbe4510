// dedup as a chain stage graph (issue 6; chain_graph.hpp, dedup.hpp): the pipeline's stages, the
// same stage functions (dedup_table.hpp), run by the graph policies.
#include "dedup_table.hpp"

#include <deque>
#include <string>

namespace pipescope::workloads {

using namespace dedup_detail;

// One run's state. The queue elements point into `fine` or `coarse`: only the source stage appends
// to them, and std::deque::push_back never moves an element, so a pointer stays valid while other
// stages work on earlier records (they never touch the deque itself, only their own record).
struct dedup_chain::run_state {
    run_state(byte_reader& reader, const dedup_config& c) : in(&reader), out(c) {}
    byte_reader* in;
    dedup_stats stats;   // the source counts input, the write stage output: different fields
    chunk_table table;
    archive_writer out;
    std::deque<chunk_job> fine;      // skip form: one record per fine chunk
    std::deque<coarse_job> coarse;   // fan-out form: one record per coarse chunk
    // What the write stage saw last: the ordered queues must deliver records in input order.
    std::uint64_t written = 0;
    std::uint64_t last_order = 0;
};

namespace {

using fine_ref = chunk_job*;
using coarse_ref = coarse_job*;

// A parallel stage that runs `step` on each record of its input packet and passes it on in order.
template <class Ref, class Step>
graph::parallel_body each_record(Step step) {
    return [step](graph::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i) {
            const Ref r = ctx.in<Ref>(i);
            step(*r);
            ctx.push(0, r);
        }
    };
}

// The chain graph's middle stage runs a coarse chunk's fine chunks one after the other: its
// parallelism is its instances (GRAMPS shaders do not fork). A task_group's sync inside an
// instance runs whatever scheduler job the worker finds meanwhile (detail::completion_latch::wait),
// which may be another of the graph's worker loops, then nested inside this instance.
const auto one_by_one = [](std::vector<chunk_job*>& jobs, const auto& fn) {
    for (chunk_job* j : jobs) fn(*j);
};

[[noreturn]] void out_of_order(const std::string& what) {
    throw std::logic_error("dedup chain graph: " + what + " reached the write stage out of input order");
}

}   // namespace

dedup_chain::dedup_chain(const dedup_config& c, dedup_form form, const chain_shape& shape) : config_(c) {
    validate(config_);
    const graph::queue_shape q = chain_queue(shape);
    if (form == dedup_form::skip) {
        const auto chunks = g_.add_queue<fine_ref>("chunks", q);
        const auto hashed = g_.add_queue<fine_ref>("hashed", q);
        const auto compressed = g_.add_queue<fine_ref>("compressed", q);
        // Stage 0 · read (serial source): the next fine chunk, reading and cutting a coarse one when needed.
        g_.add_serial("read", {}, {chunks}, [this](graph::thread_context& ctx) -> graph::stage_task {
            run_state& r = state();
            fine_chunk_stream stream(*r.in, config_, r.stats);
            chunk_job job;
            while (stream.next(job)) {
                r.fine.push_back(std::move(job));
                co_await ctx.push(0, &r.fine.back());
            }
        });
        g_.add_parallel("hash", chunks, {{hashed, 1}},
                        each_record<fine_ref>([this](chunk_job& j) { hash_and_claim(j, state().table); }));
        // A chain has one path: a chunk known to be a duplicate passes through untouched (the
        // pipeline's stage skipping, seed 003 Alg. 2).
        g_.add_parallel("compress", hashed, {{compressed, 1}}, each_record<fine_ref>([this](chunk_job& j) {
                            if (!j.known_duplicate) compress_job(j, config_.level);
                        }));
        g_.add_serial("write", {compressed}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            run_state& r = state();
            for (;;) {
                graph::pop_window w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) {
                    chunk_job& j = *w.at<fine_ref>(i);
                    if (r.written > 0 && j.order <= r.last_order) out_of_order("a fine chunk");
                    r.last_order = j.order;
                    ++r.written;
                    emit(j, r.out, r.stats);
                }
                ctx.commit(w);
            }
        });
    } else {
        const auto chunks = g_.add_queue<coarse_ref>("coarse chunks", q);
        const auto processed = g_.add_queue<coarse_ref>("processed", q);
        g_.add_serial("read", {}, {chunks}, [this](graph::thread_context& ctx) -> graph::stage_task {
            run_state& r = state();
            coarse_job job;
            while (next_coarse_chunk(*r.in, config_, r.stats, job)) {
                r.coarse.push_back(std::move(job));
                co_await ctx.push(0, &r.coarse.back());
            }
        });
        g_.add_parallel("chunk, hash, compress", chunks, {{processed, 1}}, each_record<coarse_ref>([this](coarse_job& j) {
                            process_coarse_chunk(j, config_, state().table, one_by_one);
                        }));
        g_.add_serial("write", {processed}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
            run_state& r = state();
            for (;;) {
                graph::pop_window w = co_await ctx.pop(0);
                if (!w) break;
                for (std::size_t i = 0; i < w.size(); ++i) {
                    coarse_job& j = *w.at<coarse_ref>(i);
                    if (j.index != r.written) out_of_order("coarse chunk " + std::to_string(j.index));
                    ++r.written;
                    emit_coarse(j, r.out, r.stats);
                }
                ctx.commit(w);
            }
        });
    }
    g_.validate();
}

dedup_chain::~dedup_chain() = default;

dedup_chain::run_state& dedup_chain::state() const {
    if (!run_) throw std::logic_error("dedup chain graph: run without reset()");
    return *run_;
}

void dedup_chain::reset(byte_reader& in) { run_ = std::make_unique<run_state>(in, config_); }

byte_vector dedup_chain::finish(dedup_stats* stats) {
    run_state& r = state();
    byte_vector archive = r.out.finish();
    r.stats.archive_bytes = archive.size();
    if (stats) *stats = r.stats;
    return archive;
}

byte_vector dedup_graph(scheduler& s, byte_reader& in, const dedup_config& c, dedup_form form, const chain_shape& shape,
                        const graph::run_options& options, graph::run_stats* gstats, dedup_stats* stats) {
    dedup_chain chain(c, form, shape);
    chain.reset(in);
    const graph::run_stats st = graph::run(s, chain.program(), options);
    if (gstats) *gstats = st;
    return chain.finish(stats);
}

}   // namespace pipescope::workloads
