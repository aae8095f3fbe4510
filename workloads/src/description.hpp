// Numbers in a run's one-line description (run_report::description). The workloads sit below the
// analysis (docs/design.md, "Layering"), so they cannot call analysis::numbers; these write the
// same forms it does ("196,608", "1.5 KiB") for the few figures a description holds.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace pipescope::workloads {

// A count with thousands separators: "1,234,567".
inline std::string thousands(std::uint64_t n) {
    const std::string digits = fmt::format("{}", n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// A size: whole bytes below 10 KiB ("812 bytes"), else KiB or MiB with one decimal.
inline std::string human_bytes(std::uint64_t bytes) {
    if (bytes < 10 * 1024) return fmt::format("{} bytes", bytes);
    if (bytes < (1u << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

}   // namespace pipescope::workloads
