// ferret's rank stage and the database build (the set-up before the measured run).
#include <pipescope/workloads/ferret.hpp>
#include <pipescope/task_group.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipescope::workloads::ferret {

namespace {

void check(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("ferret: ") + what);
}

}   // namespace

top_list rank(const lsh_index& index, const signature& query, const std::vector<unsigned>& candidates, unsigned top) {
    top_list all;
    all.reserve(candidates.size());
    for (unsigned id : candidates) all.push_back({id, signature_distance(query, index.database_signature(id))});
    const std::size_t n = std::min<std::size_t>(top, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                      [](const match& a, const match& b) {
                          return a.distance != b.distance ? a.distance < b.distance : a.image < b.image;
                      });
    all.resize(n);
    return all;
}

database build_database(scheduler& s, const corpus_config& corpus, const search_config& search, const index_config& index) {
    check(corpus.side >= 1, "images need at least one pixel");
    check(corpus.database_images >= 1, "the database needs at least one image");
    check(search.regions >= 1 && search.regions <= 32, "regions must be between 1 and 32");
    check(search.candidates >= 1, "candidates must be at least 1");
    check(search.top >= 1, "top must be at least 1");

    // Each image's signature is independent of the others: fork-join over blocks of images.
    std::vector<signature> signatures(corpus.database_images);
    constexpr unsigned block = 16;
    task_group g(s);
    for (unsigned lo = 0; lo < corpus.database_images; lo += block) {
        g.spawn([&, lo] {
            const unsigned hi = std::min(lo + block, corpus.database_images);
            for (unsigned id = lo; id < hi; ++id) {
                const image img = database_image(corpus, id);
                signatures[id] = extract_features(img, segment(img, search.regions));
            }
        });
    }
    g.sync();

    database db{corpus, search, nullptr};
    db.index = std::make_unique<lsh_index>(std::move(signatures), index, corpus.seed);
    return db;
}

unsigned queries_finding_source(const database& db, const std::vector<top_list>& results) {
    unsigned found = 0;
    for (unsigned q = 0; q < results.size(); ++q) {
        const unsigned source = query_source(db.corpus, q);
        found += std::any_of(results[q].begin(), results[q].end(), [&](const match& m) { return m.image == source; });
    }
    return found;
}

}   // namespace pipescope::workloads::ferret
