// `ray-0` and `ray-1`: the packetized ray tracer of seed 004 §V-A as named workloads. ray-0 traces
// no reflection bounces (a pipeline); ray-1 traces `bounces` of them (default 1) through the graph's
// cycle. Both check the graph's frame buffer bit for bit against the serial reference.
#include "description.hpp"
#include "ray_scene.hpp"

#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/workloads/graph_workload.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace pipescope::workloads {

namespace {

class ray_workload final : public workload {
public:
    explicit ray_workload(bool bouncing) : bouncing_(bouncing) {}

    std::string name() const override { return bouncing_ ? "ray-1" : "ray-0"; }
    std::string summary() const override {
        return bouncing_
                   ? "packetized ray tracer with reflection bounces: a graph with a cycle (seed 004 Fig. 1, §V-A ray-1)"
                   : "packetized ray tracer without reflections: a pipeline graph (seed 004 Fig. 1, §V-A ray-0)";
    }
    std::string parameters() const override {
        std::string p = "width=<by size: tiny 64, small 256, large 1024>: image width in pixels\n"
                        "height=<by size: tiny 64, small 256, large 768>: image height in pixels\n"
                        "samples=<by size: tiny 8, small 4, large 2>: camera rays per pixel\n"
                        "spheres=<by size: tiny 48, small 128, large 256>: spheres in the scene (placed by --seed)\n";
        if (bouncing_) p += "bounces=1: reflection depth (1-8)\n";
        p += "packet=<by size: tiny " + std::to_string(ray::tiny_ray_packet) + ", small and large " +
             std::to_string(ray::default_ray_packet) +
             ">: rays per packet in every ray queue, and camera paths per tile (1-" + std::to_string(ray::max_ray_packet) +
             "); GRAMPS used 32 for SIMD (seed 004 §II-C); 256 is about 43 µs of work per packet at size large\n";
        p += capacity_parameter("tiles 4, rays 8 (camera reserves 2), hits, shadow rays and samples 4 packets",
                                bouncing_
                                    ? "N at least 2 (camera reserves 2 packets of rays at once, seed 004 Fig. 1's cycle)"
                                    : "no other bound") +
             "\n";
        p += "out=: write the image as a binary PPM (P6) to this path\n";
        return p + graph_policy_parameters();
    }
    bool is_graph() const override { return true; }

    run_report run(scheduler& s, run_request& request) const override {
        const ray::settings cfg = settings_from(request, request.params);
        const queue_sizing sizing{take_capacity(request.params), {}};
        const std::optional<std::string> out = request.params.take_string("out");
        if (out) check_writable(*out);

        const ray::render_setup setup(cfg);
        ray::graph_state state;
        state.reset(setup);
        const graph::program g = ray::build_graph(state, cfg.bounces, cfg.packet);
        ray::frame reference;
        run_report report;
        run_graph_workload(
            name(), s, request, request.params, g, [&] { reference = ray::render_serial(setup, request.cancel); },
            [&] { state.reset(setup); }, report, sizing);

        // Every ray's contribution bit for bit, and so the image byte for byte.
        const std::vector<std::uint8_t> image = state.output.image();
        report.matches_reference = !report.stats.cancelled && state.output.same_as(reference) && image == reference.image();
        if (out) ray::write_ppm(*out, cfg.width, cfg.height, image);
        const std::uint64_t rays = state.output.rays(), reflected = state.output.reflected_rays();
        report.description =
            fmt::format("{}×{} pixels, {} samples/pixel, {} spheres, {}-ray packets, {} bounce{}: {} rays traced ({} "
                        "camera, {} reflected), image checksum {:016x}{}",
                        cfg.width, cfg.height, cfg.samples, cfg.spheres, cfg.packet, cfg.bounces,
                        cfg.bounces == 1 ? "" : "s", thousands(rays), thousands(rays - reflected), thousands(reflected),
                        ray::checksum(image), out ? ", written to " + *out : "");
        return report;
    }

