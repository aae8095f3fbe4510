// overlay_writer: custom tracks appended to a finished trace (overlay_writer.hpp).
#include <pipescope/trace/overlay_writer.hpp>
#include <pipescope/trace/proto_writer.hpp>

#include "perfetto_fields.hpp"

namespace pipescope::trace {

namespace f = fields;

overlay_writer::overlay_writer(std::string_view group) { group_ = describe(group, false); }

std::uint64_t overlay_writer::add_track(std::string_view name) { return describe(name, false); }
std::uint64_t overlay_writer::add_counter_track(std::string_view name) { return describe(name, true); }

std::uint64_t overlay_writer::describe(std::string_view name, bool counter) {
    const std::uint64_t uuid = next_uuid_++;
    proto::writer w(out_);
    proto::nested packet(w, f::trace_packet);
    proto::nested td(w, f::track_descriptor);
    w.uint_field(f::td_uuid, uuid);
    w.bytes_field(f::td_name, name);
    if (group_ == 0) {
        // The group keeps its tracks in the order they were added (the runs' order).
        w.uint_field(f::td_child_ordering, f::child_ordering_explicit);
    } else {
        w.uint_field(f::td_parent_uuid, group_);
        w.int_field(f::td_sibling_order_rank, next_rank_++);
    }
    if (counter) {   // an empty counter descriptor: a unitless value (the unit is in the track's name)
        const proto::nested cd(w, f::td_counter);
    }
    return uuid;
}

void overlay_writer::slice(std::uint64_t track, std::uint64_t begin, std::uint64_t end, std::string_view name,
                           const std::vector<overlay_arg>& args) {
    event(track, begin, static_cast<int>(fields::event_type::slice_begin), name, args, nullptr);
    // The end carries no name (an END naming another slice would leave this one open).
    event(track, end, static_cast<int>(fields::event_type::slice_end), {}, {}, nullptr);
}

void overlay_writer::instant(std::uint64_t track, std::uint64_t at, std::string_view name,
                             const std::vector<overlay_arg>& args) {
    event(track, at, static_cast<int>(fields::event_type::instant), name, args, nullptr);
}

void overlay_writer::counter(std::uint64_t track, std::uint64_t at, double value) {
    event(track, at, static_cast<int>(fields::event_type::counter), {}, {}, &value);
}

void overlay_writer::event(std::uint64_t track, std::uint64_t at, int type, std::string_view name,
                           const std::vector<overlay_arg>& args, const double* value) {
    proto::writer w(out_);
    proto::nested packet(w, f::trace_packet);
    w.uint_field(f::timestamp, at);
    w.uint_field(f::sequence_id, sequence_id);
    if (first_packet_) {
        w.uint_field(f::sequence_flags, f::seq_incremental_state_cleared);
        w.bool_field(f::first_packet_on_sequence, true);
        first_packet_ = false;
    }
    proto::nested te(w, f::track_event);
    w.uint_field(f::te_type, static_cast<std::uint64_t>(type));
    w.uint_field(f::te_track_uuid, track);
    if (!name.empty()) w.bytes_field(f::te_name, name);
    if (value) w.double_field(f::te_double_counter_value, *value);
    for (const overlay_arg& a : args) {
        proto::nested da(w, f::te_debug_annotations);
        w.bytes_field(f::da_name, a.name);
        if (const auto* i = std::get_if<std::int64_t>(&a.value)) w.int_field(f::da_int_value, *i);
        else if (const auto* d = std::get_if<double>(&a.value)) w.double_field(f::da_double_value, *d);
        else w.bytes_field(f::da_string_value, std::get<std::string>(a.value));
    }
}

}   // namespace pipescope::trace
