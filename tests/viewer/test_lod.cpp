#include "support.hpp"

#include <catch2/catch.hpp>
#include <model/lod.hpp>

#include <chrono>
#include <cmath>
#include <map>

using namespace pipescope::viewer;
using viewer_test::make_file;
using viewer_test::spec;

namespace {

bool covers(double x0, double x1, long c) {
    if (x1 > x0) return c < x1 && c + 1 > x0;
    return std::floor(x0) == static_cast<double>(c);
}

double weight(const tm::slice& s) { return static_cast<double>(s.end - s.begin) + 1.0; }

// What every frame's blocks must satisfy, whatever the level of detail did: per pixel column the
// blocks cover exactly what the slices cover; every visible slice is in exactly one block; slices at
// least a pixel wide are blocks of their own; blocks are ordered and bounded in number; merged
// blocks of up to 64 slices are coloured by their exact dominant key.
void check_lod_invariants(const std::vector<spec>& specs, const loaded_file& f, const row_view& row, const lod_params& p,
                          const std::vector<lod_block>& blocks) {
    for (long c = 0; c < static_cast<long>(p.width); ++c) {
        bool by_slices = false, by_blocks = false;
        for (const auto& s : specs) {
            if (covers((static_cast<double>(s.b) - p.t_left) / p.npp, (static_cast<double>(s.e) - p.t_left) / p.npp, c)) {
                by_slices = true;
                break;
            }
        }
        for (const auto& b : blocks)
            if (covers(b.x0, b.x1, c)) {
                by_blocks = true;
                break;
            }
        REQUIRE(by_slices == by_blocks);
    }
    std::size_t visible = 0, counted = 0;
    for (std::size_t i = 0; i < row.size; ++i)
        if (static_cast<double>(row[i].end) >= p.t_left && static_cast<double>(row[i].begin) < p.t_left + p.width * p.npp)
            ++visible;
    for (const auto& b : blocks) counted += b.count;
    CHECK(counted == visible);
    for (std::size_t i = 0; i < row.size; ++i) {
        const tm::slice& s = row[i];
        const double w = static_cast<double>(s.end - s.begin) / p.npp;
        if (w < 1 || static_cast<double>(s.end) < p.t_left || static_cast<double>(s.begin) >= p.t_left + p.width * p.npp)
            continue;
        bool found = false;
        for (const auto& b : blocks)
            if (!b.merged() && b.first == i && b.count == 1) found = true;
        REQUIRE(found);
    }
    CHECK(blocks.size() <= static_cast<std::size_t>(p.width) * 2 + 4);
    for (std::size_t k = 1; k < blocks.size(); ++k) CHECK(blocks[k].x0 >= blocks[k - 1].x0);
    for (const auto& b : blocks) {
        if (!b.merged() || b.count > 64) continue;
        std::map<colour_key, double> w;
        for (std::uint32_t q = b.first; q < b.first + b.count; ++q) w[f.key(row[q])] += weight(row[q]);
        for (const auto& [k, v] : w) CHECK(w[b.key] >= v);
    }
}

}   // namespace

TEST_CASE("lod: merged blocks cover exactly the union of the slices, per pixel column", "[viewer][lod]") {
    std::mt19937_64 rng(42);
    for (int round = 0; round < 60; ++round) {
        const auto specs = viewer_test::random_slices(rng, 3000, 5);
        const auto f = make_file(specs);
        const row_view row = f->row(0, 0);
        REQUIRE(row.summary == nullptr);   // short rows: the slices themselves
        const double span = static_cast<double>(specs.back().e - specs.front().b);
        lod_params p;
        p.width = 400;
        p.npp = std::max(1.0, std::floor(span / p.width * std::pow(2.0, -(round % 12))));
        p.t_left = static_cast<double>(specs.front().b) +
                   std::floor(static_cast<double>(rng() % static_cast<std::uint64_t>(span)) * 0.5);
        std::vector<lod_block> blocks;
        lod_merge(row, f->key_of_string.data(), p, blocks);
        INFO("round " << round << " npp " << p.npp << " t_left " << p.t_left);
        check_lod_invariants(specs, *f, row, p, blocks);
    }
}

TEST_CASE("lod: long rows merged from their summary keep every invariant", "[viewer][lod]") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 12; ++round) {
        const auto specs = viewer_test::random_slices(rng, 40000, 5);
        const auto f = make_file(specs);
        const row_view row = f->row(0, 0);
        REQUIRE(row.summary != nullptr);   // 40000 >= loaded_file::summary_min_slices
        const double span = static_cast<double>(specs.back().e - specs.front().b);
        lod_params p;
        p.width = 400;
        p.npp = std::max(1.0, std::floor(span / p.width * std::pow(2.0, -(round % 6))));
        p.t_left = static_cast<double>(specs.front().b) +
                   std::floor(static_cast<double>(rng() % static_cast<std::uint64_t>(span)) * 0.3);
        std::vector<lod_block> blocks;
        lod_merge(row, f->key_of_string.data(), p, blocks);
        INFO("round " << round << " npp " << p.npp << " t_left " << p.t_left);
        check_lod_invariants(specs, *f, row, p, blocks);
    }
}

