// fm-radio as a stage graph (workloads/include/pipescope/workloads/fm_radio.hpp): StreamIt's FMRadio
// with its splitters and joiners as stages, as DANBI ports it (seed 002 §IV-A, Table II), on the
// GRAMPS model of parallel and serial stages joined by packet queues (seed 004 §II-C).
//
// Which stage is parallel and why:
// - the antenna: every sample is a pure function of its index (fm_antenna::sample), about 75–130 ns
//   each and some 40 % of the whole receiver's work, so it is a parallel stage fed by a serial
//   "sampler" that only hands out ranges of sample indices, one antenna packet per range — the
//   structure of the ray tracer's tiler and camera (GRAMPS' Tiler thread handing tiles to the
//   shaders that make the camera rays, seed 004 §II-C, §V-A). Its output queue is ordered: the
//   instances reserve their packets in range order, so the channel filter, which peeks across
//   packets, sees the stream in order (DANBI's ticket synchronization, seed 002 §II). A serial
//   antenna kept 40 % of the work on one worker at a time: with two free cores the other stages
//   overlap it, but a descheduled worker, or more than two workers, left the graph waiting for it;
// - the FIR filters (channel, band edges) are stateless given a window of input, so they are
//   parallel stages that peek taps-1 samples past their packet (seed 002 §II reserve_peek_pop);
// - the FM demodulator needs the previous sample. It could be a serial stage keeping that sample
//   as state, but then one worker would demodulate the whole stream; peeking 1 sample makes it a
//   stateless, parallel stage like the filters (StreamIt's FMDemodulator peeks 2, pops 1);
// - the gain is stateless per packet: parallel;
// - the duplicate splitter is stateless, so it is a parallel stage too (DANBI's FMRadio: "all kernels
//   except the test source and test sink are parallel kernels", seed 002 §IV-A). An instance copies
//   its audio packet into one packet of each of the 2·B band inputs with instance_context::push_n, a
//   memcpy per output, as the serial stage it replaces did with reserved packets. It was serial while
//   an instance could only push element by element (about 30 µs per 1024-sample packet against 2-3 µs
//   for whole-packet copies); a serial splitter is some 7 % of the work but had to run all of it on
//   one worker at a time, and at 40 virtual workers it was busy about 90 % of the run (docs/virtual.md);
// - the subtractor and the join read several queues in lockstep, and a parallel stage reads exactly
//   one queue, so they are serial, as are the sampler and the sink. They are light: at size large
//   (1024-sample packets) a subtract step is about 1 µs, the join 9, the sink 2, against about
//   0.55 ms of parallel work per packet (the antenna's 420 µs, 20 band filters of 5 µs), so the
//   serial stages are a few per cent of the work (docs/runtime.md, "Parallel sources"); the join
//   is the largest, and at 40 virtual workers the busiest stage now that the splitter is parallel.
// Every queue a parallel stage writes is ordered: instances may finish in any order, but their
// packets are published in input order (DANBI's ticket synchronization, seed 002 §II), which the
// peeking filters and the lockstep readers downstream rely on.
#include <pipescope/workloads/fm_radio.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>

