// The ray tracer as a stage graph (seed 004 Fig. 1, §II-C, §V-A):
//
//   tiler ─tiles─> camera ─rays─> intersect ─hits─> shade ─shadow rays─> shadow intersect ─samples─> frame buffer
//                            ^                        │
//                            └──── reflection rays ───┘   (bounces > 0 only: ray-1's cycle)
//
// - tiler (serial source): cuts the frame into tiles of `packet` consecutive camera samples. As in the
//   original GRAMPS ray tracer (a Tiler thread, then shaders that make the camera rays), the serial
//   stage only hands out tiles, and rays are made by instances, one packet per instance, paced by
//   the scheduler like every other shader rather than by a thread's preemption budget.
// - camera (parallel): a tile's primary rays, one packet.
// - intersect (parallel): the closest hit of every ray of a packet.
// - shade (parallel): every ray becomes one shadow-ray element (the light's contribution waits for
//   the shadow test); mirror hits also push a reflection ray back into `rays`. Both outputs are push
//   queues: a packet of hits yields a variable number of each, coalesced into packets (§II-C).
// - shadow intersect (parallel): the shadow test, giving each ray's final contribution.
// - frame buffer (serial): stores each ray's contribution in its (path, depth) slot.
//
// Termination of the cycle. `rays` has two producers, camera and shade, and ends when both closed.
// Camera closes when the tiles ran out. Shade would close only when its input `hits` ended, which
// needs intersect to finish, which needs `rays` to end: a cycle that termination from the sources
// (seed 002 §III-A5) cannot break. So the program breaks it: graph_state::open_bouncing counts rays
// of depth < bounces that exist but are not shaded yet (only those can make a reflection ray). It
// starts at the number of camera rays (all of depth 0, made or still to be made); a shade instance
// first adds the reflection rays it made that can bounce again, then subtracts the rays it shaded
// that could bounce. Adding before subtracting keeps the count above zero while any such ray is
// about; the instance that brings it to zero shaded the last ray that could reflect, so it closes
// the feedback output (instance_context::close_output). Its own reflection rays (depth = bounces at
// most) are committed first; instances that reserved room in `rays` before still commit theirs.
//
// Deadlock freedom with bounded queues (schedulers that bound the backward queue too): camera
// reserves two packets in `rays` and fills one, so it never takes the last free packet. Then `rays`
// can only fill up through shade, whose instance just freed a packet of `hits`; so `rays` and
// `hits` are never both full, and intersect or shade can always run.
#include "ray_scene.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pipescope::workloads::ray {

namespace {

// Queue capacities as the application declares them (GRAMPS' rule: the application sizes each
// queue, seed 004 §II-C): small bounds counted in packets of `packet` rays (GRAMPS used 32-ray
// packets, see ray_scene.hpp for our default). Four packets between two parallel stages keep two
// workers busy; `rays` has eight, as camera reserves two. Under DANBI, and with --param capacity,
// the workload resizes them (graph_workload.hpp, sized_program).
graph::queue_shape shape(std::size_t elements, std::size_t capacity) {
    graph::queue_shape s;
    s.packet_elements = elements;
    s.capacity_packets = capacity;
    s.ordered = false;
    return s;
}

}   // namespace

void graph_state::reset(const render_setup& r) {
    setup = &r;
    const settings& s = r.config();
    output = frame(s.width, s.height, s.samples, s.bounces);
    open_bouncing.store(s.bounces > 0 ? static_cast<std::int64_t>(r.paths()) : 0, std::memory_order_relaxed);
}

