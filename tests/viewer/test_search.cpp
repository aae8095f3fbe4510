// The timeline's search (viewer/model/search.hpp): the query syntax, matches counted against the
// trace model directly, time order and stepping.
#include <catch2/catch.hpp>

#include <model/search.hpp>
#include <model/view_state.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

namespace {

const fs::path k2 = fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace";

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Events (slices and instants) of a model for which `pred(name, iteration annotation)` holds.
template <class Pred>
std::size_t count_events(const tm::trace_model& m, Pred pred) {
    std::size_t n = 0;
    for (const tm::track& t : m.tracks) {
        for (const tm::slice& s : t.slices) n += pred(m.str(s.name), m.uint_arg(s, vocab::arg_key::iteration));
        for (const tm::instant& i : t.instants) n += pred(m.str(i.name), m.uint_arg(i, vocab::arg_key::iteration));
    }
    return n;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}   // namespace

TEST_CASE("search: the query syntax", "[viewer][search]") {
    auto q = parse_query("stage 3");
    CHECK(q.stage == 3u);
    CHECK(q.words.empty());
    CHECK(parse_query("s3").stage == 3u);
    CHECK(parse_query("S=3").stage == 3u);
    CHECK(parse_query("i12").iteration == 12u);
    CHECK(parse_query("iteration 12").iteration == 12u);
    CHECK(parse_query("Iter 12").iteration == 12u);
    q = parse_query("  Idle   STAGE ");
    CHECK(q.words == std::vector<std::string>{"idle", "stage"});
    CHECK(!q.stage);
    q = parse_query("stage x i7 steal");
    CHECK(q.words == std::vector<std::string>{"stage", "x", "steal"});
    CHECK(q.iteration == 7u);
    CHECK(parse_query("   ").empty());
    CHECK(parse_query("i").words == std::vector<std::string>{"i"});
    CHECK(parse_query("s99999999999999999999999").words.size() == 1);   // no number: a word
}

TEST_CASE("search: matches on the K = 2 example, counted from the trace model", "[viewer][search]") {
    document d;
    d.add(load_file(k2));
    const tm::trace_model& m = d.files[0]->model;
    REQUIRE(m.runs.size() == 1);
    REQUIRE(m.runs[0].dag.folded_blocks == 0);   // every node its own slice: names say the stage
    for (const auto& st : m.runs[0].stages) REQUIRE(lower(st.name).find("idle") == std::string::npos);

    const auto idle = find_matches(d, parse_query("IDLE"), false);
    CHECK(idle.size() ==
          count_events(m, [](const std::string& n, auto) { return lower(n).find("idle") != std::string::npos; }));
    CHECK(idle.size() > 10);

    const auto stage1 = find_matches(d, parse_query("stage 1"), false);
    const std::size_t stage1_count =
        count_events(m, [](const std::string& n, auto) { return n == "stage 1" || ends_with(n, " at stage 1"); });
    CHECK(stage1.size() == stage1_count);
    CHECK(stage1_count > 10);

    const auto it5 = find_matches(d, parse_query("i5"), false);
    CHECK(it5.size() == count_events(m, [](const std::string&, auto it) { return it == 5u; }));
    CHECK(it5.size() >= 2);

    // Both must hold: the node (5, 1), and iteration 5 waiting at stage 1 if it did.
    const auto node = find_matches(d, parse_query("stage 1 iteration 5"), false);
    CHECK(node.size() == count_events(m, [](const std::string& n, auto it) {
              return it == 5u && (n == "stage 1" || ends_with(n, " at stage 1"));
          }));
    REQUIRE(!node.empty());
    CHECK(std::count_if(node.begin(), node.end(), [&](const search_match& x) {
              return !x.ev.is_instant && m.str(m.tracks[x.ev.track].slices[x.ev.index].name) == "stage 1";
          }) == 1);

    // More matches than the limit: none kept, all counted.
    std::size_t total = 0;
    CHECK(find_matches(d, parse_query("idle"), false, 10, &total).empty());
    CHECK(total == idle.size());
    CHECK(find_matches(d, parse_query("idle"), false, idle.size(), &total).size() == idle.size());
    CHECK(find_matches(d, parse_query("no such thing"), false).empty());
    CHECK(find_matches(d, parse_query(""), false).empty());

    // Time order on the display axis: each match at its event's start.
    for (std::size_t i = 0; i < idle.size(); ++i) {
        const auto r = selection_range(d, {idle[i].file, idle[i].ev}, false);
        REQUIRE(r);
        CHECK(idle[i].t == r->first);
        if (i) CHECK(idle[i - 1].t <= idle[i].t);
    }
}

TEST_CASE("search: stepping with Enter and Shift+Enter", "[viewer][search]") {
    document d;
    d.add(load_file(k2));
    search_state s;
    s.update(d, "stage 1", false);
    const std::size_t n = s.matches.size();
    REQUIRE(n > 3);
    CHECK(s.counter() == std::to_string(n) + " matches");
    // From no current match: forward is the first at or after the view's left edge.
    const double t = s.matches[2].t;
    CHECK(s.step(false, t) ==
          static_cast<std::size_t>(std::lower_bound(s.matches.begin(), s.matches.end(), t,
                                                    [](const search_match& m, double x) { return m.t < x; }) -
                                   s.matches.begin()));
    s.current = search_state::none;
    CHECK(s.step(false, -1) == 0);
    CHECK(s.counter() == "1 / " + std::to_string(n));
    CHECK(s.step(true, 0) == n - 1);   // wraps backwards
    CHECK(s.step(false, 0) == 0);      // and forwards
    for (std::size_t k = 1; k < n; ++k) CHECK(s.step(false, 0) == k);
    CHECK(s.step(false, 0) == 0);
    s.current = search_state::none;
    CHECK(s.step(true, 1e300) == n - 1);   // backward from the view: the last before it

    // The same text searches once; a new text or axis forgets the current match.
    s.update(d, "stage 1", false);
    CHECK(s.current == n - 1);
    s.update(d, "stage 1", true);
    CHECK(s.current == search_state::none);
    s.update(d, "nothing matches this", true);
    CHECK(s.counter() == "no match");
    CHECK(s.step(false, 0) == search_state::none);
    s.update(d, "", true);
    CHECK(s.counter().empty());

    // Other files under the same text (closed and opened): searched again, no stale match.
    s.update(d, "idle", true);
    s.step(false, 0);
    REQUIRE(s.current == 0);
    d.clear();
    d.add(load_file(fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "ray-1-gramps.pftrace"));
    s.update(d, "idle", true);
    CHECK(s.current == search_state::none);
    for (const auto& m : s.matches) CHECK(holds(d, m.file, m.ev));
    CHECK(!holds(d, 1, s.matches.empty() ? tm::event_ref{} : s.matches[0].ev));
    CHECK(!holds(d, 0, {0, 1u << 30, false}));
}

TEST_CASE("search: a stage's name from the run metadata finds its nodes", "[viewer][search]") {
    tm::trace_model m;
    m.strings = {"",
                 "stage 0",
                 "stage 1",
                 "idle",
                 "stage 0\xE2\x80\x93"
                 "1",
                 "nodes",
                 "last_stage",
                 "stage"};
    tm::track t;
    t.kind = tm::track_kind::thread;
    t.name = "worker 0";
    t.run = 0;
    t.worker = 0;
    auto slice = [](std::uint64_t b, std::uint64_t e, tm::string_id n) {
        tm::slice s;
        s.begin = b;
        s.end = e;
        s.name = n;
        return s;
    };
    t.slices = {slice(0, 10, 1), slice(10, 20, 2), slice(20, 30, 3), slice(30, 50, 4)};
    // The last slice folds stages 0-1 of one iteration (nodes 2, stage 0, last_stage 1).
    t.slices[3].args_first = 0;
    t.slices[3].args_count = 3;
    m.args = {{5, tm::arg_kind::uint_value, 2}, {6, tm::arg_kind::uint_value, 1}, {7, tm::arg_kind::uint_value, 0}};
    m.tracks.push_back(t);
    tm::run r;
    r.track = 0;
    r.stages = {{0, "read input", "serial"}, {1, "Extract features", "parallel"}};
    m.runs.push_back(r);
    document d;
    d.add(prepare_file(std::move(m)));
    auto slices_of = [&](const char* q) {
        std::vector<std::uint32_t> v;
        for (const auto& x : find_matches(d, parse_query(q), false)) v.push_back(x.ev.index);
        return v;
    };
    CHECK(slices_of("extract") == std::vector<std::uint32_t>{1, 3});   // stage 1, and the fold holding it
    CHECK(slices_of("stage 1") == std::vector<std::uint32_t>{1, 3});
    CHECK(slices_of("read extract") == std::vector<std::uint32_t>{3});   // only the fold holds both
    CHECK(slices_of("idle") == std::vector<std::uint32_t>{2});
}
