// ferret as a chain stage graph (issue 6; chain_graph.hpp): the pipeline's stages, the same stage
// functions (ferret_stages.cpp), run by the graph policies.
#include <pipescope/workloads/ferret.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace pipescope::workloads::ferret {

namespace {

// The queue elements: a query number, an index into the run's query_work array. (An image or a
// signature holds vectors, which a queue of raw bytes cannot carry.)
using query_ref = std::uint32_t;

const database& need(const database* db) {
    if (!db || !db->index) throw std::logic_error("ferret: the chain graph was built without a database to run on");
    return *db;
}

}   // namespace

search_chain::search_chain(const database* db, program_form form, const chain_shape& shape) : db_(db) {
    const graph::queue_shape q = chain_queue(shape);
    std::vector<graph::queue_id> queues;
    const char* const names_six[] = {"images", "segmented", "signatures", "candidates", "ranked"};
    const char* const names_sps[] = {"images", "ranked"};
    if (form == program_form::six_stage)
        for (const char* name : names_six) queues.push_back(g_.add_queue<query_ref>(name, q));
    else
        for (const char* name : names_sps) queues.push_back(g_.add_queue<query_ref>(name, q));

    // Stage 0 · load (serial source): generates the query images in order, one element per query.
    g_.add_serial("load", {}, {queues.front()}, [this](graph::thread_context& ctx) -> graph::stage_task {
        const database& d = need(db_);
        if (work_.size() != d.corpus.queries) throw std::logic_error("ferret chain graph: run without reset()");
        for (unsigned i = 0; i < d.corpus.queries; ++i) {
            load_query(d, i, work_[i]);
            co_await ctx.push(0, static_cast<query_ref>(i));
        }
    });

    // The parallel stages: each instance runs its stage on the queries of its input packet and
    // passes them on in the same order.
    if (form == program_form::six_stage) {
        g_.add_parallel("segment", queues[0], {{queues[1], 1}}, each_query(segment_query));
        g_.add_parallel("extract", queues[1], {{queues[2], 1}},
                        each_query([](const database&, query_work& w) { extract_query(w); }));
        g_.add_parallel("query", queues[2], {{queues[3], 1}}, each_query(query_index));
        g_.add_parallel("rank", queues[3], {{queues[4], 1}}, each_query(rank_query));
    } else {
        g_.add_parallel("search", queues[0], {{queues[1], 1}}, each_query(search_query));
    }

    // The last stage · output (serial): appends the top-k lists in query order. The ordered queues
    // guarantee it; the check makes a broken guarantee an error instead of a wrong answer.
    g_.add_serial("output", {queues.back()}, {}, [this](graph::thread_context& ctx) -> graph::stage_task {
        for (;;) {
            graph::pop_window w = co_await ctx.pop(0);
            if (!w) break;
            for (std::size_t i = 0; i < w.size(); ++i) {
                const query_ref qi = w.at<query_ref>(i);
                if (qi != results_.size())
                    throw std::logic_error("ferret chain graph: query " + std::to_string(qi) +
                                           " reached the output stage after " + std::to_string(results_.size()) +
                                           " queries (out of order)");
                output_query(work_[qi], results_);
            }
            ctx.commit(w);
        }
    });
    g_.validate();
}

graph::parallel_body search_chain::each_query(void (*step)(const database&, query_work&)) {
    return [this, step](graph::instance_context& ctx) {
        const database& d = need(db_);
        for (std::size_t i = 0; i < ctx.size(); ++i) {
            const query_ref qi = ctx.in<query_ref>(i);
            step(d, work_[qi]);
            ctx.push(0, qi);
        }
    };
}

void search_chain::reset() {
    const database& d = need(db_);
    work_.assign(d.corpus.queries, query_work{});
    results_.clear();
    results_.reserve(d.corpus.queries);
}

std::vector<top_list> search_graph(scheduler& s, const database& db, program_form form, const chain_shape& shape,
                                   const graph::run_options& options, graph::run_stats* stats) {
    search_chain chain(&db, form, shape);
    chain.reset();
    const graph::run_stats st = graph::run(s, chain.program(), options);
    if (stats) *stats = st;
    return chain.results();
}

}   // namespace pipescope::workloads::ferret
