// fm-radio (StreamIt's FMRadio as a stage graph): the graph's audio equals the serial reference bit
// for bit under every graph policy, the filters are what they claim, the receiver actually receives
// the wanted station, and bad parameters are refused.
#include <pipescope/graph/program.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/fm_radio.hpp>
#include <pipescope/workloads/workload.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <map>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

const workload& fm() {
    const workload* w = find_workload("fm-radio");
    REQUIRE(w != nullptr);
    return *w;
}

run_request request_for(const std::string& policy, std::map<std::string, std::string> params = {}) {
    run_request r;
    r.policy = policy;
    r.size = input_size::tiny;
    r.seed = 3;
    r.params = param_set(std::move(params));
    return r;
}

// |DFT| of x at frequency hz (x sampled at rate).
double magnitude_at(const std::vector<float>& x, double hz, double rate) {
    std::complex<double> sum = 0;
    for (std::size_t n = 0; n < x.size(); ++n)
        sum += static_cast<double>(x[n]) * std::polar(1.0, -2.0 * std::numbers::pi * hz * static_cast<double>(n) / rate);
    return std::abs(sum);
}

// Runs the graph directly (not through the workload) and returns what the sink collected.
std::vector<float> run_graph(std::size_t samples, std::size_t bands, std::size_t taps, std::uint64_t seed,
                             const std::string& policy, unsigned workers, graph::run_stats* stats = nullptr,
                             std::size_t packet = fm_default_packet) {
    fm_radio_state st;
    st.design = design_fm_radio(bands, taps);
    st.samples = samples;
    st.seed = seed;
    st.packet = packet;
    st.capacity = std::max(fm_default_capacity, fm_min_capacity(taps, packet));
    const graph::program g = build_fm_radio_graph(st);
    scheduler s({workers});
    graph::run_options o;
    o.policy = policy;
    const graph::run_stats r = graph::run(s, g, o);
    if (stats) *stats = r;
    return st.audio;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return false;
    return true;
}

}   // namespace

TEST_CASE("fm-radio at tiny size matches its serial reference under every graph policy", "[graph][workloads][fm-radio]") {
    for (const auto& p : graph::policies()) {
        for (unsigned workers : {1u, 2u}) {
            INFO("policy " << p.name << ", P = " << workers);
            scheduler s({workers});
            run_request r = request_for(p.name);
            const run_report report = fm().run(s, r);
            CHECK(report.matches_reference);
            REQUIRE(report.graph.has_value());
            CHECK(report.description.find("196,608 antenna samples") != std::string::npos);
            // 7 + 4·10 stages, 5 + 6·10 queues; bounded queues never exceed their capacity.
            CHECK(report.graph->queues.size() == 65);
            for (const auto& q : report.graph->queues)
                if (!q.unbounded) CHECK(q.stats.peak_packets_in_use <= q.capacity_packets);
        }
    }
}

TEST_CASE("fm-radio's graph has the StreamIt FMRadio structure", "[graph][workloads][fm-radio]") {
    fm_radio_state st;
    st.design = design_fm_radio(10, 64);
    const graph::program g = build_fm_radio_graph(st);
    g.validate();
    CHECK(g.stages().size() == 47);
    CHECK(g.queues().size() == 65);
    // The source only hands out ranges; the antenna samples are made by a parallel stage.
    REQUIRE(g.stages()[0].name == "sampler");
    CHECK(g.stages()[0].kind == graph::stage_kind::serial);
    REQUIRE(g.stages()[1].name == "antenna");
    CHECK(g.stages()[1].kind == graph::stage_kind::parallel);
    CHECK(g.queues()[g.stages()[1].outputs.at(0).queue].name == "antenna");
    // The duplicate splitter is a parallel stage (DANBI's FMRadio: every kernel but the source and
    // the sink is parallel) writing the 2·10 band inputs; the serial stages are the sampler, the
    // lockstep readers (10 subtracts and the join) and the sink.
    std::size_t serial = 0, splitters = 0;
    for (const auto& s : g.stages()) {
        serial += s.kind == graph::stage_kind::serial ? 1 : 0;
        if (s.name != "split") continue;
        ++splitters;
        CHECK(s.kind == graph::stage_kind::parallel);
        CHECK(s.outputs.size() == 2 * 10);
    }
    CHECK(splitters == 1);
    CHECK(serial == 1 + 10 + 1 + 1);
    std::size_t peeking = 0, ordered = 0;
    for (const auto& s : g.stages()) {
        if (s.peek > 0) ++peeking;
        // Every queue a parallel stage writes is ordered (instances finish out of order).
        if (s.kind == graph::stage_kind::parallel)
            for (const auto& o : s.outputs) CHECK(g.queues()[o.queue].shape.ordered);
    }
    for (const auto& q : g.queues()) ordered += q.shape.ordered ? 1 : 0;
    CHECK(peeking == 2 + 2 * 10);                 // channel filter, demodulator, 20 band filters
    CHECK(ordered == 3 + 2 * 10 + 2 * 10 + 10);   // antenna, channel, audio; per band 2 + 2 + 1
    CHECK(fm_radio_stage_notes(st.design).size() == g.stages().size());
    const program_info info = fm().program(request_for("graph-serial", {{"bands", "3"}}));
    CHECK(info.kind == "graph");
    CHECK(info.stages.size() == 7 + 4 * 3);
    CHECK(info.queues.size() == 5 + 6 * 3);
}

