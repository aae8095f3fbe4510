// Field numbers and enum values of the Perfetto protos the writer writes and the reader reads
// (docs/trace-format.md, "Field numbers used"). Facts, not code, from Perfetto. The reader also
// knows fields other writers use (marked "read only").
#pragma once

#include <cstdint>

namespace pipescope::trace::fields {

// Trace
constexpr std::uint32_t trace_packet = 1;
// TracePacket
constexpr std::uint32_t timestamp = 8;
constexpr std::uint32_t sequence_id = 10;   // trusted_packet_sequence_id
constexpr std::uint32_t track_event = 11;
constexpr std::uint32_t interned_data = 12;
constexpr std::uint32_t sequence_flags = 13;
constexpr std::uint32_t incremental_state_cleared = 41;   // read only (the deprecated form of sequence_flags 1)
constexpr std::uint32_t previous_packet_dropped = 42;
constexpr std::uint32_t compressed_packets = 50;
constexpr std::uint32_t timestamp_clock_id = 58;   // read only (never written: see trace-format.md)
constexpr std::uint32_t trace_packet_defaults = 59;
constexpr std::uint32_t track_descriptor = 60;
constexpr std::uint32_t first_packet_on_sequence = 87;
// TracePacketDefaults -> TrackEventDefaults
constexpr std::uint32_t tpd_track_event_defaults = 11;
constexpr std::uint32_t ted_track_uuid = 11;
// TrackDescriptor
constexpr std::uint32_t td_uuid = 1;
constexpr std::uint32_t td_name = 2;
constexpr std::uint32_t td_process = 3;
constexpr std::uint32_t td_thread = 4;
constexpr std::uint32_t td_parent_uuid = 5;
constexpr std::uint32_t td_counter = 8;
constexpr std::uint32_t td_child_ordering = 11;
constexpr std::uint32_t td_sibling_order_rank = 12;
constexpr std::uint32_t td_description = 14;
constexpr std::uint64_t child_ordering_explicit = 3;
// ProcessDescriptor / ThreadDescriptor / CounterDescriptor
constexpr std::uint32_t pd_pid = 1;
constexpr std::uint32_t pd_process_name = 6;
constexpr std::uint32_t thd_pid = 1;
constexpr std::uint32_t thd_tid = 2;
constexpr std::uint32_t thd_thread_name = 5;
constexpr std::uint32_t cd_unit = 3;
constexpr std::uint64_t unit_count = 2;
// TrackEvent
constexpr std::uint32_t te_category_iids = 3;   // read only
constexpr std::uint32_t te_debug_annotations = 4;
constexpr std::uint32_t te_type = 9;
constexpr std::uint32_t te_name_iid = 10;
constexpr std::uint32_t te_track_uuid = 11;
constexpr std::uint32_t te_categories = 22;   // read only
constexpr std::uint32_t te_name = 23;         // read only
constexpr std::uint32_t te_counter_value = 30;
constexpr std::uint32_t te_flow_ids_old = 36;               // read only (deprecated uint64 form)
constexpr std::uint32_t te_terminating_flow_ids_old = 42;   // read only (deprecated uint64 form)
constexpr std::uint32_t te_double_counter_value = 44;       // read only
constexpr std::uint32_t te_flow_ids = 47;                   // fixed64, one tag per id (never packed)
constexpr std::uint32_t te_terminating_flow_ids = 48;       // likewise
// TrackEvent.type
enum class event_type : std::uint8_t { slice_begin = 1, slice_end = 2, instant = 3, counter = 4 };
// DebugAnnotation
constexpr std::uint32_t da_name_iid = 1;
constexpr std::uint32_t da_bool_value = 2;   // read only
constexpr std::uint32_t da_uint_value = 3;
constexpr std::uint32_t da_int_value = 4;
constexpr std::uint32_t da_double_value = 5;
constexpr std::uint32_t da_string_value = 6;
constexpr std::uint32_t da_pointer_value = 7;       // read only (read as a uint)
constexpr std::uint32_t da_legacy_json_value = 9;   // read only (read as a string)
constexpr std::uint32_t da_name = 10;               // read only
constexpr std::uint32_t da_dict_entries = 11;       // read only
constexpr std::uint32_t da_array_values = 12;
constexpr std::uint32_t da_string_value_iid = 17;   // read only
// InternedData and its EventName / DebugAnnotationName entries
constexpr std::uint32_t id_event_categories = 1;   // read only
constexpr std::uint32_t id_event_names = 2;
constexpr std::uint32_t id_debug_annotation_names = 3;
constexpr std::uint32_t id_debug_annotation_string_values = 29;   // read only
constexpr std::uint32_t in_iid = 1;
constexpr std::uint32_t in_name = 2;
// SequenceFlags
constexpr std::uint32_t seq_incremental_state_cleared = 1;
constexpr std::uint32_t seq_needs_incremental_state = 2;

}   // namespace pipescope::trace::fields