TEST_CASE("lod: a summary's groups carry the dominant key of what they cover", "[viewer][lod]") {
    // 8192 slices in runs of 4: three 10 ns slices of stage 1, then one 50 ns slice of stage 2.
    // Stage 2 dominates every group of 16 (4 x 50 vs 12 x 10) and every coarser group.
    std::vector<spec> specs;
    std::uint64_t t = 0;
    for (int k = 0; k < 8192; ++k) {
        const bool big = k % 4 == 3;
        specs.push_back({t, t + (big ? 50u : 10u), big ? 2 : 1});
        t += big ? 50 : 10;
    }
    const auto f = make_file(specs);
    const row_view row = f->row(0, 0);
    REQUIRE(row.summary != nullptr);
    const row_summary& sum = *row.summary;
    REQUIRE(sum.levels.size() == 4);   // 512, 32, 2, 1 groups
    CHECK(sum.levels[0].size() == 512);
    CHECK(sum.levels[3].size() == 1);
    for (const auto& level : sum.levels)
        for (const auto& e : level) CHECK(e.key == f->key_of_string[3 + 2]);
    CHECK(sum.levels[0][0].weight == Approx(4 * 51.0));   // +1 ns per slice
    CHECK(sum.group_begin[1] == specs[16].b);
    CHECK(sum.group_end[0] == specs[15].e);
    // Zoomed out (every column holds ~40 groups): one merged block in stage 2's colour.
    lod_params p;
    p.width = 10;
    p.npp = static_cast<double>(t) / 10;
    std::vector<lod_block> blocks;
    lod_merge(row, f->key_of_string.data(), p, blocks);
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0].key == f->key_of_string[3 + 2]);
    CHECK(blocks[0].count == 8192);
}

TEST_CASE("lod: the colour of a merged column is its dominant stage", "[viewer][lod]") {
    // Column 0 = [0, 1000): stage 1 has 2 x 100 ns, stage 2 one 300 ns slice -> stage 2.
    // Column 1 = [1000, 2000): five short stage-3 slices and one 200 ns idle -> stage 3 (5 x 50 > 200+1).
    const auto f = make_file({{0, 100, 1},
                              {150, 450, 2},
                              {500, 600, 1},
                              {1000, 1050, 3},
                              {1100, 1150, 3},
                              {1200, 1250, 3},
                              {1300, 1350, 3},
                              {1400, 1450, 3},
                              {1500, 1700, -1}});
    lod_params p;
    p.t_left = 0;
    p.npp = 1000;
    p.width = 10;
    std::vector<lod_block> blocks;
    lod_merge(f->row(0, 0), f->key_of_string.data(), p, blocks);
    REQUIRE(blocks.size() == 2);
    CHECK(blocks[0].key == 2);
    CHECK(blocks[0].count == 3);
    CHECK(blocks[0].x0 == 0);
    CHECK(blocks[0].x1 == 1);
    CHECK(blocks[1].key == 3);
    CHECK(blocks[1].count == 6);
    // Zoomed in, every slice is its own block with its own colour.
    p.npp = 1;
    p.width = 2000;
    lod_merge(f->row(0, 0), f->key_of_string.data(), p, blocks);
    REQUIRE(blocks.size() == 9);
    CHECK(blocks[8].key == key_idle);
    CHECK(blocks[1].x0 == 150);
    CHECK(blocks[1].x1 == 450);
}

TEST_CASE("lod: adjacent merged columns of one colour coalesce, a wide slice breaks them", "[viewer][lod]") {
    std::vector<spec> v;
    for (std::uint64_t t = 0; t < 100000; t += 10) v.push_back({t, t + 5, 0});   // 10000 tiny stage-0 slices
    v.push_back({100000, 150000, 1});                                            // 50 px wide stage 1
    for (std::uint64_t t = 150000; t < 200000; t += 10) v.push_back({t, t + 5, 0});
    const auto f = make_file(v);
    lod_params p;
    p.t_left = 0;
    p.npp = 1000;
    p.width = 200;
    std::vector<lod_block> blocks;
    lod_merge(f->row(0, 0), f->key_of_string.data(), p, blocks);
    REQUIRE(blocks.size() == 3);
    CHECK(blocks[0].merged());
    CHECK(blocks[0].x0 == 0);
    CHECK(blocks[0].x1 == Approx(100));
    CHECK(blocks[1].count == 1);
    CHECK(blocks[1].key == 1);
    CHECK(blocks[2].merged());
    CHECK(blocks[0].count + blocks[1].count + blocks[2].count == v.size());
}

