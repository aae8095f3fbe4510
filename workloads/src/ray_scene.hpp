// The packetized ray tracer of seed 004 (Fig. 1 "the raytracing graph"; §V-A "raytracer": ray-0
// without reflection bounces, a pipeline; ray-1 with one bounce, a graph with a cycle): the scene,
// the per-ray steps every schedule runs (camera ray, intersect, shade, shadow test), the frame
// buffer, and the serial reference.
//
// Why every floating-point operation lives in ray_scene.cpp: the graph and the serial reference must
// produce bit-identical images. Both call the same per-ray functions below, compiled once (with
// floating-point contraction off, see workloads/CMakeLists.txt), so each ray goes through exactly
// the same instructions whichever stage or worker runs it. The frame buffer keeps every ray's
// contribution in its own slot (path, depth) and sums the slots in a fixed order at the end, so the
// order in which rays arrive does not change a single bit of the image.
#pragma once

#include <pipescope/graph/program.hpp>

#include <atomic>
#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

namespace pipescope::workloads::ray {

struct vec3 {
    float x = 0, y = 0, z = 0;
};
struct rgb {
    float r = 0, g = 0, b = 0;
};

struct material {
    rgb albedo;
    float reflectivity = 0;   // share of the light that comes from the mirror direction
};
struct sphere {
    vec3 centre;
    float radius = 1;
    std::uint32_t material = 0;   // index into scene::materials()
};

// A hit: distance along the (unit) ray and what was hit.
inline constexpr std::int32_t no_object = -1;   // the ray leaves the scene (sky)
inline constexpr std::int32_t ground = 0;       // the ground plane y = 0; sphere i is object i + 1
struct hit {
    float t = 0;
    std::int32_t object = no_object;
};

// Spheres over a checkered ground plane, lit by a directional light and the sky. Closest-hit and
// any-hit queries go through a bounding-volume hierarchy over the spheres (median split on the
// widest axis) plus the plane.
class scene {
public:
    // `count` spheres resting on (or floating just above) the ground, placed by a generator seeded
    // with `seed`; about a third of them are mirrors. Spread grows with sqrt(count), so the density
    // (and the cost of a ray) stays about the same at every size.
    static scene generate(std::uint32_t count, std::uint64_t seed);
    // Exactly these spheres (tests); materials[i] for sphere.material == i.
    scene(std::vector<sphere> spheres, std::vector<material> materials);

    hit intersect(const vec3& origin, const vec3& dir) const;   // closest hit, dir of unit length
    bool occluded(const vec3& origin, const vec3& dir) const;   // anything at all in the way
    const std::vector<sphere>& spheres() const noexcept { return spheres_; }
    const std::vector<material>& materials() const noexcept { return materials_; }
    float extent() const noexcept { return extent_; }   // spheres lie within |x|, |z| <= extent

private:
    struct node {
        vec3 lo, hi;
        std::uint32_t first = 0;   // leaf: first index into order_; inner: index of the left child
        std::uint32_t count = 0;   // leaf: spheres; inner: 0 (the right child follows its left subtree)
        std::uint32_t right = 0;
    };
    std::uint32_t build(std::uint32_t first, std::uint32_t count);

