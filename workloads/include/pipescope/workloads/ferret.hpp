// ferret: content-based image similarity search as a pipeline (seed 000 §2.1, seed 001 §1 and §10).
//
// PARSEC's ferret reads query images and, for each one, segments it into regions, extracts a
// feature vector per region, asks a locality-sensitive-hashing index for candidate database images
// and ranks the candidates by an earth mover's distance between region sets, then writes the top-k
// names. Here the images come from a seeded generator (random shapes, gradients and textures), and
// each query is a perturbed copy of a known database image, so the right answer is known.
//
// Two program forms (seed 000 §3.1), each as a pipe_while loop or as a chain stage graph (issue 6):
//   six_stage  load | segment | extract | query | rank | output   (PARSEC's pthreads pipeline)
//   sps        load | segment+extract+query+rank | output          (the collapsed serial-parallel-serial
//                                                                  form that Cilk-P and TBB run)
// Load and output are serial; output appends query i's top-k list after query i-1's.
#pragma once

#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>
#include <pipescope/workloads/chain_graph.hpp>

#include <array>
#include <cstdint>
#include <stop_token>
#include <memory>
#include <unordered_map>
#include <vector>

namespace pipescope::workloads::ferret {

// ---- deterministic random numbers --------------------------------------------------------------

// splitmix64 streams, keyed by (seed, stream, index): the same numbers on every platform and in
// every order of generation (unlike <random>'s distributions, whose output is implementation-defined).
class random_stream {
public:
    random_stream(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) noexcept;
    std::uint64_t next() noexcept;
    unsigned below(unsigned n) noexcept;          // uniform in [0, n), n >= 1
    float unit() noexcept;                        // uniform in [0, 1)
    float between(float lo, float hi) noexcept;   // uniform in [lo, hi)

private:
    std::uint64_t state_;
};

// ---- the synthetic corpus ----------------------------------------------------------------------

struct image {
    unsigned width = 0;
    unsigned height = 0;
    std::vector<std::uint8_t> rgb;   // row-major, 3 bytes per pixel
    bool operator==(const image&) const = default;
};

struct corpus_config {
    unsigned side = 48;   // images are side × side pixels
    unsigned database_images = 200;
    unsigned queries = 50;
    std::uint64_t seed = 1;
};

// Database image `id`: a gradient background under 3–6 textured rectangles and ellipses.
image database_image(const corpus_config& c, unsigned id);
// The database image query q was made from (the answer the search should find).
unsigned query_source(const corpus_config& c, unsigned q);
// Query q: its source image shifted by up to 2 pixels, brightened or darkened, plus pixel noise.
image query_image(const corpus_config& c, unsigned q);

// ---- segmentation and features -----------------------------------------------------------------

// A label per pixel, 0 .. regions-1, every label used.
struct segmentation {
    unsigned regions = 0;
    std::vector<std::uint8_t> label;
};

// k-means over (colour, position) of the 3×3-smoothed pixels, from a fixed grid of starting
// centres, at most `max_regions` (1..32) regions.
segmentation segment(const image& img, unsigned max_regions);

// Region features, scaled so that the Euclidean distance between two vectors is the ground
// distance of the ranking: mean colour (3), centroid (2), texture = mean luminance gradient (1).
constexpr std::size_t feature_dims = 6;
struct region {
    float weight = 0;   // fraction of the image's pixels
    std::array<float, feature_dims> features{};
    bool operator==(const region&) const = default;
};
using signature = std::vector<region>;   // weights sum to 1

signature extract_features(const image& img, const segmentation& seg);
float ground_distance(const region& a, const region& b);
// An earth-mover-like distance between region sets: the cheapest pairs are matched first and carry
// as much weight as both still have (a greedy transport plan, an upper bound on the exact EMD).
float signature_distance(const signature& a, const signature& b);

// ---- the index ---------------------------------------------------------------------------------

struct index_config {
    unsigned tables = 8;          // L: independent hash tables
    unsigned hashes = 3;          // M: projections concatenated into one table's key
    float bucket_width = 0.35f;   // w of the p-stable hash floor((a·v + b) / w)
};

// Locality-sensitive hashing over region feature vectors (p-stable projections, as E2LSH): every
// database region goes into one bucket per table. A query region votes, with its weight, for the
// images that share a bucket with it; the most-voted images are the candidates.
class lsh_index {
public:
    lsh_index(std::vector<signature> database, const index_config& config, std::uint64_t seed);

