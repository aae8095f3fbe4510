// `histogram`: Phoenix's image histogram as a map-reduce stage graph (seed 004 §V-A: "histogram ...
// MapReduce applications from the Phoenix suite ... reduce-only (r) and with a combine stage (c)").
//
//   source ──ranges──▶ map ──partials──▶ [combine ──combined──▶] reduce
//   (serial)          (parallel)          (parallel)             (serial)
//
// - source hands out ranges of `packet` consecutive pixel indices, one range per packet (the last
//   range holds what is left), as the ray tracer's tiler hands out tiles (GRAMPS' Tiler thread and
//   the shaders that work on its tiles, seed 004 §II-C, §V-A). It used to copy every pixel into
//   the queue: a serial memcpy of the whole image (100 MB at size large) in front of the maps, which
//   bounded the run at about the serial loop's time. Now the pixels stay in the image, which is the
//   program's input (made before the run, as Phoenix maps the image file before its map tasks), and
//   the queues carry only ranges and histograms;
// - map reads its range's pixels from the image directly and counts each block of `block` pixels
//   into a partial 3×256-bin histogram (the MapReduce map unit), pushing the range's partials
//   together: one packet of ceil(packet/block) partials (the last block of a range may be short);
// - combine=on: combine sums one packet of partials into one histogram (a MapReduce combiner: the
//   data-parallel part of the reduction), so the serial reduce adds one histogram per packet;
// - reduce sums everything it receives into the final 768 bins. With combine=off it adds every
//   partial itself, and being serial it bounds the speedup: the two forms of the paper.
#include <pipescope/workloads/graph_workload.hpp>
#include <pipescope/workloads/workload.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