TEST_CASE("fm-radio's stream tails follow StreamIt's firing rule in the graph and the reference",
          "[graph][workloads][fm-radio]") {
    // Lengths around packet and window boundaries, short streams that make no audio at all, and
    // long filters whose peek spans several packets.
    struct shape {
        std::size_t samples, bands, taps;
    };
    const shape shapes[] = {{0, 2, 16},        {1, 1, 4},       {300, 2, 64}, {600, 2, 64},  {4096, 3, 64},
                            {4096 + 3, 2, 64}, {10000, 2, 256}, {7777, 1, 5}, {20000, 4, 17}};
    for (const auto& p : graph::policies()) {
        for (const shape& sh : shapes) {
            INFO("policy " << p.name << ", samples " << sh.samples << ", bands " << sh.bands << ", taps " << sh.taps);
            const fm_radio_design d = design_fm_radio(sh.bands, sh.taps);
            const std::vector<float> reference = fm_radio_reference(d, sh.samples, 11);
            const std::size_t channel = fir_outputs(sh.samples, sh.taps, fm_decimation);
            const std::size_t audio = fir_outputs(channel, 2, 1);
            CHECK(reference.size() == fir_outputs(audio, sh.taps, 1));
            CHECK(same_bits(run_graph(sh.samples, sh.bands, sh.taps, 11, p.name, 2), reference));
        }
    }
    CHECK(fir_outputs(63, 64, 4) == 0);
    CHECK(fir_outputs(64, 64, 4) == 1);
    CHECK(fir_outputs(67, 64, 4) == 1);
    CHECK(fir_outputs(68, 64, 4) == 2);
    // A full packet with a full peek makes a full packet of outputs; at the end, only what fits.
    CHECK(window_outputs(256, 63, 64, 4) == 64);
    CHECK(window_outputs(256, 10, 64, 4) == 51);   // m·4 + 64 <= 266
    CHECK(window_outputs(5, 0, 2, 1) == 4);
}

TEST_CASE("fm-radio's parallel antenna stage delivers the samples in stream order under every policy",
          "[graph][workloads][fm-radio]") {
    // The sampler hands out ranges; antenna instances make their samples in parallel and may finish
    // in any order, but their ordered output must carry the stream in index order: the channel
    // filter peeks across packets, so a packet out of place changes the audio. Packet sizes: one
    // sample (4 per antenna packet, the most instances), odd sizes whose peek spans packets, and
    // large packets with a short last range; P = 4 on this machine puts more instances in flight
    // than there are cores. Checked bit for bit against the serial reference.
    const std::size_t samples = 12000 + 5, bands = 2, taps = 17;
    const fm_radio_design d = design_fm_radio(bands, taps);
    const std::vector<float> reference = fm_radio_reference(d, samples, 21);
    REQUIRE(!reference.empty());
    for (const auto& p : graph::policies()) {
        for (unsigned workers : {1u, 2u, 4u}) {
            for (std::size_t packet : {1u, 7u, 37u, 64u, 1000u}) {
                INFO("policy " << p.name << ", P = " << workers << ", packet " << packet);
                graph::run_stats stats;
                CHECK(same_bits(run_graph(samples, bands, taps, 21, p.name, workers, &stats, packet), reference));
                // One antenna instance per range: ceil(samples / (4·packet)) of them at least.
                CHECK(stats.instances >= (samples + fm_decimation * packet - 1) / (fm_decimation * packet));
            }
        }
    }
}

TEST_CASE("fm-radio's low-pass filters have unit DC gain, exact symmetry and a stopband", "[graph][workloads][fm-radio]") {
    for (std::size_t taps : {4u, 5u, 17u, 64u, 255u, 256u}) {
        for (double cutoff : {1000.0, 6000.0, 20000.0}) {
            INFO("taps " << taps << ", cutoff " << cutoff);
            const std::vector<float> h = design_lowpass(taps, cutoff, 48000.0);
            REQUIRE(h.size() == taps);
            double dc = 0;
            for (float v : h) dc += v;
            CHECK(std::abs(dc - 1.0) < 1e-6);
            for (std::size_t k = 0; k < taps; ++k) CHECK(h[k] == h[taps - 1 - k]);
        }
    }
    // A 64-tap filter at 2 kHz passes 500 Hz and blocks 8 kHz (Hamming: better than 40 dB).
    const std::vector<float> h = design_lowpass(64, 2000.0, 48000.0);
    auto gain = [&](double hz) {
        std::complex<double> s = 0;
        for (std::size_t k = 0; k < h.size(); ++k)
            s += static_cast<double>(h[k]) * std::polar(1.0, -2.0 * std::numbers::pi * hz * k / 48000.0);
        return std::abs(s);
    };
    CHECK(gain(500.0) > 0.9);
    CHECK(gain(500.0) < 1.1);
    CHECK(gain(8000.0) < 0.01);
    // The equalizer's bands are contiguous: band b's upper edge is band b+1's lower edge.
    const fm_radio_design d = design_fm_radio(10, 64);
    REQUIRE(d.edges.size() == 11);
    CHECK(d.edges.front() == Approx(fm_equalizer_low));
    CHECK(d.edges.back() == Approx(fm_equalizer_high));
    for (std::size_t b = 0; b + 1 < 10; ++b) CHECK(d.band_high[b] == d.band_low[b + 1]);
    CHECK_THROWS_AS(design_lowpass(1, 1000.0, 48000.0), std::invalid_argument);
    CHECK_THROWS_AS(design_lowpass(16, 24000.0, 48000.0), std::invalid_argument);
}