TEST_CASE("lod: cost is bounded by the pixels, not the slices", "[viewer][lod]") {
    std::vector<spec> v;
    v.reserve(2000000);
    for (std::uint64_t i = 0; i < 2000000; ++i) v.push_back({i * 10, i * 10 + 7, static_cast<int>(i % 3)});
    const auto f = make_file(v);
    lod_params p;
    p.t_left = 0;
    p.npp = 20000000.0 / 1000;
    p.width = 1000;
    std::vector<lod_block> blocks;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) lod_merge(f->row(0, 0), f->key_of_string.data(), p, blocks);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 20;
    CHECK(blocks.size() <= 1001);
    std::size_t total = 0;
    for (const auto& b : blocks) total += b.count;
    CHECK(total == v.size());
    WARN("lod_merge of 2M slices into 1000 px: " << ms << " ms");
    CHECK(ms < 20);   // a scan of 2M slices would take longer than this with the dominant-colour work
}

TEST_CASE("instant buckets: every visible instant in exactly one bucket, on a fixed grid", "[viewer][lod][instants]") {
    std::mt19937_64 rng(7);
    std::vector<tm::instant> v;
    std::uint64_t t = 0;
    for (int k = 0; k < 20000; ++k) {
        t += rng() % 3 == 0 ? rng() % 5000 : rng() % 20;   // bursts and gaps
        tm::instant i;
        i.ts = t;
        i.name = static_cast<tm::string_id>(rng() % 3);
        v.push_back(i);
    }
    const instant_kind kinds[] = {instant_kind::steal, instant_kind::wake, instant_kind::steal};
    std::vector<instant_bucket> out;
    for (double npp : {0.5, 10.0, 300.0, 1e5}) {
        lod_params p;
        p.npp = npp;
        p.width = 900;
        p.t_left = static_cast<double>(t) * 0.25;
        instant_buckets(v, kinds, p, 3, out);
        const double tr = p.t_left + p.width * npp;
        std::size_t visible = 0;
        for (const auto& i : v) visible += static_cast<double>(i.ts) >= p.t_left && static_cast<double>(i.ts) < tr;
        std::size_t counted = 0;
        double prev_x1 = -1;
        std::uint32_t next = out.empty() ? 0 : out.front().first;
        for (const auto& b : out) {
            CHECK(b.count >= 1);
            CHECK(b.first == next);   // consecutive: no instant skipped or counted twice
            next = b.first + b.count;
            CHECK(b.x0 >= prev_x1);
            CHECK(b.x1 > b.x0);
            CHECK(b.x1 - b.x0 <= 3 + 1e-9);
            CHECK(b.x0 >= 0);
            CHECK(b.x1 <= 900);
            const double x = (static_cast<double>(v[b.first].ts) - p.t_left) / npp;
            CHECK(x >= b.x0 - 1e-6);
            CHECK(x < b.x1 + 1e-6);
            prev_x1 = b.x1;
            counted += b.count;
        }
        CHECK(counted == visible);
        if (npp == 1e5) CHECK(out.size() <= 300);   // a bucket per 3 px at most
    }
    // One kind dominates a bucket: its colour.
    std::vector<tm::instant> w(10);
    for (std::size_t k = 0; k < w.size(); ++k) w[k].ts = k, w[k].name = k < 7 ? 1 : 0;
    lod_params p;
    p.npp = 100;
    instant_buckets(w, kinds, p, 3, out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].count == 10);
    CHECK(out[0].kind == instant_kind::wake);
}

TEST_CASE("lost events near a time: markers within the tolerance, their dropped counts summed", "[viewer][lod][lost]") {
    tm::trace_model m;
    m.strings = {"", std::string(vocab::events_lost), std::string(vocab::key(vocab::arg_key::dropped)), "steal"};
    tm::track t;
    t.kind = tm::track_kind::thread;
    t.name = "worker 0";
    auto instant = [](std::uint64_t ts, tm::string_id n) {
        tm::instant i;
        i.ts = ts;
        i.name = n;
        return i;
    };
    // lost @100 (dropped 7), steal @105, lost @110 (dropped 5), lost @500 (no annotation: 1)
    t.instants = {instant(100, 1), instant(105, 3), instant(110, 1), instant(500, 1)};
    t.instants[0].args_first = 0, t.instants[0].args_count = 1;
    t.instants[2].args_first = 1, t.instants[2].args_count = 1;
    m.args = {{2, tm::arg_kind::uint_value, 7}, {2, tm::arg_kind::uint_value, 5}};
    m.tracks.push_back(t);
    const auto f = prepare_file(std::move(m));
    auto near = lost_events_near(*f, 0, 104, 6);
    CHECK(near.markers == 2);
    CHECK(near.dropped == 12);
    CHECK(near.first_ts == 100);
    near = lost_events_near(*f, 0, 499, 2);
    CHECK(near.markers == 1);
    CHECK(near.dropped == 1);
    CHECK(lost_events_near(*f, 0, 300, 50).markers == 0);
    CHECK(lost_events_near(*f, 7, 100, 50).markers == 0);   // no such track
}
