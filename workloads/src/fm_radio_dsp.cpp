// fm-radio's signal processing: the antenna signal, the filter design, the arithmetic kernels every
// stage calls, and the serial reference (workloads/include/pipescope/workloads/fm_radio.hpp).
#include <pipescope/workloads/fm_radio.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace pipescope::workloads {

namespace {

constexpr double two_pi = 2.0 * std::numbers::pi;
constexpr double noise_amplitude = 0.05;     // per component, against stations of amplitude 1
constexpr double adjacent_amplitude = 1.0;   // as loud as the wanted station: the channel filter must remove it

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Phases in [0, 2π) for `count` tones, a function of the seed and a salt.
std::vector<double> tone_phases(std::uint64_t seed, std::uint64_t salt, std::size_t count) {
    std::vector<double> phases;
    for (std::size_t t = 0; t < count; ++t)
        phases.push_back(two_pi * static_cast<double>(splitmix64(seed ^ ((salt + t) * 0xD1B54A32D192ED03ull)) >> 11) /
                         9007199254740992.0);   // 2^53
    return phases;
}

// The phase of an FM signal at time t whose frequency is deviation × Σ a·sin(2π f t + θ): the
// integral 2π·deviation·∫ a·sin(2π f τ + θ) dτ = -a·deviation/f · cos(2π f t + θ), per tone.
double fm_phase(const std::vector<fm_tone>& tones, const std::vector<double>& phases, double t) {
    double phi = 0;
    for (std::size_t k = 0; k < tones.size(); ++k)
        phi -= tones[k].amplitude * fm_deviation / tones[k].hz * std::cos(two_pi * tones[k].hz * t + phases[k]);
    return phi;
}

}   // namespace

const std::vector<fm_tone>& fm_wanted_tones() {
    // Amplitudes sum to < 1 so the deviation never exceeds fm_deviation; 2.5 kHz clearly dominates.
    static const std::vector<fm_tone> tones = {{2500.0, 0.55}, {4700.0, 0.25}, {7300.0, 0.15}};
    return tones;
}

const std::vector<fm_tone>& fm_adjacent_tones() {
    static const std::vector<fm_tone> tones = {{3600.0, 0.9}};
    return tones;
}

fm_antenna::fm_antenna(std::uint64_t seed)
    : wanted_phase_(tone_phases(seed, 1, fm_wanted_tones().size())),
      adjacent_phase_(tone_phases(seed, 101, fm_adjacent_tones().size())),
      seed_(seed) {}

iq_sample fm_antenna::sample(std::uint64_t n) const {
    const double t = static_cast<double>(n) / fm_input_rate;
    const double wanted = fm_phase(fm_wanted_tones(), wanted_phase_, t);
    const double adjacent = two_pi * fm_adjacent_offset * t + fm_phase(fm_adjacent_tones(), adjacent_phase_, t);
    // Receiver noise: a hash of (seed, n), uniform in ±noise_amplitude per component.
    const std::uint64_t h = splitmix64(seed_ * 0x9E3779B97F4A7C15ull + n);
    const double ni = (static_cast<double>(h >> 40) / 16777216.0 - 0.5) * 2.0 * noise_amplitude;
    const double nq = (static_cast<double>((h >> 16) & 0xFFFFFF) / 16777216.0 - 0.5) * 2.0 * noise_amplitude;
    return {static_cast<float>(std::cos(wanted) + adjacent_amplitude * std::cos(adjacent) + ni),
            static_cast<float>(std::sin(wanted) + adjacent_amplitude * std::sin(adjacent) + nq)};
}

