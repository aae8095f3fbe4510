// `fm-radio` as a named workload: the stage graph of fm_radio_graph.cpp against the serial
// reference of fm_radio_dsp.cpp, compared sample by sample, bit for bit.
#include <pipescope/workloads/fm_radio.hpp>
#include <pipescope/workloads/graph_workload.hpp>
#include <pipescope/workloads/workload.hpp>

#include "description.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace pipescope::workloads {

namespace {

constexpr std::uint64_t max_samples = 20'000'000;

std::size_t default_samples(input_size s) {
    switch (s) {
        case input_size::tiny: return 196608;
        case input_size::small: return 524288;
        case input_size::large: return 5'000'000;
    }
    return 524288;
}

// Bit patterns, so that -0 against +0 or two NaNs are told apart rather than compared as numbers.
bool identical(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return false;
    return true;
}

struct fm_params {
    std::size_t samples, bands, taps, packet;
    std::optional<std::size_t> capacity;   // --param capacity; else the policy's rule
};

fm_params take_params(param_set& params, input_size size) {
    fm_params p;
    p.samples = params.take_uint("samples", default_samples(size), 0, max_samples);
    p.bands = params.take_uint("bands", fm_default_bands, fm_min_bands, fm_max_bands);
    p.taps = params.take_uint("taps", fm_default_taps, fm_min_taps, fm_max_taps);
    p.packet = params.take_uint("packet", size == input_size::large ? fm_large_packet : fm_default_packet, fm_min_packet,
                                fm_max_packet);
    p.capacity = take_capacity(params, fm_max_capacity);
    if (const std::size_t least = fm_min_capacity(p.taps, p.packet); p.capacity && *p.capacity < least)
        throw std::invalid_argument("--param capacity=" + std::to_string(*p.capacity) +
                                    ": fm-radio's queues need at least " + std::to_string(least) + " packets: a " +
                                    std::to_string(p.taps) + "-tap filter peeks " + std::to_string(p.taps - 1) +
                                    " samples past its packet of " + std::to_string(p.packet) +
                                    " and its producer needs a free packet meanwhile");
    return p;
}

// The application's capacity (GRAMPS' rule), or the one asked for; the graph refuses one below the
// peeking filters' minimum, saying why.
std::size_t declared_capacity(const fm_params& p) {
    return p.capacity.value_or(std::max(fm_default_capacity, fm_min_capacity(p.taps, p.packet)));
}

// Whatever a policy's rule says, every queue keeps the peeking filters' minimum.
queue_sizing sizing_of(const fm_params& p, const graph::program& g) {
    return {p.capacity, std::vector<std::size_t>(g.queues().size(), fm_min_capacity(p.taps, p.packet))};
}

class fm_radio_workload final : public workload {
public:
    std::string name() const override { return "fm-radio"; }
    std::string summary() const override {
        return "FM receiver + multi-band equalizer (StreamIt FMRadio; seed 004 §V-A fm, seed 002 Table II): "
               "peeking FIR stages on ordered queues, 7 + 4·bands stages";
    }
    std::string parameters() const override {
        return "samples=<by size: tiny 196608, small 524288, large 5000000>: antenna samples (192 kHz complex)\n"
               "bands=10: equalizer bands, 1 to 32 (4 stages each)\n"
               "taps=64: taps of every FIR filter, 4 to 256 (the filters peek taps-1 samples)\n"
               "packet=<by size: tiny and small " +
               std::to_string(fm_default_packet) + ", large " + std::to_string(fm_large_packet) +
               ">: audio samples per packet, 1 to " + std::to_string(fm_max_packet) +
               " (antenna packets hold 4× as many); at 1024 a FIR instance is 20-39 µs of work (StreamIt and DANBI "
               "fire filters per sample: seed 002 §II, §IV-A)\n" +
               capacity_parameter(std::to_string(fm_default_capacity) + " packets per queue",
                                  "every rule and N at least 2 + ceil((taps-1)/packet): a FIR filter peeks taps-1 "
                                  "samples past its packet and its producer needs a free packet meanwhile",
                                  fm_max_capacity) +
               "\n" + graph_policy_parameters();
    }
    bool is_graph() const override { return true; }

    run_report run(scheduler& s, run_request& request) const override {
        const fm_params p = take_params(request.params, request.size);
        fm_radio_state st;
        st.design = design_fm_radio(p.bands, p.taps);
        st.samples = p.samples;
        st.capacity = declared_capacity(p);
        st.packet = p.packet;
        st.seed = request.seed;
        const graph::program g = build_fm_radio_graph(st);

        run_report report;
        std::vector<float> reference;
        run_graph_workload(
            name(), s, request, request.params, g, [&] { reference = fm_radio_reference(st.design, st.samples, st.seed); },
            [&] {
                st.audio.clear();
                st.audio.reserve(reference.size());
            },
            report, sizing_of(p, g));
        report.matches_reference = !report.stats.cancelled && identical(st.audio, reference);
        report.description = fmt::format(
            "{} antenna samples (192 kHz) -> {} audio samples (48 kHz), {}-band equalizer, {}-tap filters, {} stages, "
            "{}-sample packets",
            thousands(p.samples), thousands(st.audio.size()), p.bands, p.taps, g.stages().size(), p.packet);
        return report;
    }

    program_info program(const run_request& request) const override {
        param_set params = request.params;   // a copy: run() takes them
        const fm_params p = take_params(params, request.size);
        fm_radio_state st;
        st.design = design_fm_radio(p.bands, p.taps);
        st.capacity = declared_capacity(p);
        st.packet = p.packet;
        const graph::program g = build_fm_radio_graph(st);
        return describe_graph(
            g, request,
            "fixed stage graph: sampler -> antenna (parallel: the samples of a range) -> channel filter -> demodulate -> split -> " +
                std::to_string(p.bands) +
                " × (upper/lower low-pass -> subtract -> gain) -> join -> sink; FIR stages peek "
                "taps-1 samples; queues written by parallel stages are ordered",
            fm_radio_stage_notes(st.design), sizing_of(p, g));
    }
};

}   // namespace

const workload& fm_radio() {
    static const fm_radio_workload w;
    return w;
}

}   // namespace pipescope::workloads
