// Tracks added to a finished trace: a group of custom tracks holding slices, instants and counters,
// encoded as packets of a sequence of their own, to be appended after the trace's packets (a trace
// is a concatenation of packets, docs/trace-format.md "The file"). `pipescope annotate` puts the
// analysis into a trace this way, so ui.perfetto.dev and any Perfetto-based tool show it.
//
// Names are written in full (no interning), so the packets need no sequence state. Track uuids
// carry a high tag no run of pipescope's writer produces (its uuids are (run + 1) << 32 | what).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pipescope::trace {

struct overlay_arg {
    std::string name;
    std::variant<std::int64_t, double, std::string> value;
};

class overlay_writer {
public:
    // The sequence id of the packets: the last one pipescope's writer could give a worker of its
    // 65 536th run, which no trace holds in practice.
    static constexpr std::uint32_t sequence_id = 0xFFFFFFFEu;
    // The tag in the top 16 bits of every overlay track's uuid.
    static constexpr std::uint64_t uuid_tag = std::uint64_t{0xA7A1} << 48;

    // A top-level track named `group` that holds every track added next, in the order added.
    explicit overlay_writer(std::string_view group);

    std::uint64_t add_track(std::string_view name);
    std::uint64_t add_counter_track(std::string_view name);

    // A slice [begin, end] (trace ns) on a track of add_track; slices of one track must nest.
    void slice(std::uint64_t track, std::uint64_t begin, std::uint64_t end, std::string_view name,
               const std::vector<overlay_arg>& args = {});
    void instant(std::uint64_t track, std::uint64_t at, std::string_view name, const std::vector<overlay_arg>& args = {});
    void counter(std::uint64_t track, std::uint64_t at, double value);

    // The packets written so far, to append to the trace.
    const std::vector<std::uint8_t>& packets() const noexcept { return out_; }

private:
    std::uint64_t describe(std::string_view name, bool counter);
    void event(std::uint64_t track, std::uint64_t at, int type, std::string_view name, const std::vector<overlay_arg>& args,
               const double* value);

    std::vector<std::uint8_t> out_;
    std::uint64_t group_ = 0;
    std::uint64_t next_uuid_ = uuid_tag | 1;
    int next_rank_ = 0;
    bool first_packet_ = true;
};

}   // namespace pipescope::trace
