// fm-radio: an FM receiver with a multi-band equalizer, StreamIt's FMRadio (seed 004 §V-A "fm";
// seed 002 Table II "FMRadio") as a stage graph with peeking FIR filters on ordered queues.
//
//   sampler (serial source: hands out ranges of antenna sample indices, one antenna packet each)
//   -> antenna (parallel: the complex baseband samples of a range — the wanted station at 0 Hz, an
//      adjacent one at +75 kHz — into an ordered queue, so they arrive in stream order)
//   -> channel filter (parallel: low-pass FIR, decimation 4, peeks taps-1 samples)
//   -> FM demodulator (parallel: polar discriminator on consecutive samples, peeks 1 sample)
//   -> duplicate split (serial: copies every packet, whole, to the 2·B band filters)
//   -> per band b: low-pass(e_{b+1}) and low-pass(e_b) (parallel, peek taps-1), subtract (serial:
//      reads both in lockstep, StreamIt's BandPassFilter), gain g_b (parallel)
//   -> join (serial: reads the B bands in lockstep and sums them in band order) -> sink (serial)
//
// Stream semantics (StreamIt's "a filter fires only with enough input"): a FIR with T taps and
// decimation D reading L samples makes output m from x[m·D .. m·D+T-1] for every m with
// m·D + T <= L, i.e. fir_outputs(L, T, D) outputs; the demodulator is the same with T = 2, D = 1.
// The last samples of a finite stream that cannot fill a window make no output: there is no zero
// padding. A graph instance sees its packet plus peek_size() samples after it; at the end of the
// stream peek_size() is shorter, and window_outputs() gives exactly the outputs whose windows fit.
//
// The graph and the serial reference call the same arithmetic kernels below (one compiled copy each),
// in the same order per output sample, so their outputs are bit-identical.
#pragma once

#include <pipescope/graph/program.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::workloads {

// One complex baseband sample (in-phase, quadrature).
struct iq_sample {
    float i = 0, q = 0;
};

inline constexpr double fm_input_rate = 192000.0;                        // antenna samples per second
inline constexpr std::size_t fm_decimation = 4;                          // channel filter keeps every 4th output
inline constexpr double fm_audio_rate = fm_input_rate / fm_decimation;   // 48 kHz
inline constexpr double fm_channel_cutoff = 20000.0;                     // Hz, at the input rate
inline constexpr double fm_deviation = 8000.0;                           // peak frequency deviation, Hz
inline constexpr double fm_adjacent_offset = 75000.0;                    // the other station, Hz
inline constexpr double fm_equalizer_low = 1000.0;                       // lowest band edge, Hz
inline constexpr double fm_equalizer_high = 12000.0;                     // highest band edge, Hz

inline constexpr std::size_t fm_min_bands = 1, fm_max_bands = 32, fm_default_bands = 10;
inline constexpr std::size_t fm_min_taps = 4, fm_max_taps = 256, fm_default_taps = 64;

// An audio tone of a station's program: amplitude × sin(2π·hz·t + phase).
struct fm_tone {
    double hz = 0, amplitude = 0;
};
// The tones the wanted station (at 0 Hz) and the adjacent station broadcast. The seed changes
// their phases and the receiver noise, not their frequencies.
const std::vector<fm_tone>& fm_wanted_tones();
const std::vector<fm_tone>& fm_adjacent_tones();

// The antenna: sample n of the complex baseband, computed from closed formulas (the phase of an FM
// signal carrying sines is a sum of cosines), so any sample can be computed alone.
class fm_antenna {
public:
    explicit fm_antenna(std::uint64_t seed);
    iq_sample sample(std::uint64_t n) const;

private:
    std::vector<double> wanted_phase_, adjacent_phase_;
    std::uint64_t seed_;
};

// A windowed-sinc (Hamming) low-pass FIR with `taps` coefficients, cutoff in Hz at `rate` Hz,
// normalised to DC gain 1 and exactly symmetric. Throws std::invalid_argument on taps < 2 or a
// cutoff outside (0, rate/2).
std::vector<float> design_lowpass(std::size_t taps, double cutoff_hz, double rate_hz);

// Every coefficient of the receiver.
struct fm_radio_design {
    std::size_t bands = 0, taps = 0;
    std::vector<float> channel;                  // low-pass at fm_channel_cutoff, input rate
    std::vector<double> edges;                   // bands + 1 edges, log-spaced, Hz
    std::vector<std::vector<float>> band_high;   // band b: low-pass at edges[b + 1], audio rate
    std::vector<std::vector<float>> band_low;    // band b: low-pass at edges[b], audio rate
    std::vector<float> gains;                    // band b's gain (a gentle treble cut, 1.25 .. 0.75)
};
// Throws std::invalid_argument naming the parameter when bands or taps is out of range.
fm_radio_design design_fm_radio(std::size_t bands, std::size_t taps);

