// ferret's two programs: the serial loop (T_S) and the pipe_while pipeline in either form.
#include <pipescope/workloads/ferret.hpp>
#include <pipescope/workloads/workload.hpp>

#include <stdexcept>

namespace pipescope::workloads::ferret {

namespace {

void check_database(const database& db) {
    if (!db.index) throw std::invalid_argument("ferret: the database has no index (use build_database)");
}

}   // namespace

std::vector<top_list> search_serial(const database& db, std::stop_token cancel) {
    check_database(db);
    std::vector<top_list> results;
    results.reserve(db.corpus.queries);
    for (unsigned q = 0; q < db.corpus.queries; ++q) {
        throw_if_cancelled(cancel);
        const image img = query_image(db.corpus, q);
        const signature sig = extract_features(img, segment(img, db.search.regions));
        results.push_back(rank(*db.index, sig, db.index->candidates(sig, db.search.candidates), db.search.top));
    }
    return results;
}

std::vector<top_list> search_pipeline(scheduler& s, const database& db, program_form form, const pipeline_options& options,
                                      pipeline_stats* stats) {
    check_database(db);
    std::vector<top_list> results;
    results.reserve(db.corpus.queries);
    unsigned next = 0;
    const auto more = [&] { return next < db.corpus.queries; };
    pipeline_stats st;
    // The structure is static, so construct-and-run policies can run it too: declare it.
    pipeline_options declared = options;
    using enum stage_kind;
    declared.declared_stages =
        form == program_form::six_stage
            ? std::vector<stage_kind>{serial_in_order, parallel, parallel, parallel, parallel, serial_in_order}
            : std::vector<stage_kind>{serial_in_order, parallel, serial_in_order};

    if (form == program_form::six_stage) {
        // PARSEC's six stages (seed 000 §2.1, Figure 1): serial input, four parallel stages, serial output.
        st = pipe_while(
            s, more,
            [&](iteration& it) -> pipe_task {
                query_work w;
                load_query(db, next++, w);   // stage 0 · load
                co_await it.stage(1);
                segment_query(db, w);   // stage 1 · segment
                co_await it.stage(2);
                extract_query(w);   // stage 2 · extract
                co_await it.stage(3);
                query_index(db, w);   // stage 3 · query
                co_await it.stage(4);
                rank_query(db, w);   // stage 4 · rank
                co_await it.stage_wait(5);
                output_query(w, results);   // stage 5 · output, after query q-1's
            },
            declared);
    } else {
        // The collapsed SPS form (seed 000 §3.1, seed 001 §1 Figure 1): the four parallel stages
        // become one, so an item never waits between them.
        st = pipe_while(
            s, more,
            [&](iteration& it) -> pipe_task {
                query_work w;
                load_query(db, next++, w);   // stage 0 · load
                co_await it.stage(1);
                search_query(db, w);   // stage 1 · segment, extract, query, rank
                co_await it.stage_wait(2);
                output_query(w, results);   // stage 2 · output
            },
            declared);
    }
    if (stats) *stats = st;
    return results;
}

}   // namespace pipescope::workloads::ferret
