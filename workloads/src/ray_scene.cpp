// The ray tracer's scene, per-ray steps, frame buffer and serial reference (ray_scene.hpp). Every
// floating-point operation of the workload is in this file (see the header for why).
#include "ray_scene.hpp"

#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/workloads/workload.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace pipescope::workloads::ray {

namespace {

vec3 operator+(vec3 a, vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
vec3 operator-(vec3 a, vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
vec3 operator*(vec3 a, float k) { return {a.x * k, a.y * k, a.z * k}; }
float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
vec3 cross(vec3 a, vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
vec3 normalize(vec3 a) { return a * (1.0f / std::sqrt(dot(a, a))); }
float axis(vec3 v, int a) { return a == 0 ? v.x : a == 1 ? v.y : v.z; }

rgb operator+(rgb a, rgb b) { return {a.r + b.r, a.g + b.g, a.b + b.b}; }
rgb operator*(rgb a, rgb b) { return {a.r * b.r, a.g * b.g, a.b * b.b}; }
rgb operator*(rgb a, float k) { return {a.r * k, a.g * k, a.b * k}; }

// Lighting: one directional light (towards the light, unit length), ambient, and a sky gradient.
const vec3 to_light = normalize({0.45f, 0.85f, -0.35f});
constexpr rgb light_colour{1.0f, 0.96f, 0.88f};
constexpr float ambient = 0.12f;
constexpr float surface_offset = 1e-3f;   // secondary rays start this far off the surface
constexpr float min_distance = 1e-4f;     // nearer intersections are the surface the ray left

// The checkered ground and its slight mirror.
constexpr rgb ground_light{0.78f, 0.78f, 0.74f}, ground_dark{0.32f, 0.34f, 0.36f};
constexpr float ground_reflectivity = 0.15f;

rgb sky(vec3 dir) {
    const float t = 0.5f * (dir.y + 1.0f);
    return rgb{1.0f, 1.0f, 1.0f} * (1.0f - t) + rgb{0.45f, 0.65f, 1.0f} * t;
}

// splitmix64: the scene generator and the per-path sample jitter.
std::uint64_t mix(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
float unit_float(std::uint64_t bits) { return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f); }   // [0, 1)

struct generator {
    std::uint64_t state;
    float next() { return unit_float(state = mix(state)); }
};

// Ray against an axis-aligned box: entry distance, or +inf if it misses or enters beyond `limit`.
float enter_box(const vec3& lo, const vec3& hi, const vec3& o, const vec3& inv, float limit) {
    float t0 = 0.0f, t1 = limit;
    for (int a = 0; a < 3; ++a) {
        float n = (axis(lo, a) - axis(o, a)) * axis(inv, a);
        float f = (axis(hi, a) - axis(o, a)) * axis(inv, a);
        if (n > f) std::swap(n, f);
        t0 = n > t0 ? n : t0;
        t1 = f < t1 ? f : t1;
        if (t0 > t1) return INFINITY;
    }
    return t0;
}

vec3 inverse(const vec3& d) {
    // A zero component would make 0 * inf = NaN at a slab's edge: use a huge finite slope instead.
    auto inv = [](float c) { return std::fabs(c) < 1e-20f ? (c < 0 ? -1e30f : 1e30f) : 1.0f / c; };
    return {inv(d.x), inv(d.y), inv(d.z)};
}

}   // namespace

float intersect_sphere(const sphere& s, const vec3& origin, const vec3& dir) {
    const vec3 oc = origin - s.centre;
    const float b = dot(oc, dir);
    const float c = dot(oc, oc) - s.radius * s.radius;
    const float disc = b * b - c;
    if (disc < 0.0f) return -1.0f;
    const float root = std::sqrt(disc);
    float t = -b - root;
    if (t <= min_distance) t = -b + root;   // the origin is inside: the far side
    return t > min_distance ? t : -1.0f;
}

// ---------------------------------------------------------------------------------------------------
// Scene

scene::scene(std::vector<sphere> spheres, std::vector<material> materials)
    : spheres_(std::move(spheres)), materials_(std::move(materials)) {
    for (const sphere& s : spheres_) {
        if (s.material >= materials_.size())
            throw std::invalid_argument("ray scene: a sphere uses material " + std::to_string(s.material) + " of " +
                                        std::to_string(materials_.size()));
        if (!(s.radius > 0.0f)) throw std::invalid_argument("ray scene: a sphere with radius <= 0");
        extent_ = std::max({extent_, std::fabs(s.centre.x) + s.radius, std::fabs(s.centre.z) + s.radius});
    }
    order_.resize(spheres_.size());
    for (std::uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
    if (!spheres_.empty()) build(0, static_cast<std::uint32_t>(spheres_.size()));
}

scene scene::generate(std::uint32_t count, std::uint64_t seed) {
    generator rng{mix(seed ^ 0x5241595452414345ull)};   // "RAYTRACE"
    const float spread = 2.0f + 0.9f * std::sqrt(static_cast<float>(count));
    std::vector<sphere> spheres;
    std::vector<material> materials;
    for (std::uint32_t i = 0; i < count; ++i) {
        sphere s;
        // A few tries for a free spot on the ground; a crowded scene keeps the last try (overlap is
        // harmless to the tracer).
        for (int attempt = 0; attempt < 16; ++attempt) {
            s.radius = 0.25f + 0.55f * rng.next();
            s.centre.x = (2.0f * rng.next() - 1.0f) * spread;
            s.centre.z = (2.0f * rng.next() - 1.0f) * spread;
            bool free = true;
            for (const sphere& o : spheres) {
                const float dx = o.centre.x - s.centre.x, dz = o.centre.z - s.centre.z, r = o.radius + s.radius;
                if (dx * dx + dz * dz < r * r) {
                    free = false;
                    break;
                }
            }
            if (free) break;
        }
        s.centre.y = s.radius + (rng.next() < 0.15f ? 1.5f * rng.next() : 0.0f);   // some float
        material m;
        m.albedo = {0.2f + 0.75f * rng.next(), 0.2f + 0.75f * rng.next(), 0.2f + 0.75f * rng.next()};
        m.reflectivity = rng.next() < 0.35f ? 0.35f + 0.5f * rng.next() : 0.0f;
        s.material = static_cast<std::uint32_t>(materials.size());
        materials.push_back(m);
        spheres.push_back(s);
    }
    return scene(std::move(spheres), std::move(materials));
}

// Median split on the widest axis of the centres; leaves of up to 4 spheres. Ties sort by index so
// the tree is the same on every platform.
std::uint32_t scene::build(std::uint32_t first, std::uint32_t count) {
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    vec3 lo{INFINITY, INFINITY, INFINITY}, hi{-INFINITY, -INFINITY, -INFINITY};
    vec3 clo = lo, chi = hi;
    for (std::uint32_t i = first; i < first + count; ++i) {
        const sphere& s = spheres_[order_[i]];
        const vec3 r{s.radius, s.radius, s.radius};
        const vec3 a = s.centre - r, b = s.centre + r;
        lo = {std::min(lo.x, a.x), std::min(lo.y, a.y), std::min(lo.z, a.z)};
        hi = {std::max(hi.x, b.x), std::max(hi.y, b.y), std::max(hi.z, b.z)};
        clo = {std::min(clo.x, s.centre.x), std::min(clo.y, s.centre.y), std::min(clo.z, s.centre.z)};
        chi = {std::max(chi.x, s.centre.x), std::max(chi.y, s.centre.y), std::max(chi.z, s.centre.z)};
    }
    nodes_[index].lo = lo;
    nodes_[index].hi = hi;
    if (count <= 4) {
        nodes_[index].first = first;
        nodes_[index].count = count;
        return index;
    }
    const vec3 span = chi - clo;
    const int a = span.x >= span.y && span.x >= span.z ? 0 : span.y >= span.z ? 1 : 2;
    std::sort(order_.begin() + first, order_.begin() + first + count, [&](std::uint32_t l, std::uint32_t r) {
        const float cl = axis(spheres_[l].centre, a), cr = axis(spheres_[r].centre, a);
        return cl < cr || (cl == cr && l < r);
    });
    const std::uint32_t half = count / 2;
    const std::uint32_t left = build(first, half);
    const std::uint32_t right = build(first + half, count - half);
    nodes_[index].first = left;
    nodes_[index].right = right;
    nodes_[index].count = 0;
    return index;
}

hit scene::intersect(const vec3& o, const vec3& d) const {
    hit best{INFINITY, no_object};
    if (d.y < 0.0f && o.y > 0.0f) {
        const float t = -o.y / d.y;
        if (t > min_distance) best = {t, ground};
    }
    if (nodes_.empty()) return best.object == no_object ? hit{0.0f, no_object} : best;
    const vec3 inv = inverse(d);
    std::uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const node& n = nodes_[stack[--top]];
        if (enter_box(n.lo, n.hi, o, inv, best.t) == INFINITY) continue;
        if (n.count == 0) {
            stack[top++] = n.right;
            stack[top++] = n.first;   // left first
            continue;
        }
        for (std::uint32_t i = n.first; i < n.first + n.count; ++i) {
            const float t = intersect_sphere(spheres_[order_[i]], o, d);
            if (t > 0.0f && t < best.t) best = {t, static_cast<std::int32_t>(order_[i]) + 1};
        }
    }
    return best.object == no_object ? hit{0.0f, no_object} : best;
}

bool scene::occluded(const vec3& o, const vec3& d) const {
    if (d.y < 0.0f && o.y > 0.0f && -o.y / d.y > min_distance) return true;
    if (nodes_.empty()) return false;
    const vec3 inv = inverse(d);
    std::uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const node& n = nodes_[stack[--top]];
        if (enter_box(n.lo, n.hi, o, inv, INFINITY) == INFINITY) continue;
        if (n.count == 0) {
            stack[top++] = n.right;
            stack[top++] = n.first;
            continue;
        }
        for (std::uint32_t i = n.first; i < n.first + n.count; ++i)
            if (intersect_sphere(spheres_[order_[i]], o, d) > 0.0f) return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------------
// Camera and the per-ray steps

render_setup::render_setup(const settings& s) : settings_(s), scene_(scene::generate(s.spheres, s.seed)) {
    if (s.width == 0 || s.height == 0 || s.samples == 0)
        throw std::invalid_argument("ray tracer: width, height and samples must be at least 1");
    if (s.packet < min_ray_packet || s.packet > max_ray_packet)
        throw std::invalid_argument("ray tracer: packet = " + std::to_string(s.packet) + " rays per packet is outside [" +
                                    std::to_string(min_ray_packet) + ", " + std::to_string(max_ray_packet) + "]");
    const std::uint64_t slots = std::uint64_t{s.width} * s.height * s.samples * (std::uint64_t{s.bounces} + 1);
    if (slots > (std::uint64_t{1} << 26))
        throw std::invalid_argument("ray tracer: width × height × samples × (bounces + 1) = " + std::to_string(slots) +
                                    " ray slots, more than the 67,108,864 the frame buffer holds");
    // Look at the middle of the scene from above and in front of it, so that the ground fills the
    // lower part of the picture and the sky the top.
    const float e = scene_.extent();
    eye_ = {0.0f, 1.2f + 0.45f * e, -2.0f - 1.25f * e};
    const vec3 target{0.0f, 0.4f, 0.1f * e};
    forward_ = normalize(target - eye_);
    right_ = normalize(cross(vec3{0.0f, 1.0f, 0.0f}, forward_));
    up_ = cross(forward_, right_);
    half_height_ = std::tan(0.5f * 0.8f);   // 0.8 rad ≈ 46° vertical field of view
    half_width_ = half_height_ * static_cast<float>(s.width) / static_cast<float>(s.height);
}

ray_item camera_ray(const render_setup& r, std::uint32_t path) {
    const settings& s = r.settings_;
    const std::uint32_t pixel = path / s.samples;
    const std::uint32_t x = pixel % s.width, y = pixel / s.width;
    // A jittered position inside the pixel, from the path number: the same ray every time.
    const std::uint64_t h = mix(std::uint64_t{path} ^ (s.seed << 32));
    const float u = (static_cast<float>(x) + unit_float(h)) / static_cast<float>(s.width);
    const float v = (static_cast<float>(y) + unit_float(mix(h))) / static_cast<float>(s.height);
    const float px = (2.0f * u - 1.0f) * r.half_width_, py = (1.0f - 2.0f * v) * r.half_height_;
    ray_item ray;
    ray.origin = r.eye_;
    ray.dir = normalize(r.forward_ + r.right_ * px + r.up_ * py);
    ray.weight = {1.0f, 1.0f, 1.0f};
    ray.path = path;
    ray.depth = 0;
    return ray;
}

hit_item trace(const scene& s, const ray_item& ray) {
    hit_item h;
    h.ray = ray;
    h.h = s.intersect(ray.origin, ray.dir);
    return h;
}

shaded shade(const scene& s, const hit_item& h, std::uint32_t bounces) {
    const ray_item& ray = h.ray;
    shaded out;
    shadow_item& sh = out.shadow;
    sh.path = ray.path;
    sh.depth = ray.depth;
    if (h.h.object == no_object) {   // the sky: nothing to test
        sh.base = ray.weight * sky(ray.dir);
        sh.test = 0;
        return out;
    }
    const vec3 p = ray.origin + ray.dir * h.h.t;
    vec3 n;
    rgb albedo;
    float reflectivity = 0.0f;
    if (h.h.object == ground) {
        n = {0.0f, 1.0f, 0.0f};
        const bool light = (static_cast<long>(std::floor(p.x)) + static_cast<long>(std::floor(p.z))) % 2 == 0;
        albedo = light ? ground_light : ground_dark;
        reflectivity = ground_reflectivity;
    } else {
        const sphere& sp = s.spheres()[static_cast<std::size_t>(h.h.object - 1)];
        n = (p - sp.centre) * (1.0f / sp.radius);
        const material& m = s.materials()[sp.material];
        albedo = m.albedo;
        reflectivity = m.reflectivity;
    }
    // What the surface itself sends back (1 - reflectivity of it), split into ambient, which always
    // arrives, and the light's part, which needs the shadow test.
    const rgb own = ray.weight * albedo * (1.0f - reflectivity);
    sh.base = own * ambient;
    const float facing = dot(n, to_light);
    sh.origin = p + n * surface_offset;
    sh.dir = to_light;
    if (facing > 0.0f) {
        sh.lit = own * light_colour * facing;
        sh.test = 1;
    }
    // The mirror part goes on as a new ray, up to `bounces` reflections deep (seed 004 Fig. 1's
    // Shade -> Intersect edge).
    if (reflectivity > 0.0f && ray.depth < bounces) {
        out.reflects = true;
        ray_item& r = out.reflection;
        r.origin = sh.origin;
        r.dir = normalize(ray.dir - n * (2.0f * dot(ray.dir, n)));
        r.weight = ray.weight * reflectivity;
        r.path = ray.path;
        r.depth = ray.depth + 1;
    }
    return out;
}

sample_item resolve(const scene& s, const shadow_item& sh) {
    sample_item out;
    out.path = sh.path;
    out.depth = sh.depth;
    out.value = sh.test != 0 && !s.occluded(sh.origin, sh.dir) ? sh.base + sh.lit : sh.base;
    return out;
}

// ---------------------------------------------------------------------------------------------------
// Frame buffer

frame::frame(std::uint32_t width, std::uint32_t height, std::uint32_t samples, std::uint32_t bounces)
    : width_(width), height_(height), samples_(samples), depths_(bounces + 1) {
    const std::size_t n = std::size_t{width} * height * samples * depths_;
    slots_.assign(n, rgb{});
    written_.assign(n, 0);
}

void frame::add(const sample_item& s) {
    const std::size_t slot = std::size_t{s.path} * depths_ + s.depth;
    if (s.depth >= depths_ || slot >= slots_.size())
        throw std::logic_error("ray frame buffer: a ray of path " + std::to_string(s.path) + " at depth " +
                               std::to_string(s.depth) + " is outside the frame");
    if (written_[slot])
        throw std::logic_error("ray frame buffer: path " + std::to_string(s.path) + " depth " + std::to_string(s.depth) +
                               " arrived twice");
    written_[slot] = 1;
    slots_[slot] = s.value;
    ++rays_;
    if (s.depth > 0) ++reflected_;
}

bool frame::same_as(const frame& o) const {
    if (width_ != o.width_ || height_ != o.height_ || samples_ != o.samples_ || depths_ != o.depths_) return false;
    if (written_ != o.written_) return false;
    // Bit patterns, not ==: the graph must reproduce every bit (and -0 vs 0 would hide a difference).
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        const rgb& a = slots_[i];
        const rgb& b = o.slots_[i];
        if (std::bit_cast<std::uint32_t>(a.r) != std::bit_cast<std::uint32_t>(b.r) ||
            std::bit_cast<std::uint32_t>(a.g) != std::bit_cast<std::uint32_t>(b.g) ||
            std::bit_cast<std::uint32_t>(a.b) != std::bit_cast<std::uint32_t>(b.b))
            return false;
    }
    return true;
}

std::vector<std::uint8_t> frame::image() const {
    std::vector<std::uint8_t> out;
    out.reserve(std::size_t{width_} * height_ * 3);
    auto to_byte = [](float v) {
        v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        return static_cast<std::uint8_t>(std::sqrt(v) * 255.0f + 0.5f);
    };
    const std::size_t per_pixel = std::size_t{samples_} * depths_;
    for (std::size_t p = 0; p < std::size_t{width_} * height_; ++p) {
        rgb sum;
        for (std::size_t k = 0; k < per_pixel; ++k) sum = sum + slots_[p * per_pixel + k];
        const float scale = 1.0f / static_cast<float>(samples_);
        out.push_back(to_byte(sum.r * scale));
        out.push_back(to_byte(sum.g * scale));
        out.push_back(to_byte(sum.b * scale));
    }
    return out;
}

frame render_serial(const render_setup& r, std::stop_token cancel) {
    const settings& s = r.config();
    frame out(s.width, s.height, s.samples, s.bounces);
    for (std::uint32_t path = 0; path < r.paths(); ++path) {
        if (path % 4096 == 0) throw_if_cancelled(cancel);
        ray_item ray = camera_ray(r, path);
        for (;;) {
            const shaded sh = shade(r.world(), trace(r.world(), ray), s.bounces);
            out.add(resolve(r.world(), sh.shadow));
            if (!sh.reflects) break;
            ray = sh.reflection;
        }
    }
    return out;
}

std::uint64_t checksum(const std::vector<std::uint8_t>& bytes) {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001B3ull;
    return h;
}

void write_ppm(const std::string& path, std::uint32_t width, std::uint32_t height, const std::vector<std::uint8_t>& rgb8) {
    if (rgb8.size() != std::size_t{width} * height * 3)
        throw std::invalid_argument("write_ppm: " + std::to_string(rgb8.size()) + " bytes for a " + std::to_string(width) +
                                    "×" + std::to_string(height) + " RGB image");
    // Whole or not at all, errors naming the file and the OS reason (trace/atomic_output.hpp).
    const std::string header = "P6\n" + std::to_string(width) + ' ' + std::to_string(height) + "\n255\n";
    trace::atomic_output out(path);
    out.write({{header.data(), header.size()}, {rgb8.data(), rgb8.size()}});
    out.commit();
}

}   // namespace pipescope::workloads::ray