    std::vector<sphere> spheres_;
    std::vector<material> materials_;
    std::vector<std::uint32_t> order_;   // sphere indices, leaves reference ranges of it
    std::vector<node> nodes_;
    float extent_ = 0;
};

// One sphere alone: distance to the first intersection in front of the origin, or a negative value
// for a miss. dir must have unit length.
float intersect_sphere(const sphere& s, const vec3& origin, const vec3& dir);

// ---------------------------------------------------------------------------------------------------
// Queue elements (trivially copyable: packets are raw bytes).

// A path is one camera sample: path p is sample p % samples of pixel p / samples (row-major).
struct ray_item {
    vec3 origin, dir;
    rgb weight;   // what the path carries to this ray's pixel
    std::uint32_t path = 0;
    std::uint32_t depth = 0;   // 0: camera ray, k: after k reflections
};
struct hit_item {
    ray_item ray;
    hit h;
};
// What shading decided, waiting for the shadow test: `base` reaches the pixel in any case (sky,
// ambient), `lit` only if the light is visible from `origin` (test != 0).
struct shadow_item {
    vec3 origin, dir;
    rgb base, lit;
    std::uint32_t path = 0, depth = 0, test = 0;
};
struct sample_item {
    std::uint32_t path = 0, depth = 0;
    rgb value;
};
// The camera's unit of work: `count` (<= the packet size) consecutive paths starting at `first`.
struct tile_item {
    std::uint32_t first = 0, count = 0;
};
// Rays per packet in every ray queue, and camera paths per tile (one tile makes one packet of camera
// rays). GRAMPS' ray tracer used 32-ray packets sized for its SIMD intersection (seed 004 §II-C,
// Fig. 1). Our intersection is scalar, so a packet only has to carry enough work to amortize a
// scheduler step: at size large a 32-ray packet is about 6 µs of work through all stages (2 µs in
// intersect), a 256-ray packet about 43 µs (18 µs in intersect); measured, see docs/runtime.md,
// "Packet sizes of the graph workloads". The tiny frame (32768 camera rays) keeps 64-ray packets so
// that it still has hundreds of packets: with 256 it would have 128, and GRAMPS' bounded queues
// (about 24 packets in all) would hold a fifth of the frame, which leaves the footprint comparison
// with breadth-first (seed 004 Table III) nothing to show.
inline constexpr std::uint32_t default_ray_packet = 256, tiny_ray_packet = 64;
inline constexpr std::uint32_t min_ray_packet = 1, max_ray_packet = 8192;

// ---------------------------------------------------------------------------------------------------
// A frame to render.

struct settings {
    std::uint32_t width = 64, height = 64;
    std::uint32_t samples = 1;   // camera rays per pixel
    std::uint32_t spheres = 48;
    std::uint32_t bounces = 0;                   // reflection depth: 0 is ray-0, 1 is ray-1
    std::uint32_t packet = default_ray_packet;   // rays per packet (the graph only; the image does not depend on it)
    std::uint64_t seed = 1;
};

class render_setup {
public:
    explicit render_setup(const settings& s);   // throws std::invalid_argument on a bad size
    const settings& config() const noexcept { return settings_; }
    const ray::scene& world() const noexcept { return scene_; }
    std::uint32_t paths() const noexcept { return settings_.width * settings_.height * settings_.samples; }
    std::uint32_t tiles() const noexcept { return (paths() + settings_.packet - 1) / settings_.packet; }

private:
    friend ray_item camera_ray(const render_setup& r, std::uint32_t path);
    settings settings_;
    ray::scene scene_;
    vec3 eye_, forward_, right_, up_;
    float half_height_ = 0, half_width_ = 0;
};

// The per-ray steps, in the order a ray meets them.
ray_item camera_ray(const render_setup& r, std::uint32_t path);
hit_item trace(const scene& s, const ray_item& ray);
struct shaded {
    shadow_item shadow;
    bool reflects = false;
    ray_item reflection;   // valid if reflects
};
shaded shade(const scene& s, const hit_item& h, std::uint32_t bounces);
sample_item resolve(const scene& s, const shadow_item& sh);

// The frame buffer: one slot per (path, depth), each written exactly once by the ray that has it.
class frame {
public:
    frame() = default;
    frame(std::uint32_t width, std::uint32_t height, std::uint32_t samples, std::uint32_t bounces);
    // Stores a ray's contribution; std::logic_error if its slot is out of range or already written
    // (a ray delivered twice).
    void add(const sample_item& s);
    std::uint64_t rays() const noexcept { return rays_; }
    std::uint64_t reflected_rays() const noexcept { return reflected_; }
    // Every slot written by the same rays with bit-identical values.
    bool same_as(const frame& o) const;
    // Pixels, sRGB-ish 8-bit (gamma 2), row-major RGB: per pixel, slots summed in (sample, depth)
    // order, divided by the samples.
    std::vector<std::uint8_t> image() const;
    std::uint32_t width() const noexcept { return width_; }
    std::uint32_t height() const noexcept { return height_; }

private:
    std::uint32_t width_ = 0, height_ = 0, samples_ = 0, depths_ = 0;
    std::vector<rgb> slots_;
    std::vector<std::uint8_t> written_;
    std::uint64_t rays_ = 0, reflected_ = 0;
};

// The serial reference: each path traced to the end, one after the other.
frame render_serial(const render_setup& r, std::stop_token cancel = {});   // cancel: every 4096 paths

// FNV-1a over the bytes (the description's image checksum).
std::uint64_t checksum(const std::vector<std::uint8_t>& bytes);
// A binary PPM (P6). Throws std::runtime_error naming the path and the reason when it cannot be
// written.
void write_ppm(const std::string& path, std::uint32_t width, std::uint32_t height, const std::vector<std::uint8_t>& rgb8);

// ---------------------------------------------------------------------------------------------------
// The stage graph (ray_graph.cpp).

// What the graph's stages share during a run.
struct graph_state {
    const render_setup* setup = nullptr;
    frame output;
    // Rays of depth < bounces made but not yet shaded: only those can still make reflection rays.
    // When it reaches 0 the cycle is drained and shade closes its feedback output.
    std::atomic<std::int64_t> open_bouncing{0};
    void reset(const render_setup& r);
};

// tiler -> tiles -> camera -> rays -> intersect -> hits -> shade -> shadow rays -> shadow intersect
// -> samples -> frame buffer; with bounces > 0 shade also feeds reflection rays back into `rays`.
// `packet` rays per packet in every ray queue (a tile is one packet of camera paths).
graph::program build_graph(graph_state& state, std::uint32_t bounces, std::uint32_t packet = default_ray_packet);
// Per-stage notes for the trace metadata, in stage order.
std::vector<std::string> graph_stage_notes(std::uint32_t bounces, std::uint32_t packet = default_ray_packet);

}   // namespace pipescope::workloads::ray
