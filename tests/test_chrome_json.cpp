// Chrome trace-event JSON export: parse the output back and compare it with the model.
#include <pipescope/trace/chrome_json.hpp>
#include <pipescope/trace/trace_model.hpp>

#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace pipescope::trace;
using pipescope::test::trace_builder;

namespace {

trace_builder sample() {
    trace_builder b;
    b.process(1, 1000, "pipe-fib · piper · P=2");
    b.thread(2, 1000, 100001, "worker 0");
    b.thread(3, 1000, 100002, "worker 1");
    b.counter_track(4, 1, "live iterations");
    trace_builder::event run;
    run.ts = 5, run.seq = 9, run.type = trace_builder::instant, run.track = 1, run.name = "run";
    run.str_args = {{"name", "pipe-fib · piper · P=2"}, {"metadata", R"({"workload":"pipe-fib","program":{"K":4}})"}};
    run.uint_args = {{"workers", 2}};
    b.add(run);
    b.slice_begin(1000, 2, "stage 0", {{"iteration", 0}, {"stage", 0}, {"waited", 0}});
    b.mark(1500, 2, "stolen \"quoted\"", {{"thief", 1}}, {42});
    b.slice_end(2001, 2);
    b.slice_begin(1600, 3, "stage 1", {{"iteration", 0}, {"stage", 1}, {"waited", 1}}, 2);
    b.mark(1600, 3, "steal", {{"victim", 0}}, {}, {42}, 2);
    b.slice_end(2500, 3, 2);
    b.slice_begin(3000, 3, "unclosed", {}, 2);
    b.count(1000, 4, 1, 9);
    b.count(1600, 4, 2, 9);
    return b;
}

}   // namespace

TEST_CASE("chrome json: the export parses back and matches the model", "[trace][json]") {
    const trace_builder b = sample();
    const trace_model m = load_trace(b.view());
    REQUIRE(m.flows.size() == 1);
    std::ostringstream os;
    const auto st = write_chrome_json(m, os);
    const auto j = nlohmann::json::parse(os.str());
    CHECK(j.at("displayTimeUnit") == "ns");
    const auto& evs = j.at("traceEvents");
    std::map<std::string, int> by_ph;
    for (const auto& e : evs) ++by_ph[e.at("ph").get<std::string>()];
    CHECK(by_ph["X"] == static_cast<int>(m.slices));
    CHECK(by_ph["i"] == static_cast<int>(m.instants));
    CHECK(by_ph["C"] == static_cast<int>(m.counter_values));
    CHECK(by_ph["s"] == 1);
    CHECK(by_ph["f"] == 1);
    CHECK(evs.size() == st.events);
    CHECK(st.slices == 3);

    auto find = [&](const std::string& ph, const std::string& name) -> const nlohmann::json& {
        for (const auto& e : evs)
            if (e.at("ph") == ph && e.value("name", "") == name) return e;
        FAIL("no " << ph << " event named " << name);
        throw;
    };
    const auto& x = find("X", "stage 0");
    CHECK(x.at("pid") == 1000);
    CHECK(x.at("tid") == 100001);
    CHECK(x.at("ts").get<double>() == Approx(1.0));
    CHECK(x.at("dur").get<double>() == Approx(1.001));
    CHECK(x.at("args").at("iteration") == 0);
    CHECK(x.at("args").at("stage") == 0);
    const auto& open = find("X", "unclosed");
    CHECK(open.at("args").at("unterminated") == true);
    const auto& stolen = find("i", "stolen \"quoted\"");
    CHECK(stolen.at("s") == "t");
    CHECK(stolen.at("ts").get<double>() == Approx(1.5));
    CHECK(stolen.at("args").at("thief") == 1);
    const auto& pn = find("M", "process_name");
    CHECK(pn.at("args").at("name") == "pipe-fib · piper · P=2");
    int thread_names = 0;
    for (const auto& e : evs)
        if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("pid") == 1000) ++thread_names;
    CHECK(thread_names == 2);
    const auto& run = find("i", "run");
    CHECK(run.at("args").at("workers") == 2);
    const auto& c = find("C", "live iterations");
    CHECK(c.at("pid") == 1000);
    const auto& s = find("s", "flow");
    const auto& f = find("f", "flow");
    CHECK(s.at("id") == f.at("id"));
    CHECK(f.at("bp") == "e");
    CHECK(s.at("tid") == 100001);
    CHECK(f.at("tid") == 100002);
    CHECK(j.at("metadata").at("runs").at(0).at("metadata").at("program").at("K") == 4);
}

TEST_CASE("chrome json: written to a file through a temporary", "[trace][json]") {
    const auto dir = std::filesystem::temp_directory_path() / "pipescope-json-test";
    std::filesystem::create_directories(dir);
    const trace_model m = load_trace(sample().view());
    const auto path = dir / "out.json";
    write_chrome_json(m, path);
    CHECK(std::filesystem::exists(path));
    CHECK(pipescope::testing::temporaries_of(path).empty());
    std::ifstream in(path);
    const auto j = nlohmann::json::parse(in);
    CHECK(j.at("traceEvents").size() > 10);
    CHECK_THROWS_WITH(write_chrome_json(m, dir / "no-such-dir" / "x.json"), Catch::Contains("no-such-dir does not exist"));
    std::filesystem::remove_all(dir);
}