// How many outputs a filter with `taps` taps and decimation `decimation` makes from a stream of
// `available` samples (StreamIt firing rule, see above).
std::size_t fir_outputs(std::size_t available, std::size_t taps, std::size_t decimation);
// How many of those outputs belong to a packet of n samples followed by `peek` readable samples:
// outputs m with m·D < n (their window starts in the packet) and m·D + taps <= n + peek.
std::size_t window_outputs(std::size_t n, std::size_t peek, std::size_t taps, std::size_t decimation);

// The kernels, shared by the graph's stages and the serial reference. x holds every sample the
// outputs read (outputs-1)·D + taps at least.
void fir_decimate(const iq_sample* x, const float* h, std::size_t taps, std::size_t decimation, iq_sample* out,
                  std::size_t outputs);
void fir_filter(const float* x, const float* h, std::size_t taps, float* out, std::size_t outputs);
// out[m] = the instantaneous frequency between x[m] and x[m + 1], scaled so a full deviation is ±1.
void fm_demodulate(const iq_sample* x, float* out, std::size_t outputs);
float band_difference(float high, float low);              // StreamIt's Subtracter
float band_gain(float value, float gain);                  // the equalizer's amplification
float mix_bands(const float* values, std::size_t bands);   // the join: sum in band order from 0

// The whole receiver with plain loops over arrays: the audio the graph must reproduce exactly.
std::vector<float> fm_radio_reference(const fm_radio_design& d, std::size_t samples, std::uint64_t seed);

// ---------------------------------------------------------------------------------------------------
// The stage graph.

// Packets (`packet`, the workload's parameter): N audio samples per packet in every audio queue and
// fm_decimation·N antenna samples per antenna packet, so every full antenna packet makes one full
// audio packet and all packets but the last of a stream are full (a FIR's decimation phase is then 0
// at every packet start). StreamIt filters fire per sample and DANBI's kernels reserve what one
// firing needs (seed 002 §II, Listing 1; §IV-A sizes queues as max(P·T, C·T) from those rates); a
// packet here is the unit a scheduler step works on, sized so that the per-step cost is amortized.
// Measured at size large (docs/runtime.md, "Packet sizes of the graph workloads"): at 64 audio
// samples a band filter instance is about 1.4 µs of work, at 512 about 10 µs (the channel filter 20 µs),
// at 1024 about 20 µs (channel filter 39 µs), and 1024 ran fastest: the default at size large. The
// tiny and small streams (49152 and 131072 audio samples) keep the 64-sample packets: the
// thundering-herd lesson (DANBI's queue events, fm-radio at size small with 64-packet queues) needs
// streams of thousands of packets for QES to fill and drain queues — at 256 or 512 its findings
// hold in only some runs — and the footprint comparison of seed 004 Table III at size tiny needs
// streams much longer than GRAMPS' bound of 4 packets per queue. fm_default_packet is also what a
// graph built directly gets.
inline constexpr std::size_t fm_large_packet = 1024, fm_default_packet = 64;
inline constexpr std::size_t fm_min_packet = 1, fm_max_packet = 16384;
// Packets each queue holds. A FIR instance reserves its packet plus ceil((taps-1)/N) packets of
// peek, and its producer needs a free packet meanwhile to make progress: fm_min_capacity(taps, N).
inline constexpr std::size_t fm_default_capacity = 4, fm_max_capacity = 4096;
std::size_t fm_min_capacity(std::size_t taps, std::size_t packet = fm_default_packet);

// A range of antenna sample indices, [first, first + count): what the sampler hands the antenna
// stage, one per antenna packet.
struct fm_sample_range {
    std::uint64_t first = 0, count = 0;
};

// What one run reads and writes: the sink appends the equalized audio to `audio`.
struct fm_radio_state {
    fm_radio_design design;
    std::size_t samples = 0;                      // antenna samples the source emits
    std::size_t capacity = fm_default_capacity;   // packets per queue
    std::size_t packet = fm_default_packet;       // audio samples per packet (antenna: fm_decimation × as many)
    std::uint64_t seed = 1;
    std::vector<float> audio;
    // Set by the sampler from `seed` before it hands out the first range (a run's antenna stage
    // instances read it only after popping a range, so after it was set).
    std::optional<fm_antenna> antenna;
};

// The graph over `state` (which must outlive it): 7 + 4·bands stages, 5 + 6·bands queues.
graph::program build_fm_radio_graph(fm_radio_state& state);
// One note per stage, in stage order, for the trace metadata.
std::vector<std::string> fm_radio_stage_notes(const fm_radio_design& d);

}   // namespace pipescope::workloads