TEST_CASE("fm-radio receives the wanted station: its strongest tone dominates the audio", "[graph][workloads][fm-radio]") {
    // The graph's own output (run under the first policy), 4096 samples after the filters settled.
    const std::vector<float> audio = run_graph(65536, 10, 64, 5, graph::policies().front().name, 2);
    REQUIRE(audio.size() > 4096 + 1000);
    const std::vector<float> x(audio.begin() + 1000, audio.begin() + 1000 + 4096);
    // The strongest DFT bin, 50 Hz .. 20 kHz.
    const double bin = fm_audio_rate / 4096.0;
    double best = 0, best_hz = 0;
    for (std::size_t k = static_cast<std::size_t>(50 / bin); k < static_cast<std::size_t>(20000 / bin); ++k) {
        const double m = magnitude_at(x, k * bin, fm_audio_rate);
        if (m > best) {
            best = m;
            best_hz = k * bin;
        }
    }
    const fm_tone strongest = fm_wanted_tones().front();
    for (const fm_tone& t : fm_wanted_tones()) REQUIRE(t.amplitude <= strongest.amplitude);
    CHECK(std::abs(best_hz - strongest.hz) <= 2 * bin);
    // The second tone is there too, and the adjacent station's tone (as loud at the antenna) is not:
    // the channel filter removed it before demodulation.
    const double second = magnitude_at(x, fm_wanted_tones()[1].hz, fm_audio_rate);
    const double adjacent = magnitude_at(x, fm_adjacent_tones().front().hz, fm_audio_rate);
    CHECK(second > 0.2 * best);
    CHECK(adjacent < 0.02 * best);
    // Different seeds: different phases and noise, different audio.
    CHECK_FALSE(
        same_bits(fm_radio_reference(design_fm_radio(2, 16), 4000, 1), fm_radio_reference(design_fm_radio(2, 16), 4000, 2)));
}

TEST_CASE("fm-radio refuses bad parameters with a message naming them", "[graph][workloads][fm-radio]") {
    const std::string policy = graph::policies().front().name;
    auto refused = [&](std::map<std::string, std::string> params, const std::string& expect) {
        INFO(expect);
        scheduler s({1});
        run_request r = request_for(policy, std::move(params));
        try {
            fm().run(s, r);
            FAIL("accepted");
        } catch (const std::invalid_argument& e) {
            CHECK(std::string(e.what()).find(expect) != std::string::npos);
        }
    };
    refused({{"bands", "0"}}, "bands=0");
    refused({{"bands", "33"}}, "bands=33");
    refused({{"taps", "3"}}, "taps=3");
    refused({{"taps", "257"}}, "taps=257");
    refused({{"taps", "sixty"}}, "taps=sixty");
    refused({{"samples", "-5"}}, "samples=-5");
    refused({{"bogus", "1"}}, "bogus");
    refused({{"capacity", "2"}}, "capacity=2");   // a 64-tap filter needs 3
    // With 64-sample packets a 256-tap filter peeks 4 packets: it needs 6.
    refused({{"taps", "256"}, {"packet", "64"}, {"capacity", "5"}}, "capacity=5");
    refused({{"packet", "1"}, {"capacity", "64"}}, "capacity=64");   // 63 one-sample packets of peek: 65
    refused({{"packet", "0"}}, "--param packet=0: must be between 1 and 16384");
    refused({{"packet", "16385"}}, "packet=16385");
    fm_radio_state st;
    st.design = design_fm_radio(2, 200);
    st.packet = 64;
    st.capacity = 4;
    CHECK_THROWS_AS(build_fm_radio_graph(st), std::invalid_argument);
    st.capacity = fm_min_capacity(200, 64);
    CHECK(st.capacity == 6);
    CHECK_NOTHROW(build_fm_radio_graph(st).validate());
    CHECK(fm_min_capacity(200, 512) == 3);
    CHECK(fm_min_capacity(64, 1) == 65);
    st.packet = 0;
    CHECK_THROWS_AS(build_fm_radio_graph(st), std::invalid_argument);
    CHECK_THROWS_AS(design_fm_radio(0, 64), std::invalid_argument);
    CHECK_THROWS_AS(design_fm_radio(10, 300), std::invalid_argument);
    CHECK_FALSE(fm().cannot_run_under("piper").empty());
    CHECK(fm().cannot_run_under(policy).empty());
}
