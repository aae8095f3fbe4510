// The packetized ray tracer (ray-0, ray-1; seed 004 Fig. 1, §V-A): intersection math, the graph
// against the serial reference under every graph policy, the bounce cycle, parameters, the image.
#include "../workloads/src/ray_scene.hpp"
#include "support/run_workload.hpp"

#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

workloads::run_report run_ray(const std::string& name, const std::string& policy, unsigned workers,
                              std::map<std::string, std::string> params = {}) {
    return testing::run_tiny(name, policy, workers, param_set(std::move(params)));
}

std::string error_of(const std::string& name, std::map<std::string, std::string> params) {
    try {
        run_ray(name, "graph-serial", 1, std::move(params));
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
}

}   // namespace

TEST_CASE("ray-sphere and ray-scene intersections", "[graph][workloads][ray]") {
    using namespace pipescope::workloads::ray;
    const sphere unit{{0, 0, 0}, 1.0f, 0};
    // From 5 units away straight at the centre: the near surface at distance 4, exactly.
    CHECK(intersect_sphere(unit, {0, 0, -5}, {0, 0, 1}) == 4.0f);
    // Passing beside it, and pointing away from it: misses.
    CHECK(intersect_sphere(unit, {0, 2, -5}, {0, 0, 1}) < 0.0f);
    CHECK(intersect_sphere(unit, {0, 0, -5}, {0, 0, -1}) < 0.0f);
    // From the centre: the far side, at the radius.
    CHECK(intersect_sphere(unit, {0, 0, 0}, {1, 0, 0}) == 1.0f);

    // Two spheres on the axis and the ground plane: the nearer sphere wins; a ray up misses all.
    const scene world({{{0, 1, 0}, 1.0f, 0}, {{0, 1, 6}, 0.5f, 1}}, {{{0.5f, 0.5f, 0.5f}, 0.0f}, {{1, 1, 1}, 0.5f}});
    const hit front = world.intersect({0, 1, -5}, {0, 0, 1});
    CHECK(front.object == 1);   // sphere 0
    CHECK(front.t == 4.0f);
    const hit behind = world.intersect({0, 1, 3}, {0, 0, 1});
    CHECK(behind.object == 2);
    CHECK(behind.t == 2.5f);
    const hit floor = world.intersect({5, 2, 0}, {0, -1, 0});
    CHECK(floor.object == ground);
    CHECK(floor.t == 2.0f);
    CHECK(world.intersect({5, 2, 0}, {0, 1, 0}).object == no_object);
    // Shadow queries: blocked by the sphere, free beside it.
    CHECK(world.occluded({0, 1, -5}, {0, 0, 1}));
    CHECK_FALSE(world.occluded({3, 1, -5}, {0, 0, 1}));

    // The BVH finds the same closest hit as testing every sphere, on a generated scene.
    const scene big = scene::generate(200, 7);
    for (std::uint32_t i = 0; i < 500; ++i) {
        const float a = 0.0123f * static_cast<float>(i), b = 0.37f * static_cast<float>(i % 17);
        const vec3 o{-3.0f + 0.01f * static_cast<float>(i), 4.0f, -20.0f};
        vec3 d{std::sin(a) * 0.5f, -0.15f - 0.01f * b, 1.0f};
        const float len = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
        d = {d.x / len, d.y / len, d.z / len};
        hit brute{0.0f, no_object};
        float best = INFINITY;
        if (d.y < 0) best = -o.y / d.y, brute = {best, ground};
        for (std::size_t k = 0; k < big.spheres().size(); ++k) {
            const float t = intersect_sphere(big.spheres()[k], o, d);
            if (t > 0 && t < best) best = t, brute = {t, static_cast<std::int32_t>(k) + 1};
        }
        const hit h = big.intersect(o, d);
        REQUIRE(h.object == brute.object);
        REQUIRE(h.t == brute.t);
    }
}

TEST_CASE("ray-0 and ray-1 match the serial reference under every graph policy", "[graph][workloads][ray]") {
    for (const std::string name : {"ray-0", "ray-1"}) {
        for (const auto& p : graph::policies()) {
            for (unsigned workers : {1u, 2u}) {
                INFO(name << " under " << p.name << ", P = " << workers);
                const run_report r = run_ray(name, p.name, workers);
                CHECK(r.matches_reference);
                REQUIRE(r.graph.has_value());
                CHECK(r.description.find("64×64 pixels, 8 samples/pixel") != std::string::npos);
                // Every bounded queue stayed within its capacity.
                for (const auto& q : r.graph->queues)
                    if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
            }
        }
    }
}

TEST_CASE("ray-1 with deeper bounces drains its cycle under every graph policy", "[graph][workloads][ray]") {
    for (const auto& p : graph::policies()) {
        INFO(p.name);
        const run_report r = run_ray("ray-1", p.name, 2, {{"bounces", "3"}, {"width", "40"}, {"height", "24"}});
        CHECK(r.matches_reference);
        CHECK(r.description.find("3 bounces") != std::string::npos);
    }
}

