// ferret's stage functions: one query's trip through the pipeline, shared by the pipe_while loop
// (ferret_pipeline.cpp) and the chain graph (ferret_graph.cpp), so both forms compute exactly the
// same thing and differ only in how the stages are scheduled.
#include <pipescope/workloads/ferret.hpp>

namespace pipescope::workloads::ferret {

void load_query(const database& db, unsigned q, query_work& w) {
    w.query = q;
    w.img = query_image(db.corpus, q);
}

void segment_query(const database& db, query_work& w) { w.seg = segment(w.img, db.search.regions); }

void extract_query(query_work& w) {
    w.sig = extract_features(w.img, w.seg);
    // Nothing later needs the pixels: free them now rather than when the item is written, so what
    // is in flight stays small (a chain graph keeps every query's state until the run ends).
    w.img = image();
    w.seg = segmentation();
}

void query_index(const database& db, query_work& w) { w.candidates = db.index->candidates(w.sig, db.search.candidates); }

void rank_query(const database& db, query_work& w) {
    w.top = rank(*db.index, w.sig, w.candidates, db.search.top);
    w.sig = signature();
    w.candidates = std::vector<unsigned>();
}

void search_query(const database& db, query_work& w) {
    segment_query(db, w);
    extract_query(w);
    query_index(db, w);
    rank_query(db, w);
}

void output_query(query_work& w, std::vector<top_list>& results) { results.push_back(std::move(w.top)); }

}   // namespace pipescope::workloads::ferret
