// The search's marks in the tracks (viewer/model/search_marks.hpp), what Copy puts on the clipboard
// (model/copy_text.hpp) and saving a new file without replacing one (model/new_file.hpp).
#include <catch2/catch.hpp>

#include "support.hpp"

#include <model/copy_text.hpp>
#include <model/new_file.hpp>
#include <model/search.hpp>
#include <model/search_marks.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <unistd.h>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

namespace {

const fs::path k2 = fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace";

// Every match of row `row` visible with p is in exactly one mark: its own (at least min_px wide) or
// the column mark over its pixel; and every column mark holds a match.
void check_row_marks(const row_view& row, const std::vector<std::uint32_t>& marks, const lod_params& p) {
    std::vector<mark_span> out;
    row_marks(row, marks, p, out);
    std::set<std::uint32_t> own;
    std::set<long> columns;   // pixel columns of narrow matches, by brute force
    for (std::uint32_t pos : marks) {
        const double x0 = (static_cast<double>(row[pos].begin) - p.t_left) / p.npp;
        const double x1 = (static_cast<double>(row[pos].end) - p.t_left) / p.npp;
        if (x1 < 0 || x0 >= p.width) continue;
        if (x1 - x0 >= p.min_px) own.insert(pos);
        else columns.insert(static_cast<long>(std::floor(x0)));
    }
    std::set<std::uint32_t> own_drawn;
    std::set<long> columns_drawn;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (i) CHECK(out[i].x0 >= out[i - 1].x0);
        if (!out[i].column) {
            CHECK(own_drawn.insert(out[i].pos).second);
            continue;
        }
        for (double c = out[i].x0; c < out[i].x1; ++c) columns_drawn.insert(static_cast<long>(c));
    }
    CHECK(own_drawn == own);
    // A column run may pass over the pixels of wide matches between its narrow ones only if adjacent.
    for (long c : columns) CHECK(columns_drawn.count(c) == 1);
    for (long c : columns_drawn) CHECK(columns.count(c) == 1);
}

}   // namespace

TEST_CASE("search marks: every match of 'stage 1' on the K = 2 example, by row", "[search][marks]") {
    document d;
    d.add(load_file(k2));
    const auto matches = find_matches(d, parse_query("stage 1"), false);
    REQUIRE(matches.size() == 6031);
    search_marks marks;
    marks.build(d, matches);
    CHECK(marks.count() == matches.size());
    std::size_t found = 0;
    const loaded_file& f = *d.files[0];
    for (const search_match& m : matches) {
        if (m.ev.is_instant) {
            const auto* v = marks.instants(0, m.ev.track);
            REQUIRE(v);
            found += std::binary_search(v->begin(), v->end(), m.ev.index);
            continue;
        }
        const std::uint16_t depth = f.model.tracks[m.ev.track].slices[m.ev.index].depth;
        const auto* v = marks.row(0, m.ev.track, depth);
        REQUIRE(v);
        const row_view row = f.row(m.ev.track, depth);
        const auto pos = row_position(row, m.ev.index);
        REQUIRE(pos < row.size);
        CHECK(row.slice_index(pos) == m.ev.index);
        found += std::binary_search(v->begin(), v->end(), static_cast<std::uint32_t>(pos));
    }
    CHECK(found == matches.size());
    // Drawn at several zooms: the whole run on 1000 px (columns), 20 us (slices), 2 us.
    const run_ref& r = d.runs[0];
    for (double span : {static_cast<double>(r.end - r.start), 20000.0, 2000.0}) {
        lod_params p;
        p.t_left = static_cast<double>(r.start) + 590000;
        if (span > 1e6) p.t_left = static_cast<double>(r.start);
        p.width = 1000;
        p.npp = span / p.width;
        for (std::uint32_t ti = 0; ti < f.model.tracks.size(); ++ti)
            for (std::uint16_t dp = 0; dp <= f.model.tracks[ti].max_depth; ++dp)
                if (const auto* v = marks.row(0, ti, dp)) check_row_marks(f.row(ti, dp), *v, p);
    }
    CHECK(marks.row(0, 0, 200) == nullptr);
    CHECK(marks.row(5, 0, 0) == nullptr);
}

TEST_CASE("search marks: random rows, random matches, random views", "[search][marks]") {
    std::mt19937_64 rng(37);
    for (int round = 0; round < 20; ++round) {
        auto file = viewer_test::make_file(viewer_test::random_slices(rng, 3000, 4));
        const row_view row = file->row(0, 0);
        std::vector<std::uint32_t> marks;
        for (std::uint32_t k = 0; k < row.size; ++k)
            if (rng() % 5 == 0) marks.push_back(k);
        lod_params p;
        const double t0 = static_cast<double>(row[0].begin), t1 = static_cast<double>(row[row.size - 1].end);
        p.width = 800;
        p.npp = (t1 - t0) / p.width / static_cast<double>(1 + rng() % 50);
        p.t_left = t0 + static_cast<double>(rng() % 1000) / 1000 * (t1 - t0 - p.npp * p.width);
        check_row_marks(row, marks, p);
    }
}

TEST_CASE("copy: TSV cells keep to one line and one cell", "[copy]") {
    CHECK(to_tsv({{"a", "b\tc"}, {"d\ne", ""}}) == "a\tb c\nd e\t\n");
    document d;
    d.add(load_file(k2));
    const auto matches = find_matches(d, parse_query("iteration 5 stage 1"), false);
    REQUIRE(matches.size() == 1);
    const std::string text = event_details_text(d, {matches[0].file, matches[0].ev}, false);
    CHECK(text.rfind("name\tstage 1\nkind\tslice, depth 0\n", 0) == 0);
    CHECK(text.find("\nduration (ns)\t240\ntrack\tworker 1\n") != std::string::npos);
    CHECK(text.find("\niteration\t5\nstage\t1\n") != std::string::npos);
    CHECK(event_details_text(d, {}, false).empty());
}

TEST_CASE("new file: a fresh name, never over an existing file, nothing left behind", "[copy][screenshot]") {
    const fs::path dir = fs::temp_directory_path() / ("pipescope-new-file-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::time_t when = 1764690000;
    const std::string first = screenshot_file_name(when, 1);
    CHECK(first.rfind("pipescope-", 0) == 0);
    CHECK(first.size() == std::string("pipescope-YYYYMMDD-HHMMSS.png").size());
    CHECK(screenshot_file_name(when, 3) == first.substr(0, first.size() - 4) + "-3.png");
    std::ofstream(dir / first) << "old";
    auto write = [](const std::string& text) {
        return [text](const std::string& p) { return static_cast<bool>(std::ofstream(p) << text); };
    };
    const fs::path second = save_new_file(dir, when, write("new"));
    CHECK(second == dir / screenshot_file_name(when, 2));
    auto content = [](const fs::path& p) {
        std::ifstream in(p);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    CHECK(content(dir / first) == "old");
    CHECK(content(second) == "new");
    CHECK(save_new_file(dir, when, write("third")) == dir / screenshot_file_name(when, 3));
    CHECK_THROWS_WITH(save_new_file(dir, when, [](const std::string&) { return false; }), Catch::Contains("cannot write"));
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".png";
    CHECK(files == 3);
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 3);   // no temporary file
    fs::remove_all(dir);
}
