// The viewer's side of virtual runs and scaling sweeps: the "virtual N cores" badge read from a
// run's metadata, and a sweep's manifest, plot geometry, hit testing and rows' runs (model/scaling.hpp).
#include <catch2/catch.hpp>

#include <model/document.hpp>
#include <model/scaling.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

static const fs::path k2 = fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace";

TEST_CASE("a run on virtual workers says so in its title, a real run does not", "[viewer][scaling]") {
    document real;
    real.add(load_file(k2));
    REQUIRE(real.runs.size() == 1);
    CHECK(real.runs[0].virtual_badge.empty());
    CHECK(real.runs[0].title.find("virtual") == std::string::npos);

    auto f = load_file(k2);
    REQUIRE(f->model.runs.size() == 1);
    nlohmann::json meta = nlohmann::json::parse(f->model.runs[0].metadata_json);
    meta["virtual"] = {{"workers", 16}, {"job_costs", "virtual_work only"}};
    f->model.runs[0].metadata_json = meta.dump();
    document d;
    d.add(std::move(f));
    REQUIRE(d.runs.size() == 1);
    CHECK(d.runs[0].virtual_badge == "virtual 16 cores");
    CHECK(d.runs[0].title == real.runs[0].title + " \xC2\xB7 virtual 16 cores");
}

