// What the user arranges in the timeline, kept per file (viewer/model/file_state.hpp,
// track_arrangement.hpp, bookmarks.hpp): the state file's round trip, malformed files ignored with a
// warning, the atomic write, which tracks are drawn in which order, and stepping through bookmarks.
#include <catch2/catch.hpp>

#include <model/bookmarks.hpp>
#include <model/file_state.hpp>
#include <model/track_arrangement.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <unistd.h>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

namespace {

const fs::path k2 = fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace";

// A fresh empty directory under the temporary directory.
fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("pipescope-file-state-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

void write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::vector<std::string> names = {"worker 0", "worker 1", "line 0", "control", "live iterations"};
const file_identity id{"/data/x.pftrace", 1234, 1700000000123456789};

file_arrangement sample() {
    file_arrangement a;
    a.pinned = {1, 3};
    a.hidden = {4};
    a.collapsed_runs = {0, 2};
    a.filter = "work «ø»";
    a.bookmarks = {{0, 5000, "first"}, {1, 17, "a \"quoted\"\nnote"}};
    return a;
}

document k2_document() {
    document d;
    d.add(load_file(k2));
    return d;
}

}   // namespace

TEST_CASE("file state: a state round-trips through its JSON", "[viewer][file-state]") {
    const file_arrangement a = sample();
    CHECK(state_from_json(state_to_json(id, a, names), id, names) == a);
    CHECK(state_from_json(state_to_json(id, {}, names), id, names).empty());
    // Tracks whose index now names another track (the file changed under the same identity) are dropped.
    std::vector<std::string> renamed = names;
    renamed[1] = "worker 7";
    const file_arrangement b = state_from_json(state_to_json(id, a, names), id, renamed);
    CHECK(b.pinned == std::vector<std::uint32_t>{3});
    CHECK(b.hidden == a.hidden);
    CHECK(b.bookmarks == a.bookmarks);
    // Fewer tracks: an index past the end is dropped.
    CHECK(state_from_json(state_to_json(id, a, names), id, {"worker 0", "worker 1"}).pinned ==
          std::vector<std::uint32_t>{1});
}

TEST_CASE("file state: malformed state files are refused with the reason", "[viewer][file-state]") {
    const std::string good = state_to_json(id, sample(), names);
    auto fails = [&](const std::string& text) { CHECK_THROWS_AS(state_from_json(text, id, names), std::runtime_error); };
    fails("");
    fails("not json");
    fails(good.substr(0, good.size() / 2));   // cut short
    fails("[1, 2]");
    fails(R"({"format": "pipescope-lesson/1"})");
    fails(R"({"format": "pipescope-file-state/1"})");   // no fields
    std::string wrong_type = good;
    wrong_type.replace(wrong_type.find("\"first\""), 7, "12");   // a note that is a number
    fails(wrong_type);
    CHECK_THROWS_WITH(state_from_json(good, {"/data/y.pftrace", 1234, id.mtime_ns}, names), Catch::Contains("another file"));
    CHECK_THROWS_WITH(state_from_json(good, {id.path, 1235, id.mtime_ns}, names), Catch::Contains("another file"));
    CHECK_THROWS_WITH(state_from_json(good, {id.path, id.size, id.mtime_ns + 1}, names), Catch::Contains("another file"));
}

TEST_CASE("file state: written atomically, a failed write leaves the old state", "[viewer][file-state]") {
    const fs::path dir = fresh_dir("atomic");
    const fs::path p = dir / "sub" / "s.json";
    write_atomically(p, "one");   // creates the directory
    CHECK(read_text(p) == "one");
    write_atomically(p, "two");
    CHECK(read_text(p) == "two");
    auto entries = [&] {
        std::vector<std::string> v;
        for (const auto& e : fs::directory_iterator(dir / "sub")) v.push_back(e.path().filename().string());
        return v;
    };
    CHECK(entries() == std::vector<std::string>{"s.json"});   // no temporary file left
    // The target is a directory: the rename fails, the temporary file is removed, nothing else changes.
    fs::create_directories(dir / "sub" / "d.json" / "x");
    CHECK_THROWS_AS(write_atomically(dir / "sub" / "d.json", "three"), std::runtime_error);
    std::vector<std::string> after = entries();
    std::sort(after.begin(), after.end());
    CHECK(after == std::vector<std::string>{"d.json", "s.json"});
    // A directory that cannot be made (its parent is a file).
    CHECK_THROWS_AS(write_atomically(p / "y.json", "four"), std::runtime_error);
    CHECK(read_text(p) == "two");
    fs::remove_all(dir);
}

TEST_CASE("file state: the store restores a kept file's state and ignores a malformed one", "[viewer][file-state]") {
    const fs::path dir = fresh_dir("store");
    const fs::path trace = dir / "t.pftrace";
    write_text(trace, "0123456789");
    std::string warning;
    {
        file_state_store s(dir / "config");
        CHECK(s.attach(trace, true, names, warning).empty());
        CHECK(warning.empty());
        CHECK(s.attach(trace, false, names, warning).empty());   // a second copy, not kept
        CHECK(s.save_changed({file_arrangement{}, file_arrangement{}}).empty());
        CHECK(s.writes() == 0);   // nothing changed
        CHECK(s.save_changed({sample(), sample()}).empty());
        CHECK(s.writes() == 1);   // the kept file only
        CHECK(s.save_changed({sample(), sample()}).empty());
        CHECK(s.writes() == 1);   // unchanged since
    }
    const auto id_now = identify_file(trace);
    REQUIRE(id_now);
    CHECK(id_now->size == 10);
    const fs::path state = state_path(dir / "config", *id_now);
    CHECK(fs::exists(state));
    {
        file_state_store s(dir / "config");
        CHECK(s.attach(trace, true, names, warning) == sample());
        CHECK(warning.empty());
        CHECK(s.attach(trace, false, names, warning).empty());   // not kept: not read either
    }
    write_text(state, "{\"format\": \"pipescope-file-state/1\", \"tracks\": 3");   // malformed
    {
        file_state_store s(dir / "config");
        CHECK(s.attach(trace, true, names, warning).empty());
        CHECK_THAT(warning, Catch::Contains("t.pftrace: ignored the saved track arrangement"));
        // The next change writes a good state over it.
        CHECK(s.save_changed({sample()}).empty());
        CHECK(state_from_json(read_text(state), *id_now, names) == sample());
    }
    // The trace rewritten (another size): another identity, a fresh state.
    write_text(trace, "0123456789abc");
    {
        file_state_store s(dir / "config");
        CHECK(s.attach(trace, true, names, warning).empty());
        CHECK(warning.empty());
    }
    CHECK(!identify_file(dir / "missing.pftrace"));
    {
        file_state_store none;   // no config dir (no HOME): nothing read or written
        CHECK(none.attach(trace, true, names, warning).empty());
        CHECK(none.save_changed({sample()}).empty());
        CHECK(none.writes() == 0);
    }
    fs::remove_all(dir);
}

TEST_CASE("track arrangement: one run's tracks under pins, hidden tracks, a filter, collapse", "[viewer][file-state]") {
    using g = track_group;
    const std::vector<run_track> tracks = {{0, g::worker}, {1, g::worker}, {4, g::line}, {5, g::line}, {6, g::counter}};
    const std::vector<std::string_view> tn = {"worker 0", "worker 1", "line 0", "control", "live iterations"};
    file_arrangement a;
    run_arrangement r = arrange_run(tracks, tn, a, "", false);
    CHECK(r.shown == tracks);
    CHECK((r.pinned | r.hidden | r.filtered) == 0);
    a.pinned = {1};
    a.hidden = {5, 1};   // hidden wins over pinned
    r = arrange_run(tracks, tn, a, "", false);
    CHECK(r.shown == std::vector<run_track>{{0, g::worker}, {4, g::line}, {6, g::counter}});
    CHECK(r.hidden == 2);
    CHECK(r.pinned == 0);
    a.hidden = {5};
    r = arrange_run(tracks, tn, a, "  LINE  ", false);   // words, case aside
    CHECK(r.shown == std::vector<run_track>{{4, g::line}});
    CHECK(r.pinned == 1);
    CHECK(r.hidden == 1);
    CHECK(r.filtered == 2);                         // worker 0, live iterations
    r = arrange_run(tracks, tn, a, "i 0", false);   // every word: "live iterations" has no 0
    CHECK(r.shown == std::vector<run_track>{{4, g::line}});
    r = arrange_run(tracks, tn, a, "", true);
    CHECK(r.shown.empty());
    CHECK(r.collapsed);
    CHECK(r.pinned == 1);
    CHECK(r.hidden == 1);
    CHECK(track_name_matches("Worker 12", "work 1"));
    CHECK(!track_name_matches("worker 12", "work 3"));
    CHECK(track_name_matches("", ""));
}

TEST_CASE("track arrangement: on the K = 2 example every track is drawn once or accounted for", "[viewer][file-state]") {
    const document d = k2_document();
    REQUIRE(d.runs.size() == 1);
    const std::vector<run_track> all = tracks_of_run(d.runs[0]);
    REQUIRE(all.size() == 6);
    auto name = [&](std::uint32_t t) { return d.files[0]->model.tracks[t].name; };
    std::mt19937_64 rng(37);
    const std::vector<std::string> filters = {"", "worker", "line", "l", "zzz", "LIVE it"};
    for (int round = 0; round < 200; ++round) {
        file_arrangement a;
        for (const run_track& t : all) {
            if (rng() % 3 == 0) a.pinned.push_back(t.track);
            if (rng() % 4 == 0) a.hidden.push_back(t.track);
        }
        std::shuffle(a.pinned.begin(), a.pinned.end(), rng);
        if (rng() % 3 == 0) a.collapsed_runs = {0};
        const std::string& filter = filters[rng() % filters.size()];
        const track_arrangement arr = arrange_tracks(d, {a}, filter);
        // The band: the pins in pin order, minus hidden ones, whatever the filter and collapse.
        std::vector<std::uint32_t> band, want_band;
        for (const pinned_track& p : arr.pinned) band.push_back(p.track.track);
        for (const std::uint32_t t : a.pinned)
            if (!contains(a.hidden, t)) want_band.push_back(t);
        CHECK(band == want_band);
        const run_arrangement& r = arr.runs[0];
        CHECK(r.pinned + r.hidden + r.filtered + (r.collapsed ? 0 : r.shown.size()) <= all.size());
        std::size_t filtered = 0, shown = 0;
        for (const run_track& t : all) {   // each track in exactly one place, in run order
            const bool in_band = contains(band, t.track), hidden = contains(a.hidden, t.track);
            const bool passes = track_name_matches(name(t.track), filter);
            CHECK(in_band + hidden <= 1);
            filtered += !in_band && !hidden && !passes;
            if (!in_band && !hidden && passes && !r.collapsed) {
                REQUIRE(shown < r.shown.size());
                CHECK(r.shown[shown++] == t);
            }
        }
        CHECK(shown == r.shown.size());
        CHECK(r.filtered == filtered);
        CHECK(arr.hidden() == r.hidden);
    }
}

TEST_CASE("bookmarks: added at the selection or the cursor, stepped through in time order", "[viewer][file-state]") {
    const document d = k2_document();
    view_state st;
    st.vp.width = 1000;
    st.vp.frame(0, static_cast<double>(d.end - d.start), 0);
    CHECK(!step_bookmark(d, st, +1));   // none yet
    st.cursor = 3000000;
    REQUIRE(add_bookmark(d, st));
    CHECK(st.arranged.size() == 1);
    CHECK(st.arranged[0].bookmarks[0].ts == d.start + 3000000);
    CHECK(st.bookmark_edit == bookmark_ref{0, 0});
    st.cursor = 1000000;
    add_bookmark(d, st);
    // At the selected slice's start, whatever the cursor.
    const selection s = select_node(d, 5, 1);
    REQUIRE(s.valid());
    st.select(d, s);
    add_bookmark(d, st);
    const double sel_t = selection_range(d, s, false)->first;
    std::vector<placed_bookmark> v = placed_bookmarks(d, st);
    REQUIRE(v.size() == 3);
    CHECK(std::is_sorted(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.t < b.t; }));
    CHECK(std::count_if(v.begin(), v.end(), [&](const placed_bookmark& p) { return p.t == sel_t; }) == 1);
    CHECK(*st.cursor == sel_t);
    // Stepping visits all three in time order from the one just added, and wraps both ways.
    std::vector<double> forward;
    for (int k = 0; k < 3; ++k) {
        step_bookmark(d, st, +1);
        forward.push_back(*st.cursor);
    }
    CHECK(forward.back() == sel_t);
    std::vector<double> sorted = forward;
    std::rotate(sorted.begin(), std::min_element(sorted.begin(), sorted.end()), sorted.end());
    CHECK(std::is_sorted(sorted.begin(), sorted.end()));
    step_bookmark(d, st, -1);
    CHECK(*st.cursor == forward[1]);
    // From a cursor between bookmarks: the next one after it, the previous one before it.
    v = placed_bookmarks(d, st);
    const double mid = 2000000;
    const auto after = std::find_if(v.begin(), v.end(), [&](const placed_bookmark& p) { return p.t > mid; });
    REQUIRE(after != v.end());
    REQUIRE(after != v.begin());
    st.cursor = mid;
    st.bookmark_current.reset();
    step_bookmark(d, st, +1);
    CHECK(*st.cursor == after->t);
    st.cursor = mid;
    step_bookmark(d, st, -1);
    CHECK(*st.cursor == std::prev(after)->t);
    // A bookmark off screen is brought into view at the same zoom.
    const double span = st.vp.t1() - st.vp.t0;
    st.vp.frame(6000000, 7000000, 0);
    const double zoomed = st.vp.t1() - st.vp.t0;
    step_bookmark(d, st, +1);
    CHECK(*st.cursor >= st.vp.t0);
    CHECK(*st.cursor <= st.vp.t1());
    CHECK(st.vp.t1() - st.vp.t0 == Approx(zoomed));
    CHECK(zoomed < span);
    remove_bookmark(st, {0, 0});
    CHECK(placed_bookmarks(d, st).size() == 2);
    CHECK(!st.bookmark_current);
}