namespace pipescope::workloads {

namespace {

// The elements of an instance's input packet, contiguous (an instance has exactly one packet), or
// nullptr when it is empty. Stage bodies read them through a local pointer: a pointer kept in a
// register is not reloaded after every push, whose byte stores may alias anything in memory.
template <class T>
const T* input_elements(const graph::instance_context& ctx) {
    return ctx.size() > 0 ? &ctx.in<T>(0) : nullptr;
}

// The instance's packet followed by its peek elements, contiguous, for the shared kernels.
template <class T>
const T* gather(const graph::instance_context& ctx, std::vector<T>& buffer) {
    const std::size_t n = ctx.size(), p = ctx.peek_size();
    buffer.resize(n + p);
    if (n > 0) std::memcpy(buffer.data(), input_elements<T>(ctx), n * sizeof(T));
    for (std::size_t j = 0; j < p; ++j) buffer[n + j] = ctx.peek<T>(j);
    return buffer.data();
}

// A serial stage reading its inputs in lockstep: output i combines element i of every input (the
// roundrobin joiner of StreamIt fused with the filter after it). The inputs carry equally long
// streams; a stream that ends before the others is a bug in the graph, reported as such.
//
// It moves whole packets: it pops one packet of every input, reserves one output packet, writes the
// combined elements straight into it and commits it — one reserve and one commit per packet instead
// of a co_await push per element. No co_await happens while the output window is held, so the stage
// never suspends holding a reservation (the engine commits push()'s partial packets at a suspension,
// but a window reserved with reserve() would stay out of the queue while the stage waits).
//
// `combine(rows, out, n)` makes n outputs from rows[k][0 .. n), the next n elements of input k,
// contiguous. It is a template argument, not a function pointer, so that the per-element loop is
// compiled into the stage with its pointers in registers (the serial reference's loops are plain
// loops over arrays too); the arithmetic per element is the shared kernel, called as in the
// reference.
template <class Combine>
graph::serial_body lockstep(std::string name, std::size_t inputs, Combine combine) {
    return [name = std::move(name), inputs, combine](graph::thread_context& ctx) -> graph::stage_task {
        std::vector<graph::pop_window> window(inputs);
        std::vector<std::size_t> at(inputs, 0);
        std::vector<const float*> rows(inputs);
        std::vector<float> result, scratch;
        for (;;) {
            std::size_t ended = inputs;
            for (std::size_t k = 0; k < inputs && ended == inputs; ++k) {
                if (at[k] < window[k].size()) continue;
                if (window[k]) ctx.commit(window[k]);
                window[k] = co_await ctx.pop(k);
                at[k] = 0;
                if (!window[k]) ended = k;
            }
            if (ended < inputs) {
                // Every other input must end here too: nothing left in its window, nothing after it.
                for (std::size_t k = 0; k < inputs; ++k) {
                    if (k == ended) continue;
                    bool more = at[k] < window[k].size();
                    if (!more && k > ended) {   // not looked at in this round: look once more
                        if (window[k]) ctx.commit(window[k]);
                        window[k] = co_await ctx.pop(k);
                        at[k] = 0;
                        more = bool(window[k]);
                    }
                    if (more)
                        throw std::logic_error("fm-radio: stage '" + name + "': input " + std::to_string(ended) +
                                               " ended before input " + std::to_string(k));
                }
                break;
            }
            std::size_t n = SIZE_MAX;
            for (std::size_t k = 0; k < inputs; ++k) n = std::min(n, window[k].size() - at[k]);
            // The inputs' packets line up (every producer upstream makes full packets but the last),
            // so n is usually a whole packet and this loop runs once; the output packet holds as
            // many elements as an input packet.
            while (n > 0) {
                graph::push_window w = co_await ctx.reserve(0);
                const std::size_t m = std::min(n, w.capacity());
                for (std::size_t k = 0; k < inputs; ++k) {
                    // A window of one packet (what a pop of one packet gives) is contiguous: read
                    // it in place; anything else is copied out element by element first.
                    if (window[k].packets() == 1) {
                        rows[k] = &window[k].at<float>(at[k]);
                    } else {
                        scratch.resize(inputs * m);
                        float* row = scratch.data() + k * m;
                        for (std::size_t i = 0; i < m; ++i) row[i] = window[k].at<float>(at[k] + i);
                        rows[k] = row;
                    }
                }
                result.resize(m);
                combine(rows.data(), result.data(), m);
                // A window of one packet: its elements are contiguous.
                std::memcpy(w.packet_bytes(0).data(), result.data(), m * sizeof(float));
                ctx.commit(w, m);
                for (std::size_t k = 0; k < inputs; ++k) at[k] += m;
                n -= m;
            }
        }
        for (std::size_t k = 0; k < inputs; ++k)
            if (window[k]) ctx.commit(window[k]);
    };
}

std::string band_name(std::size_t b, const char* what) { return "band " + std::to_string(b) + " " + what; }

// The packet and queue sizes of the run: refused when a filter could not work with them.
void check_sizes(const fm_radio_state& st) {
    const std::size_t taps = st.design.taps, packet = st.packet;
    if (packet < fm_min_packet || packet > fm_max_packet)
        throw std::invalid_argument("fm-radio: packet = " + std::to_string(packet) +
                                    " audio samples per packet is outside [" + std::to_string(fm_min_packet) + ", " +
                                    std::to_string(fm_max_packet) + "]");
    if (st.capacity < fm_min_capacity(taps, packet) || st.capacity > fm_max_capacity)
        throw std::invalid_argument("fm-radio: capacity = " + std::to_string(st.capacity) +
                                    " packets per queue is outside [" + std::to_string(fm_min_capacity(taps, packet)) +
                                    ", " + std::to_string(fm_max_capacity) + "]: a " + std::to_string(taps) +
                                    "-tap filter peeks " + std::to_string(taps - 1) + " samples past its packet of " +
                                    std::to_string(packet) + " and its producer needs a free packet meanwhile");
}

// The graph's queues, added in this order (their ids).
struct fm_queues {
    graph::queue_id ranges, antenna, channel, audio;
    std::vector<graph::queue_id> split_out, upper, lower, pass, out;   // per band (split_out: two per band)
    graph::queue_id equalized;
};

fm_queues add_queues(graph::program& g, const fm_radio_state& st) {
    const std::size_t packet = st.packet, bands = st.design.bands;
    const auto shape = [cap = st.capacity](std::size_t elements, bool ordered) {
        graph::queue_shape s;
        s.packet_elements = elements;
        s.capacity_packets = cap;
        s.ordered = ordered;
        return s;
    };
    fm_queues q;
    // One range per packet: a range is one antenna instance's work, one antenna packet.
    q.ranges = g.add_queue<fm_sample_range>("sample ranges", shape(1, false));
    q.antenna = g.add_queue<iq_sample>("antenna", shape(packet * fm_decimation, true));
    q.channel = g.add_queue<iq_sample>("channel", shape(packet, true));
    q.audio = g.add_queue<float>("audio", shape(packet, true));
    for (std::size_t b = 0; b < bands; ++b) {
        q.split_out.push_back(g.add_queue<float>(band_name(b, "upper in"), shape(packet, true)));
        q.split_out.push_back(g.add_queue<float>(band_name(b, "lower in"), shape(packet, true)));
        q.upper.push_back(g.add_queue<float>(band_name(b, "upper"), shape(packet, true)));
        q.lower.push_back(g.add_queue<float>(band_name(b, "lower"), shape(packet, true)));
        q.pass.push_back(g.add_queue<float>(band_name(b, "pass"), shape(packet, false)));
        q.out.push_back(g.add_queue<float>(band_name(b, "out"), shape(packet, true)));
    }
    q.equalized = g.add_queue<float>("equalized", shape(packet, false));
    return q;
}

// The sampler, the antenna, the channel filter and the demodulator: from antenna samples to audio.
void add_receiver(graph::program& g, fm_radio_state& st, const fm_queues& q) {
    const fm_radio_design& d = st.design;
    const std::size_t taps = d.taps, antenna_packet = st.packet * fm_decimation;
    const graph::queue_id ranges = q.ranges, antenna = q.antenna, channel = q.channel, audio = q.audio;
    // Source: ranges of fm_decimation·N sample indices, one antenna packet each; the last range
    // holds what is left. The antenna the instances share is made here, before the first range.
    g.add_serial("sampler", {}, {ranges}, [&st, antenna_packet](graph::thread_context& ctx) -> graph::stage_task {
        st.antenna.emplace(st.seed);
        for (std::size_t n = 0; n < st.samples;) {
            const std::size_t k = std::min(antenna_packet, st.samples - n);
            co_await ctx.push(0, fm_sample_range{n, k});   // one element is one whole packet
            n += k;
        }
    });

    // The antenna samples of a range, in index order, into one antenna packet. Instances run in
    // parallel; the ordered queue publishes their packets in range order.
    g.add_parallel("antenna", ranges, {{antenna, 1}}, [&st](graph::instance_context& ctx) {
        const fm_antenna& source = *st.antenna;
        for (std::size_t i = 0; i < ctx.size(); ++i) {
            const fm_sample_range& r = ctx.in<fm_sample_range>(i);
            for (std::uint64_t n = r.first; n < r.first + r.count; ++n) ctx.push(0, source.sample(n));
        }
    });

    // Channel filter: low-pass at the input rate, keeping every fm_decimation-th output. A full
    // packet of 4·N samples makes N outputs (one full output packet); the instance at the end of
    // the stream, with a short peek, only those whose window fits (StreamIt's firing rule).
    g.add_parallel(
        "channel filter", antenna, {{channel, 1}},
        [&d, taps](graph::instance_context& ctx) {
            thread_local std::vector<iq_sample> in, result;
            const iq_sample* x = gather(ctx, in);
            result.resize(window_outputs(ctx.size(), ctx.peek_size(), taps, fm_decimation));
            fir_decimate(x, d.channel.data(), taps, fm_decimation, result.data(), result.size());
            ctx.push_n(0, result.data(), result.size());
        },
        taps - 1);

    g.add_parallel(
        "demodulate", channel, {{audio, 1}},
        [](graph::instance_context& ctx) {
            thread_local std::vector<iq_sample> in;
            thread_local std::vector<float> result;
            const iq_sample* x = gather(ctx, in);
            result.resize(window_outputs(ctx.size(), ctx.peek_size(), 2, 1));
            fm_demodulate(x, result.data(), result.size());
            ctx.push_n(0, result.data(), result.size());
        },
        1);
}

// The duplicate splitter, then each band's two low-pass filters, subtractor and gain.
void add_bands(graph::program& g, const fm_radio_design& d, const fm_queues& q) {
    const std::size_t taps = d.taps, bands = d.bands;
    // Duplicate splitter: every packet to both filters of every band (StreamIt's duplicate splitter,
    // a kernel of its own in DANBI's FMRadio, where "all kernels except the test source and test
    // sink are parallel kernels", seed 002 §IV-A). Stateless, so a parallel stage: an instance copies
    // its audio packet into one packet of each output, a push_n (one memcpy) each. Its outputs are
    // ordered, so however the instances finish, every band filter sees the audio in stream order
    // (DANBI's ticket synchronization, seed 002 §II).
    std::vector<graph::output_spec> split_specs;
    for (graph::queue_id to : q.split_out) split_specs.push_back({to, 1});
    g.add_parallel("split", q.audio, split_specs, [outputs = q.split_out.size()](graph::instance_context& ctx) {
        const float* x = input_elements<float>(ctx);
        const std::size_t n = ctx.size();
        for (std::size_t k = 0; k < outputs; ++k) ctx.push_n(k, x, n);
    });

    for (std::size_t b = 0; b < bands; ++b) {
        // StreamIt's BandPassFilter: two low-pass filters (upper and lower band edge) and a subtractor.
        auto lowpass = [taps](const std::vector<float>& h) {
            return [&h, taps](graph::instance_context& ctx) {
                thread_local std::vector<float> in, result;
                const float* x = gather(ctx, in);
                result.resize(window_outputs(ctx.size(), ctx.peek_size(), taps, 1));
                fir_filter(x, h.data(), taps, result.data(), result.size());
                ctx.push_n(0, result.data(), result.size());
            };
        };
        g.add_parallel(band_name(b, "upper low-pass"), q.split_out[2 * b], {{q.upper[b], 1}}, lowpass(d.band_high[b]),
                       taps - 1);
        g.add_parallel(band_name(b, "lower low-pass"), q.split_out[2 * b + 1], {{q.lower[b], 1}}, lowpass(d.band_low[b]),
                       taps - 1);
        g.add_serial(band_name(b, "subtract"), {q.upper[b], q.lower[b]}, {q.pass[b]},
                     lockstep(band_name(b, "subtract"), 2, [](const float* const* in, float* out, std::size_t n) {
                         const float *high = in[0], *low = in[1];
                         for (std::size_t i = 0; i < n; ++i) out[i] = band_difference(high[i], low[i]);
                     }));
        g.add_parallel(band_name(b, "gain"), q.pass[b], {{q.out[b], 1}}, [gain = d.gains[b]](graph::instance_context& ctx) {
            const float* x = input_elements<float>(ctx);
            const std::size_t n = ctx.size();
            for (std::size_t i = 0; i < n; ++i) ctx.push(0, band_gain(x[i], gain));
        });
    }
}

// The join of the bands, and the sink that keeps the audio.
void add_output(graph::program& g, fm_radio_state& st, const fm_queues& q) {
    const std::size_t bands = st.design.bands;
    // The join sums the bands of each output in band order (mix_bands over one value per band), as
    // the reference does; the values of one output are gathered into a small array first.
    g.add_serial("join", q.out, {q.equalized},
                 lockstep("join", bands, [bands](const float* const* in, float* out, std::size_t n) {
                     float values[fm_max_bands];
                     for (std::size_t i = 0; i < n; ++i) {
                         for (std::size_t b = 0; b < bands; ++b) values[b] = in[b][i];
                         out[i] = mix_bands(values, bands);
                     }
                 }));

    g.add_serial("sink", {q.equalized}, {}, [&st](graph::thread_context& ctx) -> graph::stage_task {
        for (;;) {
            graph::pop_window w = co_await ctx.pop(0);
            if (!w) break;
            // Whole packets at a time, as the reference writes its output array.
            for (std::size_t p = 0; p < w.packets(); ++p) {
                const std::span<const std::byte> bytes = w.packet_bytes(p);
                const std::size_t at = st.audio.size(), n = bytes.size() / sizeof(float);
                st.audio.resize(at + n);
                std::memcpy(st.audio.data() + at, bytes.data(), bytes.size());
            }
            ctx.commit(w);
        }
    });
}

}   // namespace

graph::program build_fm_radio_graph(fm_radio_state& st) {
    check_sizes(st);
    graph::program g;
    const fm_queues q = add_queues(g, st);
    add_receiver(g, st, q);
    add_bands(g, st.design, q);
    add_output(g, st, q);
    return g;
}

std::size_t fm_min_capacity(std::size_t taps, std::size_t packet) {
    packet = std::max<std::size_t>(packet, 1);
    // The audio queues' packets are the smallest (the antenna's are fm_decimation times larger).
    const std::size_t peek_packets = taps <= 1 ? 0 : (taps - 1 + packet - 1) / packet;
    return 1 + peek_packets + 1;
}

std::vector<std::string> fm_radio_stage_notes(const fm_radio_design& d) {
    const std::string peek = "peeks " + std::to_string(d.taps - 1) + " samples";
    std::vector<std::string> notes = {
        "hands out ranges of antenna sample indices, one antenna packet each",
        "synthetic FM broadcast: wanted station at 0 Hz, adjacent station at +75 kHz, noise; 192 kHz complex; "
        "the samples of a range (ordered output)",
        std::to_string(d.taps) + "-tap low-pass at 20 kHz, decimation 4 to 48 kHz; " + peek,
        "polar discriminator on consecutive samples; peeks 1 sample",
        "duplicate splitter: every packet to the " + std::to_string(2 * d.bands) + " band filters",
    };
    for (std::size_t b = 0; b < d.bands; ++b) {
        notes.push_back(std::to_string(d.taps) + "-tap low-pass at " + std::to_string(static_cast<int>(d.edges[b + 1])) +
                        " Hz (upper band edge); " + peek);
        notes.push_back(std::to_string(d.taps) + "-tap low-pass at " + std::to_string(static_cast<int>(d.edges[b])) +
                        " Hz (lower band edge); " + peek);
        notes.push_back("upper minus lower: the band-pass output (reads both in lockstep)");
        notes.push_back("gain " + std::to_string(d.gains[b]));
    }
    notes.push_back("sums the " + std::to_string(d.bands) + " bands in band order (reads them in lockstep)");
    notes.push_back("collects the equalized audio");
    return notes;
}

}   // namespace pipescope::workloads