std::vector<float> design_lowpass(std::size_t taps, double cutoff_hz, double rate_hz) {
    if (taps < 2) throw std::invalid_argument("design_lowpass: taps = " + std::to_string(taps) + ", need at least 2");
    if (!(rate_hz > 0) || !(cutoff_hz > 0) || !(cutoff_hz < rate_hz / 2))
        throw std::invalid_argument("design_lowpass: cutoff " + std::to_string(cutoff_hz) + " Hz is not inside (0, " +
                                    std::to_string(rate_hz / 2) + ") Hz, the band of a " + std::to_string(rate_hz) +
                                    " Hz stream");
    // Windowed sinc, Hamming window. Only the first half is computed and mirrored: cos(2πk/(T-1))
    // and cos(2π(T-1-k)/(T-1)) need not round alike, and the taps must be exactly symmetric (linear
    // phase).
    const double fc = cutoff_hz / rate_hz;   // cycles per sample
    const double mid = static_cast<double>(taps - 1) / 2.0;
    std::vector<double> h(taps);
    for (std::size_t k = 0; k < (taps + 1) / 2; ++k) {
        const double t = static_cast<double>(k) - mid;
        const double sinc = t == 0 ? 2.0 * fc : std::sin(two_pi * fc * t) / (std::numbers::pi * t);
        const double window = 0.54 - 0.46 * std::cos(two_pi * static_cast<double>(k) / static_cast<double>(taps - 1));
        h[k] = h[taps - 1 - k] = sinc * window;
    }
    double sum = 0;
    for (double v : h) sum += v;
    std::vector<float> out(taps);
    for (std::size_t k = 0; k < taps; ++k) out[k] = static_cast<float>(h[k] / sum);   // DC gain 1
    return out;
}

fm_radio_design design_fm_radio(std::size_t bands, std::size_t taps) {
    if (bands < fm_min_bands || bands > fm_max_bands)
        throw std::invalid_argument("fm-radio: bands = " + std::to_string(bands) + " is outside [" +
                                    std::to_string(fm_min_bands) + ", " + std::to_string(fm_max_bands) + "]");
    if (taps < fm_min_taps || taps > fm_max_taps)
        throw std::invalid_argument("fm-radio: taps = " + std::to_string(taps) + " is outside [" +
                                    std::to_string(fm_min_taps) + ", " + std::to_string(fm_max_taps) + "]");
    fm_radio_design d;
    d.bands = bands;
    d.taps = taps;
    d.channel = design_lowpass(taps, fm_channel_cutoff, fm_input_rate);
    for (std::size_t b = 0; b <= bands; ++b)
        d.edges.push_back(fm_equalizer_low * std::pow(fm_equalizer_high / fm_equalizer_low,
                                                      static_cast<double>(b) / static_cast<double>(bands)));
    for (std::size_t b = 0; b < bands; ++b) {
        d.band_high.push_back(design_lowpass(taps, d.edges[b + 1], fm_audio_rate));
        d.band_low.push_back(design_lowpass(taps, d.edges[b], fm_audio_rate));
        const double tilt = bands == 1 ? 0.0 : static_cast<double>(b) / static_cast<double>(bands - 1);
        d.gains.push_back(static_cast<float>(1.25 - 0.5 * tilt));
    }
    return d;
}

std::size_t fir_outputs(std::size_t available, std::size_t taps, std::size_t decimation) {
    return available < taps ? 0 : (available - taps) / decimation + 1;
}

std::size_t window_outputs(std::size_t n, std::size_t peek, std::size_t taps, std::size_t decimation) {
    const std::size_t starting_here = (n + decimation - 1) / decimation;
    return std::min(starting_here, fir_outputs(n + peek, taps, decimation));
}

// The kernels are kept out of line (noinline) so the graph's stages and the reference run the very
// same machine code: with FMA contraction (-ffp-contract=fast, GCC's default, on a target with FMA)
// two inlined copies could round differently.
// Each output is the sum of h[k]·x[..+k] accumulated in k order from 0. The loops compute
// `lanes` outputs side by side, each with its own accumulator in that order, which changes no
// rounding (so a block and the scalar tail agree bit for bit) but breaks the chain of dependent
// additions and lets the compiler use one SIMD lane per output.
namespace {
constexpr std::size_t lanes = 8;
}

