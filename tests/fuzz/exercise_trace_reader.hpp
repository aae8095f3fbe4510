// What one fuzz input exercises: everything pipescope does with a file it did not write — decode it,
// build the trace model and the pipeline DAGs, summarize it, and export it as Chrome JSON. Shared by
// the libFuzzer target (fuzz_trace_reader.cpp) and the regression replay in the Catch2 suite
// (test_fuzz_regressions.cpp), so a crash input saved under tests/fuzz/regressions/ is checked by
// every build, sanitized or not.
//
// The contract: malformed input throws proto::decode_error (naming the byte offset) and nothing
// else; any other exception, a crash, a leak, undefined behaviour or a hang is a bug. The streaming
// summary (`pipescope validate`) must agree with the one of the materialized file.
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

// Returns true if the input was read as a trace, false if it was rejected with a decode_error.
inline bool exercise_trace_reader(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    trace::read_options limits;
    limits.max_decompressed_bytes = std::uint64_t{64} << 20;   // keeps one input fast; the default is 1 GiB
    try {
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
    } catch (const trace::proto::decode_error&) {
        return false;
    }
}

}   // namespace pipescope::fuzz
