// What one fuzz input exercises: everything pipescope does with a file it did not write — decode it,
// build the trace model and the pipeline DAGs, summarize it, and export it as Chrome JSON. Shared by
// the libFuzzer target (fuzz_trace_reader.cpp) and the regression replay in the Catch2 suite
// (test_fuzz_regressions.cpp), so a crash input saved under tests/fuzz/regressions/ is checked by
// every build, sanitized or not.
//
// The contract: malformed input throws proto::decode_error (naming the byte offset) and nothing
// else, also when read as files are (a torn last packet accepted: check_cut_short_reading); any
// other exception, a crash, a leak, undefined behaviour or a hang is a bug. The streaming summary
// (`pipescope validate`) must agree with the one of the materialized file.
#pragma once

#include <pipescope/trace/chrome_json.hpp>
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/proto_reader.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace pipescope::fuzz {

// The strict reading (what every reader did before accept_cut_short): decodes, summarizes both ways,
// builds the model and exports it. Throws proto::decode_error for malformed input.
inline bool exercise_strict(std::string_view bytes, const trace::read_options& limits) {
    const trace::perfetto_file f = trace::read_perfetto(bytes, limits);
    // Differential check: `validate`'s streaming summary agrees with the materialized one.
    const trace::perfetto_summary a = trace::summarize(f), b = trace::summarize_perfetto(bytes, limits);
    if (a.packets != b.packets || a.tracks != b.tracks || a.slices != b.slices || a.open_slices != b.open_slices ||
        a.unmatched_ends != b.unmatched_ends || a.instants != b.instants || a.flows != b.flows ||
        a.counter_values != b.counter_values || a.runs != b.runs || a.run_summaries != b.run_summaries ||
        a.problems != b.problems)
        throw std::logic_error("summarize and summarize_perfetto disagree");
    const trace::trace_model m = trace::load_trace(bytes, limits);
    std::ostringstream json;
    (void)trace::write_chrome_json(m, json);
    return true;
}

// What the readers of files do (read_options::accept_cut_short, docs/trace-format.md): a torn last
// packet ends the reading instead of failing it. Checked against the strict reading: the cut-short
// reading rejects exactly what the strict one rejects except a torn last packet, and when it stops
// at one, the bytes before it read strictly give the same model counts.
inline void check_cut_short_reading(std::string_view bytes, trace::read_options limits, bool strict_ok) {
    limits.accept_cut_short = true;
    trace::trace_model m;
    try {
        m = trace::load_trace(bytes, limits);
    } catch (const trace::proto::decode_error& e) {
        if (strict_ok) throw std::logic_error(std::string("accept_cut_short rejected a readable trace: ") + e.what());
        return;
    }
    if (!m.cut_short) {
        if (!strict_ok) throw std::logic_error("accept_cut_short read a file the strict reader rejects, without a cut");
        return;
    }
    if (strict_ok) throw std::logic_error("accept_cut_short found a cut in a file the strict reader reads whole");
    if (m.cut_short_at >= bytes.size()) throw std::logic_error("cut short at or past the end of the file");
    limits.accept_cut_short = false;
    try {
        const trace::trace_model before = trace::load_trace(bytes.substr(0, m.cut_short_at), limits);
        if (before.packets != m.packets || before.events != m.events || before.slices != m.slices ||
            before.runs.size() != m.runs.size())
            throw std::logic_error("the packets before a cut read differently on their own");
    } catch (const trace::proto::decode_error& e) {
        throw std::logic_error(std::string("the packets before a cut do not read on their own: ") + e.what());
    }
}

// Returns true if the input was read as a trace, false if it was rejected with a decode_error.
inline bool exercise_trace_reader(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    trace::read_options limits;
    limits.max_decompressed_bytes = std::uint64_t{64} << 20;   // keeps one input fast; the default is 1 GiB
    bool strict_ok = false;
    try {
        strict_ok = exercise_strict(bytes, limits);
    } catch (const trace::proto::decode_error&) {
    }
    check_cut_short_reading(bytes, limits, strict_ok);
    return strict_ok;
}
}   // namespace pipescope::fuzz