[[gnu::noinline]] void fir_decimate(const iq_sample* x, const float* h, std::size_t taps, std::size_t decimation,
                                    iq_sample* out, std::size_t outputs) {
    std::size_t m = 0;
    for (; m + lanes <= outputs; m += lanes) {
        float si[lanes] = {}, sq[lanes] = {};
        for (std::size_t k = 0; k < taps; ++k) {
            const float c = h[k];
            for (std::size_t j = 0; j < lanes; ++j) {
                const iq_sample v = x[(m + j) * decimation + k];
                si[j] += c * v.i;
                sq[j] += c * v.q;
            }
        }
        for (std::size_t j = 0; j < lanes; ++j) out[m + j] = {si[j], sq[j]};
    }
    for (; m < outputs; ++m) {
        const iq_sample* w = x + m * decimation;
        float si = 0, sq = 0;
        for (std::size_t k = 0; k < taps; ++k) {
            si += h[k] * w[k].i;
            sq += h[k] * w[k].q;
        }
        out[m] = {si, sq};
    }
}

[[gnu::noinline]] void fir_filter(const float* x, const float* h, std::size_t taps, float* out, std::size_t outputs) {
    std::size_t m = 0;
    for (; m + lanes <= outputs; m += lanes) {
        float s[lanes] = {};
        for (std::size_t k = 0; k < taps; ++k) {
            const float c = h[k];
            const float* w = x + m + k;
            for (std::size_t j = 0; j < lanes; ++j) s[j] += c * w[j];
        }
        for (std::size_t j = 0; j < lanes; ++j) out[m + j] = s[j];
    }
    for (; m < outputs; ++m) {
        float s = 0;
        for (std::size_t k = 0; k < taps; ++k) s += h[k] * x[m + k];
        out[m] = s;
    }
}

[[gnu::noinline]] void fm_demodulate(const iq_sample* x, float* out, std::size_t outputs) {
    // Polar discriminator: the angle of x[m+1]·conj(x[m]) is the phase advance over one sample,
    // 2π·f/rate; scaled by rate/(2π·deviation) the station's program comes out in [-1, 1].
    const float scale = static_cast<float>(fm_audio_rate / (two_pi * fm_deviation));
    for (std::size_t m = 0; m < outputs; ++m) {
        const iq_sample a = x[m], b = x[m + 1];
        const float re = b.i * a.i + b.q * a.q;
        const float im = b.q * a.i - b.i * a.q;
        out[m] = std::atan2(im, re) * scale;
    }
}

[[gnu::noinline]] float band_difference(float high, float low) { return high - low; }

[[gnu::noinline]] float band_gain(float value, float gain) { return value * gain; }

[[gnu::noinline]] float mix_bands(const float* values, std::size_t bands) {
    float sum = 0;
    for (std::size_t b = 0; b < bands; ++b) sum += values[b];
    return sum;
}

std::vector<float> fm_radio_reference(const fm_radio_design& d, std::size_t samples, std::uint64_t seed) {
    const fm_antenna antenna(seed);
    std::vector<iq_sample> x(samples);
    for (std::size_t n = 0; n < samples; ++n) x[n] = antenna.sample(n);

    std::vector<iq_sample> channel(fir_outputs(samples, d.taps, fm_decimation));
    fir_decimate(x.data(), d.channel.data(), d.taps, fm_decimation, channel.data(), channel.size());
    x = {};

    std::vector<float> audio(fir_outputs(channel.size(), 2, 1));
    fm_demodulate(channel.data(), audio.data(), audio.size());
    channel = {};

    // The equalizer in chunks of outputs, every band of a chunk before the join, so that each
    // output is mixed by the same call, over the same values in the same order, as in the graph.
    std::vector<float> out(fir_outputs(audio.size(), d.taps, 1));
    constexpr std::size_t chunk = 4096;
    std::vector<float> high(chunk), low(chunk), values(chunk * d.bands);
    for (std::size_t start = 0; start < out.size(); start += chunk) {
        const std::size_t n = std::min(chunk, out.size() - start);
        for (std::size_t b = 0; b < d.bands; ++b) {
            fir_filter(audio.data() + start, d.band_high[b].data(), d.taps, high.data(), n);
            fir_filter(audio.data() + start, d.band_low[b].data(), d.taps, low.data(), n);
            for (std::size_t i = 0; i < n; ++i)
                values[i * d.bands + b] = band_gain(band_difference(high[i], low[i]), d.gains[b]);
        }
        for (std::size_t i = 0; i < n; ++i) out[start + i] = mix_bands(values.data() + i * d.bands, d.bands);
    }
    return out;
}

}   // namespace pipescope::workloads