    program_info program(const run_request& request) const override {
        param_set params = request.params;   // a copy: the run takes its own
        const ray::settings cfg = settings_from(request, params);
        const queue_sizing sizing{take_capacity(params), {}};
        ray::graph_state state;   // the bodies never run here
        const graph::program g = ray::build_graph(state, cfg.bounces, cfg.packet);
        return describe_graph(g, request,
                              bouncing_ ? "fixed graph with a cycle: shade feeds reflection rays back to intersect"
                                        : "fixed pipeline: tiler, camera, intersect, shade, shadow intersect, frame buffer",
                              ray::graph_stage_notes(cfg.bounces, cfg.packet), sizing);
    }

private:
    ray::settings settings_from(const run_request& request, param_set& params) const {
        ray::settings c;
        c.width = static_cast<std::uint32_t>(params.take_uint("width", pick(request.size, 64, 256, 1024), 1, 8192));
        c.height = static_cast<std::uint32_t>(params.take_uint("height", pick(request.size, 64, 256, 768), 1, 8192));
        c.samples = static_cast<std::uint32_t>(params.take_uint("samples", pick(request.size, 8, 4, 2), 1, 256));
        c.spheres = static_cast<std::uint32_t>(params.take_uint("spheres", pick(request.size, 48, 128, 256), 0, 100000));
        c.bounces = bouncing_ ? static_cast<std::uint32_t>(params.take_uint("bounces", 1, 1, 8)) : 0;
        c.packet = static_cast<std::uint32_t>(
            params.take_uint("packet",
                             pick(request.size, ray::tiny_ray_packet, ray::default_ray_packet, ray::default_ray_packet),
                             ray::min_ray_packet, ray::max_ray_packet));
        c.seed = request.seed;
        // The frame-size check of render_setup, before anything runs (and named after the workload).
        const std::uint64_t slots = std::uint64_t{c.width} * c.height * c.samples * (std::uint64_t{c.bounces} + 1);
        if (slots > (std::uint64_t{1} << 26))
            throw std::invalid_argument(name() + ": width × height × samples × (bounces + 1) = " + thousands(slots) +
                                        " ray slots; at most 67,108,864");
        return c;
    }

    void check_writable(const std::string& path) const {
        namespace fs = std::filesystem;
        const fs::path p(path);
        std::error_code ec;
        if (fs::is_directory(p, ec))
            throw std::invalid_argument(name() + ": --param out=" + path + " is a directory, not a file path");
        const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
        if (!fs::is_directory(dir, ec))
            throw std::invalid_argument(name() + ": --param out=" + path + ": the directory '" + dir.string() +
                                        "' does not exist");
        // A device, a FIFO or a symbolic link there is refused too (trace/atomic_output.hpp).
        try {
            trace::check_output_path(p);
        } catch (const trace::output_path_error& e) {
            throw trace::output_path_error(name() + ": --param out=" + path + ": " + e.what());
        }
        // Open it now (appending, so an existing file keeps its content until the image replaces it)
        // rather than find out after rendering; a file made just for the test goes away again.
        const bool existed = fs::exists(p, ec);
        const bool ok = static_cast<bool>(std::ofstream(path, std::ios::binary | std::ios::app));
        if (!existed) fs::remove(p, ec);
        if (!ok)
            throw std::invalid_argument(name() + ": --param out=" + path + ": cannot open it for writing (" +
                                        std::strerror(errno) + ")");
    }

    static std::uint64_t pick(input_size s, std::uint64_t tiny, std::uint64_t small, std::uint64_t large) {
        switch (s) {
            case input_size::tiny: return tiny;
            case input_size::small: return small;
            case input_size::large: return large;
        }
        return small;
    }

    bool bouncing_;
};

}   // namespace

const workload& ray_tracer_0() {
    static const ray_workload w(false);
    return w;
}
const workload& ray_tracer_1() {
    static const ray_workload w(true);
    return w;
}

}   // namespace pipescope::workloads