    // Up to `how_many` image ids, most votes first (ties: lower id first).
    std::vector<unsigned> candidates(const signature& query, unsigned how_many) const;
    const signature& database_signature(unsigned id) const { return database_[id]; }
    std::size_t size() const noexcept { return database_.size(); }

private:
    std::uint64_t bucket_key(unsigned table, const region& r) const;

    index_config config_;
    std::vector<signature> database_;
    std::vector<float> projections_;   // tables × hashes × (feature_dims + 1 offset)
    std::vector<std::unordered_map<std::uint64_t, std::vector<std::uint32_t>>> buckets_;   // per table
};

// ---- search ------------------------------------------------------------------------------------

struct match {
    unsigned image = 0;
    float distance = 0;
    bool operator==(const match&) const = default;
};
using top_list = std::vector<match>;   // closest first (ties: lower id first)

struct search_config {
    unsigned regions = 8;       // k of the k-means segmentation
    unsigned candidates = 32;   // images the index hands to the ranking
    unsigned top = 10;          // k of the top-k answer
};

// Exact distances to the candidates, the `top` closest.
top_list rank(const lsh_index& index, const signature& query, const std::vector<unsigned>& candidates, unsigned top);

// Everything built once before the measured run: the database images' signatures and the index.
struct database {
    corpus_config corpus;
    search_config search;
    std::unique_ptr<lsh_index> index;
};

// Segments every database image (in parallel, fork-join) and builds the index. Throws
// std::invalid_argument on an empty corpus or a zero in the search configuration.
database build_database(scheduler& s, const corpus_config& corpus, const search_config& search,
                        const index_config& index = {});

enum class program_form { six_stage, sps };

// ---- one query's trip through the stages --------------------------------------------------------
// Both program forms, the pipe_while loop and the chain graph, run these same stage functions; the
// form only decides where an item's state lives (the iteration's frame, or a per-run array the
// graph's queue elements index) and who runs the stages.

struct query_work {
    unsigned query = 0;
    image img;
    segmentation seg;
    signature sig;
    std::vector<unsigned> candidates;
    top_list top;
};

void load_query(const database& db, unsigned q, query_work& w);     // load: generate query image q
void segment_query(const database& db, query_work& w);              // segment: k-means regions
void extract_query(query_work& w);                                  // extract: features (frees the pixels)
void query_index(const database& db, query_work& w);                // query: LSH candidates
void rank_query(const database& db, query_work& w);                 // rank: top-k (frees the features)
void search_query(const database& db, query_work& w);               // the SPS form's middle stage: all four
void output_query(query_work& w, std::vector<top_list>& results);   // output: append, in query order

// The serial program (T_S): one query after the other, no runtime.
std::vector<top_list> search_serial(const database& db, std::stop_token cancel = {});   // cancel: per query

// The pipeline in the chosen form; `options.policy` selects the scheduling policy.
std::vector<top_list> search_pipeline(scheduler& s, const database& db, program_form form, const pipeline_options& options,
                                      pipeline_stats* stats = nullptr);

// The chain graph form (issue 6; chain_graph.hpp): load (serial source) | segment | extract | query |
// rank (parallel) | output (serial), or load | search | output for the SPS form. Queue elements are
// query numbers (std::uint32_t) indexing a per-run array of query_work, sized once per run so it
// never moves while stages run; every queue is ordered so the output stage appends in query order.
class search_chain {
public:
    // `db` may be null to describe the structure only; run the program only with a database.
    search_chain(const database* db, program_form form, const chain_shape& shape);
    search_chain(const search_chain&) = delete;   // the stage bodies point at this object
    search_chain& operator=(const search_chain&) = delete;

    const graph::program& program() const noexcept { return g_; }
    void reset();   // fresh per-run state: call before every run of program()
    const std::vector<top_list>& results() const noexcept { return results_; }

private:
    graph::parallel_body each_query(void (*step)(const database&, query_work&));

    const database* db_;
    graph::program g_;
    std::vector<query_work> work_;   // by query number: the queue elements index it
    std::vector<top_list> results_;
};

// Runs the chain graph under `options.policy` and returns the top-k lists in query order.
std::vector<top_list> search_graph(scheduler& s, const database& db, program_form form, const chain_shape& shape,
                                   const graph::run_options& options, graph::run_stats* stats = nullptr);

// How many queries have their source image in their top-k list.
unsigned queries_finding_source(const database& db, const std::vector<top_list>& results);

}   // namespace pipescope::workloads::ferret
