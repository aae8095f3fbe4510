// Protobuf wire types, shared by the encoder (proto_writer.hpp) and the reader (proto_reader.hpp).
#pragma once

#include <cstdint>

namespace pipescope::trace::proto {

enum class wire : std::uint8_t { varint = 0, i64 = 1, len = 2, i32 = 5 };

}   // namespace pipescope::trace::proto