namespace pipescope::workloads {

namespace {

constexpr std::size_t bins = 3 * 256;   // red, green, blue

struct rgb {
    std::uint8_t r, g, b;
};
static_assert(sizeof(rgb) == 3, "pixels are packed 24-bit RGB");

struct pixel_range {
    std::uint64_t first = 0, count = 0;   // pixels [first, first + count) of the image, row-major
};

struct partial_histogram {
    std::array<std::uint32_t, bins> count;
};
using histogram = std::array<std::uint64_t, bins>;

struct image {
    std::uint32_t width = 0, height = 0;
    std::vector<rgb> pixels;   // row-major
};

std::uint64_t mix(std::uint64_t z) {   // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

std::uint8_t clamp_byte(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// A synthetic photograph with structure rather than uniform noise, so the histogram has peaks and
// gaps: a red ramp across, a green ramp down, blue rings around a seeded centre, flat seeded
// rectangles on top (tall peaks), and a little per-pixel noise. A function of (size, seed) only.
image make_image(std::uint32_t width, std::uint32_t height, std::uint64_t seed) {
    image img;
    img.width = width;
    img.height = height;
    img.pixels.resize(std::size_t{width} * height);
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ull;
    auto next = [&] { return mix(state += 0x9E3779B97F4A7C15ull); };
    const std::int64_t cx = static_cast<std::int64_t>(next() % width), cy = static_cast<std::int64_t>(next() % height);
    const std::int64_t ring = 64 + static_cast<std::int64_t>(next() % 512);
    struct rect {
        std::uint32_t x0, y0, x1, y1;
        rgb colour;
    };
    std::vector<rect> rects(12);
    for (rect& r : rects) {
        r.x0 = static_cast<std::uint32_t>(next() % width);
        r.y0 = static_cast<std::uint32_t>(next() % height);
        r.x1 = std::min(width, r.x0 + 1 + static_cast<std::uint32_t>(next() % (width / 4 + 1)));
        r.y1 = std::min(height, r.y0 + 1 + static_cast<std::uint32_t>(next() % (height / 4 + 1)));
        const std::uint64_t c = next();
        r.colour = {static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(c >> 8), static_cast<std::uint8_t>(c >> 16)};
    }
    auto noise = [&](std::uint32_t x, std::uint32_t y) {
        return static_cast<int>(mix(seed ^ (std::uint64_t{y} << 32 | x)) & 7) - 4;
    };
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            const int n = noise(x, y);
            const std::int64_t dx = std::int64_t{x} - cx, dy = std::int64_t{y} - cy;
            img.pixels[std::size_t{y} * width + x] = {clamp_byte(static_cast<int>(std::uint64_t{x} * 256 / width) + n),
                                                      clamp_byte(static_cast<int>(std::uint64_t{y} * 256 / height) + n),
                                                      static_cast<std::uint8_t>((dx * dx + dy * dy) / ring)};
        }
    }
    for (const rect& r : rects)   // painted in order: a later rectangle covers an earlier one
        for (std::uint32_t y = r.y0; y < r.y1; ++y)
            for (std::uint32_t x = r.x0; x < r.x1; ++x) {
                const int n = noise(x, y);
                img.pixels[std::size_t{y} * width + x] = {clamp_byte(r.colour.r + n / 2), r.colour.g,
                                                          clamp_byte(r.colour.b - n / 2)};
            }
    return img;
}

template <class Counts>
void count_pixels(const rgb* px, std::size_t n, Counts& c) {
    for (std::size_t i = 0; i < n; ++i) {
        ++c[px[i].r];
        ++c[256 + px[i].g];
        ++c[512 + px[i].b];
    }
}

// The pixel packet (`packet`, the parameter every graph workload has): a map instance counts one
// packet. Phoenix's histogram hands each map task a fixed slice of the image; GRAMPS' hist (seed 004
// §V-A) keeps its packets in queues whose footprint Table III reports, megabytes for hist-r/c. At
// 8192 pixels (the old 8 blocks of 1024) a map instance is about 8 µs of counting here, at 32768
// about 32 µs (measured at size large: docs/runtime.md, "Packet sizes of the graph workloads"). The
// tiny image (65536 pixels) keeps 4096-pixel packets, 16 of them, so that it is still a stream.
constexpr std::uint64_t default_packet = 32768, tiny_packet = 4096, max_packet = std::uint64_t{1} << 20;
constexpr std::uint64_t max_partials_per_packet = 64;   // a packet of partials is 3 KiB each
// A partial costs its map instance 3 KiB zeroed and copied into the packet and its combine 768 adds,
// whatever the block: with blocks of 1024 pixels (3 KiB of image each) that was a third more work
// than the serial loop, and graph-serial ran 1.24-1.87x the serial reference at size large (issue
// 17 asks <= 1.10). 8192 pixels per partial (4 per 32768-pixel packet) costs 1.01-1.05x
// (docs/runtime.md, "Packet sizes of the graph workloads").
constexpr std::uint64_t default_block = 8192;
// Packets per queue as the application sizes them (GRAMPS' rule, seed 004 §II-C): a few packets of
// work per stage; under DANBI the queues hold packets_at_once × workers instead (graph_workload.hpp).
constexpr std::size_t application_capacity = 16;

struct options {
    bool combine = true;
    std::uint64_t block = default_block;     // pixels per partial histogram (the map unit)
    std::uint64_t packet = default_packet;   // pixels per packet: one map instance (by size)
    std::optional<std::size_t> capacity;     // --param capacity: every queue; else the policy's rule
    // Partial histograms per packet of partials: what one map instance makes, one combine sums.
    std::uint64_t partials_per_packet() const { return (packet + block - 1) / block; }
};

options take_options(param_set& params, input_size size) {
    options o;
    o.combine = params.take_bool("combine", o.combine);
    o.block = params.take_uint("block", o.block, 16, std::uint64_t{1} << 20);
    o.packet = params.take_uint("packet", size == input_size::tiny ? tiny_packet : default_packet, 1, max_packet);
    o.capacity = take_capacity(params);
    if (o.partials_per_packet() > max_partials_per_packet)
        throw std::invalid_argument("--param packet=" + std::to_string(o.packet) +
                                    ": with block=" + std::to_string(o.block) + " a packet makes " +
                                    std::to_string(o.partials_per_packet()) + " partial histograms, at most " +
                                    std::to_string(max_partials_per_packet) + " (lower packet or raise block)");
    return o;
}

// Partial histograms the map stage makes from `pixels` pixels: every packet's blocks, the last
// block of each packet (and the last packet) possibly short.
std::uint64_t partials_for(const options& o, std::uint64_t pixels) {
    const std::uint64_t rest = pixels % o.packet;
    return pixels / o.packet * o.partials_per_packet() + (rest + o.block - 1) / o.block;
}

struct dimensions {
    std::uint32_t width, height;
};
dimensions dimensions_for(input_size s) {
    switch (s) {
        case input_size::tiny: return {256, 256};
        case input_size::small: return {2048, 2048};
        case input_size::large: return {8192, 4096};
    }
    return {2048, 2048};
}

struct histogram_state {
    options opt;
    image img;
    histogram result{};
    std::uint64_t reduced = 0;   // histograms the reduce stage added
};

graph::program build_graph(histogram_state& st) {
    graph::program g;
    const std::size_t packet_pixels = static_cast<std::size_t>(st.opt.packet);
    // One range per packet: a range is one map instance.
    const auto ranges =
        g.add_queue<pixel_range>("ranges",
                                 {.packet_elements = 1, .capacity_packets = application_capacity, .ordered = false});
    // A map instance's partials fill one packet, so a combine instance sums the partials of one
    // pixel packet.
    const auto partials =
        g.add_queue<partial_histogram>("partials",
                                       {.packet_elements = static_cast<std::size_t>(st.opt.partials_per_packet()),
                                        .capacity_packets = application_capacity,
                                        .ordered = false});

    g.add_serial("source", {}, {ranges}, [&st, packet_pixels](graph::thread_context& ctx) -> graph::stage_task {
        const std::size_t total = st.img.pixels.size();
        for (std::size_t at = 0; at < total;) {
            const std::size_t n = std::min(packet_pixels, total - at);
            co_await ctx.push(0, pixel_range{at, n});   // one element is one whole packet
            at += n;
        }
    });

    g.add_parallel("map", ranges, {{partials, 1}}, [&st](graph::instance_context& ctx) {
        for (std::size_t i = 0; i < ctx.size(); ++i) {   // one range per instance
            const pixel_range& r = ctx.in<pixel_range>(i);
            const rgb* px = st.img.pixels.data() + r.first;
            const std::size_t n = static_cast<std::size_t>(r.count);
            for (std::size_t b = 0; b < n; b += st.opt.block) {
                partial_histogram h{};
                count_pixels(px + b, std::min<std::size_t>(st.opt.block, n - b), h.count);
                ctx.push(0, h);
            }
        }
    });

    graph::queue_id reduce_from = partials;
    if (st.opt.combine) {
        reduce_from = g.add_queue<partial_histogram>("combined", {.packet_elements = 1,
                                                                  .capacity_packets = application_capacity,
                                                                  .ordered = false});
        g.add_parallel("combine", partials, {{reduce_from, 1}}, [](graph::instance_context& ctx) {
            partial_histogram sum{};
            for (std::size_t i = 0; i < ctx.size(); ++i) {
                const partial_histogram& h = ctx.in<partial_histogram>(i);
                for (std::size_t b = 0; b < bins; ++b) sum.count[b] += h.count[b];
            }
            ctx.push(0, sum);
        });
    }

    g.add_serial("reduce", {reduce_from}, {}, [&st](graph::thread_context& ctx) -> graph::stage_task {
        for (;;) {
            graph::pop_window w = co_await ctx.pop(0);
            if (!w) break;
            for (std::size_t i = 0; i < w.size(); ++i) {
                const partial_histogram& h = w.at<partial_histogram>(i);
                for (std::size_t b = 0; b < bins; ++b) st.result[b] += h.count[b];
                ++st.reduced;
            }
            ctx.commit(w);
        }
    });
    return g;
}

class histogram_workload final : public workload {
public:
    std::string name() const override { return "histogram"; }
    std::string summary() const override {
        return "Phoenix image histogram as map-reduce: map partial histograms, optional parallel combine, "
               "serial reduce (seed 004 §V-A hist-r / hist-c)";
    }
    std::string parameters() const override {
        return "combine=on: a parallel combine stage sums each packet of partials before the serial reduce (off: "
               "reduce-only)\n"
               "block=" +
               std::to_string(default_block) +
               ": pixels per partial histogram (16 to 2^20)\n"
               "packet=<by size: tiny " +
               std::to_string(tiny_packet) + ", small and large " + std::to_string(default_packet) +
               ">: pixels per packet, i.e. per map instance (1 to 2^20, at most 64 blocks); its ceil(packet/block) "
               "partials are one combine instance. Replaces blocks (packet = block × blocks); 32768 pixels are "
               "about 32 µs of map work\n" +
               capacity_parameter(std::to_string(application_capacity) + " packets per queue", "no other bound") + "\n" +
               graph_policy_parameters();
    }
    bool is_graph() const override { return true; }