graph::program build_graph(graph_state& state, std::uint32_t bounces, std::uint32_t packet) {
    if (packet < min_ray_packet || packet > max_ray_packet)
        throw std::invalid_argument("ray tracer: packet = " + std::to_string(packet) + " rays per packet is outside [" +
                                    std::to_string(min_ray_packet) + ", " + std::to_string(max_ray_packet) + "]");
    graph::program g;
    // A tile is one element: one packet of camera rays is one tile, so the tiler's packets are tiles.
    const auto tiles = g.add_queue<tile_item>("tiles", shape(1, 4));
    const auto rays = g.add_queue<ray_item>("rays", shape(packet, 8));
    const auto hits = g.add_queue<hit_item>("hits", shape(packet, 4));
    const auto shadow = g.add_queue<shadow_item>("shadow rays", shape(packet, 4));
    const auto samples = g.add_queue<sample_item>("samples", shape(packet, 4));
    graph_state* st = &state;

    g.add_serial("tiler", {}, {tiles}, [st, packet](graph::thread_context& ctx) -> graph::stage_task {
        const std::uint32_t paths = st->setup->paths();
        for (std::uint32_t first = 0; first < paths; first += packet) {
            tile_item t;
            t.first = first;
            t.count = std::min(packet, paths - first);
            co_await ctx.push(0, t);   // one element is one whole packet of the tiles queue
        }
    });

    // One spare packet in `rays` when the cycle exists (see the deadlock note above).
    g.add_parallel("camera", tiles, {{rays, bounces > 0 ? 2u : 1u}}, [st](graph::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i) {
            const tile_item& t = ctx.in<tile_item>(i);
            for (std::uint32_t p = t.first; p < t.first + t.count; ++p) ctx.push(0, camera_ray(*st->setup, p));
        }
    });

    g.add_parallel("intersect", rays, {{hits, 1}}, [st](graph::instance_context& ctx) {
        const scene& world = st->setup->world();
        for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, trace(world, ctx.in<ray_item>(i)));
    });

    std::vector<graph::output_spec> shade_out = {{shadow, 1}};
    if (bounces > 0) shade_out.push_back({rays, 1});   // the backward queue: Shade -> Intersect
    g.add_parallel("shade", hits, std::move(shade_out), [st, bounces](graph::instance_context& ctx) {
        const scene& world = st->setup->world();
        std::int64_t shaded_bouncing = 0, made_bouncing = 0;
        for (std::size_t i = 0; i < ctx.size(); ++i) {
            const hit_item& h = ctx.in<hit_item>(i);
            const shaded out = shade(world, h, bounces);
            ctx.push(0, out.shadow);
            if (h.ray.depth < bounces) ++shaded_bouncing;
            if (out.reflects) {
                ctx.push(1, out.reflection);
                if (out.reflection.depth < bounces) ++made_bouncing;
            }
        }
        if (bounces == 0) return;
        if (made_bouncing > 0) st->open_bouncing.fetch_add(made_bouncing, std::memory_order_acq_rel);
        if (shaded_bouncing > 0 &&
            st->open_bouncing.fetch_sub(shaded_bouncing, std::memory_order_acq_rel) == shaded_bouncing)
            ctx.close_output(1);   // no ray left that could reflect: the cycle is drained
    });

    g.add_parallel("shadow intersect", shadow, {{samples, 1}}, [st](graph::instance_context& ctx) {
        const scene& world = st->setup->world();
        for (std::size_t i = 0; i < ctx.size(); ++i) ctx.push(0, resolve(world, ctx.in<shadow_item>(i)));
    });

    g.add_serial("frame buffer", {samples}, {}, [st](graph::thread_context& ctx) -> graph::stage_task {
        for (;;) {
            auto w = co_await ctx.pop(0);
            if (!w) break;   // end of stream
            for (std::size_t i = 0; i < w.size(); ++i) st->output.add(w.at<sample_item>(i));
            ctx.commit(w);
        }
    });
    return g;
}

std::vector<std::string> graph_stage_notes(std::uint32_t bounces, std::uint32_t packet) {
    const std::string n = std::to_string(packet);
    std::vector<std::string> notes = {
        "hands out tiles of " + n + " consecutive camera samples",
        "makes a tile's " + n + " primary rays (one packet)",
        "closest hit of each ray (BVH over the spheres, ground plane)",
        bounces > 0 ? "one shadow ray per ray (push queue); mirror hits push reflection rays back to intersect; "
                      "closes that feedback output once no ray of depth < bounces is left unshaded"
                    : "one shadow ray per ray (push queue)",
        "shadow test: the ray's final contribution",
        "stores each ray's contribution in its (path, depth) slot",
    };
    return notes;
}

}   // namespace pipescope::workloads::ray