namespace {

// A sweep directory holding `manifest` as its scale.json (no traces: a test copies one in when it needs it).
fs::path write_sweep(const std::string& name, const nlohmann::json& manifest) {
    const fs::path dir = fs::temp_directory_path() / ("pipescope-viewer-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "scale.json") << manifest.dump(2);
    return dir;
}

// Two policies at P = 1, 2, 4: piper with speedup P, tbb with 1, 2, 2; bind-to-stage refused.
nlohmann::json manifest() {
    nlohmann::json rows = nlohmann::json::array();
    const double serial = 8e6;
    for (const char* policy : {"piper", "tbb"})
        for (int p : {1, 2, 4}) {
            const double makespan = serial / (std::string(policy) == "piper" ? p : (p == 4 ? 2.0 : p));
            rows.push_back({{"policy", policy},
                            {"workers", p},
                            {"makespan_ns", makespan},
                            {"speedup", serial / makespan},
                            {"efficiency", serial / makespan / p},
                            {"idle_share", 0.1},
                            {"steals", 3 * p},
                            {"peak_live", 2 * p},
                            {"peak_footprint", nullptr},
                            {"trace", std::string(policy) + "-P" + std::to_string(p) + ".pftrace"}});
        }
    return {{"format", "pipescope-scale/1"},
            {"workload", "ferret"},
            {"size", "tiny"},
            {"seed", 1},
            {"params", nlohmann::json::array()},
            {"serial_ns", serial},
            {"rows", rows},
            {"refused", {{{"policy", "bind-to-stage"}, {"reason", "not on virtual workers yet"}}}},
            {"plot", {{"svg", "speedup.svg"}, {"png", "speedup.png"}}}};
}

}   // namespace

TEST_CASE("a sweep's manifest loads from its directory or itself, with its axes", "[viewer][scaling]") {
    const fs::path dir = write_sweep("sweep", manifest());
    CHECK(looks_like_sweep(dir));
    CHECK(looks_like_sweep(dir / "scale.json"));
    CHECK_FALSE(looks_like_sweep(k2));
    for (const fs::path& p : {dir, dir / "scale.json"}) {
        const sweep s = load_sweep(p);
        CHECK(s.dir == dir);
        REQUIRE(s.data.rows.size() == 6);
        CHECK(s.data.policies() == std::vector<std::string>{"piper", "tbb"});
        REQUIRE(s.data.refused.size() == 1);
        CHECK(s.data.refused[0].policy == "bind-to-stage");
        CHECK(s.traces()[4] == dir / "tbb-P2.pftrace");
        // P from 1 to 4, speedups 1 to 4: both axes [1, 4], the ideal line the diagonal.
        CHECK(s.axes.x_lo == 1);
        CHECK(s.axes.x_hi == 4);
        CHECK(s.axes.y_lo == 1);
        CHECK(s.axes.y_hi == 4);
        CHECK(s.axes.x_ticks() == std::vector<double>{1, 2, 4});
    }
}

TEST_CASE("a malformed manifest is refused naming the file and the field", "[viewer][scaling]") {
    nlohmann::json m = manifest();
    m["rows"][2].erase("workers");
    const fs::path dir = write_sweep("bad", m);
    CHECK_THROWS_WITH(load_sweep(dir), (dir / "scale.json").string() + ": rows[2].workers: missing");
    m = manifest();
    m["format"] = "something/1";
    CHECK_THROWS_WITH(load_sweep(write_sweep("bad-format", m)), Catch::Contains("manifest.format"));
    CHECK_THROWS_WITH(load_sweep(fs::temp_directory_path() / "pipescope-viewer-none" / "scale.json"),
                      Catch::Contains("cannot be read"));
}

TEST_CASE("the plot puts P and speedup on log2 axes, and a point is hit within its radius", "[viewer][scaling]") {
    const sweep s = load_sweep(write_sweep("plot", manifest()));
    const plot_rect r{100, 50, 500, 350};
    const std::vector<plot_point> pts = plot_points(s, r);
    REQUIRE(pts.size() == 6);
    // piper: speedup P, on the diagonal from the bottom left to the top right.
    CHECK(pts[0].x == Approx(100));
    CHECK(pts[0].y == Approx(350));
    CHECK(pts[1].x == Approx(300));   // P = 2: halfway along log2 [1, 4]
    CHECK(pts[1].y == Approx(200));
    CHECK(pts[2].x == Approx(500));
    CHECK(pts[2].y == Approx(50));
    // tbb at P = 4 has speedup 2: halfway up.
    CHECK(pts[5].x == Approx(500));
    CHECK(pts[5].y == Approx(200));
    CHECK(row_at(pts, 502, 198, 5) == 5);
    CHECK(row_at(pts, 500, 52, 5) == 2);
    CHECK(row_at(pts, 400, 300, 5) == no_row);
}

TEST_CASE("a row's point leads to the run its trace holds", "[viewer][scaling]") {
    const fs::path dir = write_sweep("runs", manifest());
    fs::copy_file(k2, dir / "tbb-P2.pftrace");
    const sweep s = load_sweep(dir);
    document d;
    d.add(load_file(k2));   // another file first: the row's run is the second
    d.add(load_file(dir / "tbb-P2.pftrace"));
    REQUIRE(d.runs.size() == 2);
    CHECK(run_of_row(d, s, 4) == 1);
    CHECK(run_of_row(d, s, 0) == pipescope::trace::no_index);   // piper-P1.pftrace was not loaded
    CHECK(run_of_row(d, s, 99) == pipescope::trace::no_index);
}

TEST_CASE("a sweep written by the CLI's to_json reads back the same", "[viewer][scaling]") {
    namespace an = pipescope::analysis;
    an::scale_sweep s;
    s.workload = "dedup";
    s.size = "small";
    s.seed = 7;
    s.params = {"K=8"};
    s.serial_ns = 1.5e9;
    s.rows.push_back({"piper", 8, 2.5e8, 6, 0.75, 0.2, 41, 17.0, std::nullopt, "dedup-piper-P8.pftrace"});
    s.rows.push_back({"gramps", 8, 3e8, 5, 0.625, 0.3, 0, std::nullopt, 96.0, "dedup-gramps-P8.pftrace"});
    s.refused.push_back({"bind-to-stage", "why"});
    s.svg = "speedup.svg";
    s.png = "speedup.png";
    const an::scale_sweep back = an::sweep_from_json(an::to_json(s));
    CHECK(an::to_json(back) == an::to_json(s));
    REQUIRE(back.rows.size() == 2);
    CHECK(back.rows[0].peak_live == 17.0);
    CHECK_FALSE(back.rows[0].peak_footprint);
    CHECK(back.rows[1].peak_footprint == 96.0);
    CHECK(back.params == std::vector<std::string>{"K=8"});
}