    run_report run(scheduler& s, run_request& request) const override {
        histogram_state st;
        st.opt = take_options(request.params, request.size);
        const dimensions d = dimensions_for(request.size);
        st.img = make_image(d.width, d.height, request.seed);
        const graph::program g = build_graph(st);

        histogram reference{};
        run_report report;
        run_graph_workload(
            name(), s, request, request.params, g,
            [&] { count_pixels(st.img.pixels.data(), st.img.pixels.size(), reference); },
            [&] {
                st.result.fill(0);
                st.reduced = 0;
            },
            report, {st.opt.capacity, {}});

        const std::uint64_t pixels = st.img.pixels.size();
        const std::uint64_t blocks = partials_for(st.opt, pixels);
        const std::uint64_t packets = (pixels + st.opt.packet - 1) / st.opt.packet;
        // Exact bins, and the reduce added one histogram per block (reduce-only) or per packet (combine).
        report.matches_reference = st.result == reference && st.reduced == (st.opt.combine ? packets : blocks);
        report.description = "3×256-bin histogram of a " + std::to_string(d.width) + "×" + std::to_string(d.height) +
                             " image: " + std::to_string(blocks) + " partials in " + std::to_string(packets) +
                             " packets, reduce added " + std::to_string(st.reduced) +
                             (st.opt.combine ? " combined histograms" : " partials");
        return report;
    }

    program_info program(const run_request& request) const override {
        param_set params = request.params;
        histogram_state st;
        st.opt = take_options(params, request.size);
        const graph::program g = build_graph(st);
        std::vector<std::string> notes = {"hands out ranges of " + std::to_string(st.opt.packet) + " pixels, one per packet",
                                          "reads its range of the image and counts each block into a partial histogram; "
                                          "one packet of partials"};
        if (st.opt.combine) notes.push_back("sums one packet of partials into one histogram");
        notes.push_back(st.opt.combine ? "adds the combined histograms" : "adds every partial histogram");
        return describe_graph(g, request,
                              st.opt.combine ? "map-reduce with a combine stage (hist-c): a chain"
                                             : "map-reduce, reduce-only (hist-r): a chain",
                              notes, {st.opt.capacity, {}});
    }
};

}   // namespace

const workload& histogram_map_reduce() {
    static const histogram_workload w;
    return w;
}

}   // namespace pipescope::workloads
