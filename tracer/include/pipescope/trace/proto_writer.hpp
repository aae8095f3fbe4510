// A minimal append-only protobuf encoder for writing Perfetto traces by hand (no Perfetto SDK).
//
// Like Perfetto's protozero, nested messages are written in place: begin_nested() reserves a
// 4-byte length (a redundant but valid varint) and end_nested() patches it, so nothing is built
// bottom-up or copied. Field numbers and wire types are the caller's business; see
// docs/trace-format.md for the ones pipescope uses.
#pragma once

#include <pipescope/trace/proto_wire.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace pipescope::trace::proto {

inline std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

class writer {
public:
    explicit writer(std::vector<std::uint8_t>& out) : out_(out) {}

    void varint(std::uint64_t v) {
        while (v >= 0x80) {
            out_.push_back(static_cast<std::uint8_t>(v | 0x80));
            v >>= 7;
        }
        out_.push_back(static_cast<std::uint8_t>(v));
    }
    void tag(std::uint32_t field, wire w) { varint((std::uint64_t{field} << 3) | static_cast<std::uint8_t>(w)); }

    void uint_field(std::uint32_t field, std::uint64_t v) {
        tag(field, wire::varint);
        varint(v);
    }
    // int32/int64 fields: two's complement as uint64 (negative values take 10 bytes; no zigzag).
    void int_field(std::uint32_t field, std::int64_t v) { uint_field(field, static_cast<std::uint64_t>(v)); }
    void bool_field(std::uint32_t field, bool v) { uint_field(field, v ? 1 : 0); }
    void fixed64_field(std::uint32_t field, std::uint64_t v) {
        tag(field, wire::i64);
        for (int i = 0; i < 8; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
    void double_field(std::uint32_t field, double d) {
        std::uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        fixed64_field(field, bits);
    }
    void bytes_field(std::uint32_t field, std::string_view bytes) {
        tag(field, wire::len);
        varint(bytes.size());
        out_.insert(out_.end(), bytes.begin(), bytes.end());
    }
    void bytes_field(std::uint32_t field, const std::vector<std::uint8_t>& bytes) {
        tag(field, wire::len);
        varint(bytes.size());
        out_.insert(out_.end(), bytes.begin(), bytes.end());
    }

    // A nested message: write its fields between begin_nested() and end_nested(token).
    std::size_t begin_nested(std::uint32_t field) {
        tag(field, wire::len);
        const std::size_t at = out_.size();
        out_.insert(out_.end(), {0x80, 0x80, 0x80, 0x00});
        return at;
    }
    void end_nested(std::size_t at) {
        const std::size_t len = out_.size() - at - 4;
        if (len >= (std::size_t{1} << 28)) throw std::length_error("protobuf nested message longer than 256 MiB");
        out_[at + 0] = static_cast<std::uint8_t>((len & 0x7F) | 0x80);
        out_[at + 1] = static_cast<std::uint8_t>(((len >> 7) & 0x7F) | 0x80);
        out_[at + 2] = static_cast<std::uint8_t>(((len >> 14) & 0x7F) | 0x80);
        out_[at + 3] = static_cast<std::uint8_t>((len >> 21) & 0x7F);
    }

    std::vector<std::uint8_t>& buffer() { return out_; }

private:
    std::vector<std::uint8_t>& out_;
};

// RAII form of begin_nested/end_nested.
class nested {
public:
    nested(writer& w, std::uint32_t field) : w_(w), at_(w.begin_nested(field)) {}
    ~nested() { w_.end_nested(at_); }
    nested(const nested&) = delete;
    nested& operator=(const nested&) = delete;

private:
    writer& w_;
    std::size_t at_;
};

}   // namespace pipescope::trace::proto