TEST_CASE("ray-1 traces more rays than ray-0 and changes exactly the pixels that see a mirror", "[graph][workloads][ray]") {
    using namespace pipescope::workloads::ray;
    settings s;
    s.width = 48;
    s.height = 32;
    s.samples = 2;
    s.spheres = 40;
    s.seed = 3;
    const render_setup flat(s);
    s.bounces = 1;
    const render_setup bouncing(s);
    const frame f0 = render_serial(flat), f1 = render_serial(bouncing);
    CHECK(f0.rays() == flat.paths());   // one ray per camera sample
    CHECK(f0.reflected_rays() == 0);
    CHECK(f1.rays() > f0.rays());
    CHECK(f1.rays() == f0.rays() + f1.reflected_rays());

    // A pixel whose camera rays all hit matte surfaces (or the sky) is the same in both images; a
    // pixel with a mirror hit gets the reflected light in ray-1 only.
    const auto img0 = f0.image(), img1 = f1.image();
    std::size_t mirror_pixels = 0, mirror_changed = 0;
    for (std::uint32_t px = 0; px < s.width * s.height; ++px) {
        bool mirror = false;
        for (std::uint32_t k = 0; k < s.samples; ++k)
            mirror = mirror || ray::shade(bouncing.world(),
                                          ray::trace(bouncing.world(), ray::camera_ray(bouncing, px * s.samples + k)), 1)
                                   .reflects;
        const bool same =
            img0[3 * px] == img1[3 * px] && img0[3 * px + 1] == img1[3 * px + 1] && img0[3 * px + 2] == img1[3 * px + 2];
        if (!mirror) {
            INFO("pixel " << px);
            CHECK(same);
        } else {
            ++mirror_pixels;
            if (!same) ++mirror_changed;
        }
    }
    CHECK(mirror_pixels > 0);
    CHECK(mirror_changed * 2 > mirror_pixels);   // most mirror pixels change (a dark reflection may round alike)

    // The graph counts the same rays as the reference.
    const run_report r0 = run_ray("ray-0", "graph-serial", 2), r1 = run_ray("ray-1", "graph-serial", 2);
    CHECK(r0.description.find("32,768 rays traced (32,768 camera, 0 reflected)") != std::string::npos);
    CHECK(r1.description.find("rays traced (32,768 camera, ") != std::string::npos);
    CHECK(r1.description.find(", 0 reflected") == std::string::npos);
}

TEST_CASE("ray workloads reject bad parameters, naming them", "[graph][workloads][ray]") {
    CHECK(error_of("ray-0", {{"width", "0"}}).find("--param width=0: must be between 1 and 8192") != std::string::npos);
    CHECK(error_of("ray-1", {{"bounces", "0"}}).find("--param bounces=0: must be between 1 and 8") != std::string::npos);
    CHECK(error_of("ray-1", {{"samples", "many"}}).find("--param samples=many: not a non-negative integer") !=
          std::string::npos);
    CHECK(error_of("ray-0", {{"bounces", "1"}}).find("unknown parameter(s) for ray-0: bounces") != std::string::npos);
    CHECK(error_of("ray-0", {{"packet", "0"}}).find("--param packet=0: must be between 1 and 8192") != std::string::npos);
    CHECK(error_of("ray-1", {{"packet", "8193"}}).find("--param packet=8193: must be between 1 and 8192") !=
          std::string::npos);
    CHECK(error_of("ray-1", {{"width", "8192"}, {"height", "8192"}}).find("ray slots") != std::string::npos);
    CHECK(error_of("ray-0", {{"out", "/nonexistent-dir/x.ppm"}}).find("'/nonexistent-dir' does not exist") !=
          std::string::npos);
    const std::string tmp = std::filesystem::temp_directory_path().string();
    CHECK(error_of("ray-0", {{"out", tmp}}).find("is a directory") != std::string::npos);
    CHECK(error_of("ray-1", {{"out", "/proc/pipescope-test.ppm"}}).find("cannot open it for writing") != std::string::npos);
}

TEST_CASE("ray workloads write the image as a binary PPM", "[graph][workloads][ray]") {
    const auto path = std::filesystem::temp_directory_path() / "pipescope-test-ray-1.ppm";
    std::filesystem::remove(path);
    const run_report r = run_ray("ray-1", "graph-serial", 2, {{"width", "20"}, {"height", "10"}, {"out", path.string()}});
    CHECK(r.matches_reference);
    CHECK(r.description.find("written to " + path.string()) != std::string::npos);
    std::ifstream f(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::string header = "P6\n20 10\n255\n";
    REQUIRE(bytes.size() == header.size() + 20 * 10 * 3);
    CHECK(bytes.substr(0, header.size()) == header);
    std::filesystem::remove(path);
}

TEST_CASE("breadth-first needs at least 10x the footprint of gramps on the ray tracer", "[graph][workloads][ray]") {
    // Seed 004 Table III: breadth-first holds a whole frame's rays in every queue; GRAMPS' bounded
    // queues (and, on ray-1's cycle, the bound camera still sees in `rays`) keep a few packets each.
    bool gramps = false, breadth_first = false;
    for (const auto& p : graph::policies()) {
        gramps = gramps || p.name == "gramps";
        breadth_first = breadth_first || p.name == "breadth-first";
    }
    if (!gramps || !breadth_first) return;   // one of the two policies is not built in
    for (const std::string name : {"ray-0", "ray-1"}) {
        for (unsigned workers : {1u, 2u}) {
            INFO(name << ", P = " << workers);
            const run_report g = run_ray(name, "gramps", workers), b = run_ray(name, "breadth-first", workers);
            REQUIRE(g.matches_reference);
            REQUIRE(b.matches_reference);
            // Breadth-first: at least every camera ray's packet in one queue at once (64×64 pixels, 8
            // samples: 32768 camera rays in packets of the tiny size's default).
            CHECK(b.graph->peak_packets >= 32768 / ray::tiny_ray_packet);
            CHECK(b.graph->peak_packets >= 10 * g.graph->peak_packets);
        }
    }
}
