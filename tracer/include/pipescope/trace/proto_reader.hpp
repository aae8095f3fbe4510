// A protobuf field reader for reading Perfetto traces back. Every error names the byte offset
// (from the start of the buffer the reader was created on) and what is wrong there.
#pragma once

#include <pipescope/trace/proto_wire.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipescope::trace::proto {

class decode_error : public std::runtime_error {
public:
    decode_error(std::uint64_t offset, const std::string& what)
        : std::runtime_error("byte " + std::to_string(offset) + ": " + what), offset_(offset) {}
    std::uint64_t offset() const noexcept { return offset_; }

private:
    std::uint64_t offset_;
};

struct field {
    std::uint32_t number = 0;
    std::uint8_t wire_type = 0;       // a proto::wire value (kept as read: an unknown one is an error)
    std::uint64_t value = 0;          // varint, fixed64 or fixed32 payload
    std::string_view bytes;           // length-delimited payload
    std::uint64_t offset = 0;         // where the field's tag starts
    std::uint64_t bytes_offset = 0;   // where a length-delimited payload starts

    bool is(wire w) const { return wire_type == static_cast<std::uint8_t>(w); }
    std::int64_t as_int() const { return static_cast<std::int64_t>(value); }
    double as_double() const {
        double d;
        std::memcpy(&d, &value, sizeof d);
        return d;
    }
};

class reader {
public:
    // `base` is the offset of data[0] in the whole file, so errors name file offsets.
    explicit reader(std::string_view data, std::uint64_t base = 0)
        : begin_(reinterpret_cast<const std::uint8_t*>(data.data())), p_(begin_), end_(begin_ + data.size()), base_(base) {}

    bool done() const { return p_ >= end_; }
    std::uint64_t offset() const { return base_ + static_cast<std::uint64_t>(p_ - begin_); }

    // Reads the next field. Inlined: the common case (a one-byte tag and a one-byte varint or a
    // one-byte length) takes a few instructions; everything else goes through out-of-line paths.
    field next() {
        field f;
        next(f);
        return f;
    }
    void next(field& f) {
        f.offset = offset();
        std::uint64_t key;
        if (p_ < end_ && *p_ < 0x80) [[likely]]
            key = *p_++;
        else key = varint_slow("field tag");
        f.number = static_cast<std::uint32_t>(key >> 3);
        f.wire_type = static_cast<std::uint8_t>(key & 7);
        if (f.number == 0) [[unlikely]]
            throw_at(f.offset, "field number 0 is invalid");
        switch (static_cast<wire>(f.wire_type)) {
            case wire::varint:
                if (p_ < end_ && *p_ < 0x80) [[likely]]
                    f.value = *p_++;
                else f.value = varint_multi("varint value");
                break;
            case wire::i64: f.value = fixed(8); break;
            case wire::i32: f.value = fixed(4); break;
            case wire::len: {
                const std::uint8_t* at = p_;
                std::uint64_t len;
                if (p_ < end_ && *p_ < 0x80) [[likely]]
                    len = *p_++;
                else len = varint_slow("length");
                if (len > static_cast<std::uint64_t>(end_ - p_)) [[unlikely]]
                    throw_length(at, len);
                f.bytes_offset = offset();
                f.bytes = std::string_view(reinterpret_cast<const char*>(p_), static_cast<std::size_t>(len));
                p_ += len;
                break;
            }
            default: throw_wire_type(f);
        }
    }

    // A reader over a length-delimited field's payload; its errors still name file offsets.
    static reader nested(const field& f) { return reader(f.bytes, f.bytes_offset); }

private:
    [[noreturn, gnu::noinline, gnu::cold]] static void throw_at(std::uint64_t offset, const char* what) {
        throw decode_error(offset, what);
    }
    [[noreturn, gnu::noinline, gnu::cold]] void throw_length(const std::uint8_t* at, std::uint64_t len) const {
        throw decode_error(base_ + static_cast<std::uint64_t>(at - begin_),
                           "length " + std::to_string(len) + " runs past the end of the enclosing data (" +
                               std::to_string(end_ - p_) + " bytes left)");
    }
    [[noreturn, gnu::noinline, gnu::cold]] static void throw_wire_type(const field& f) {
        throw decode_error(f.offset, "unsupported wire type " + std::to_string(f.wire_type) + " (field " +
                                         std::to_string(f.number) + ")");
    }
    // A varint of several bytes (timestamps, uuids): unrolled without bounds checks when at least
    // 10 bytes are left; the checked loop otherwise, and for anything malformed.
    std::uint64_t varint_multi(const char* what) {
        if (end_ - p_ >= 10) [[likely]] {
            const std::uint8_t* q = p_;
            std::uint64_t v = 0;
            for (int i = 0; i < 9; ++i) {
                const std::uint64_t b = q[i];
                v |= (b & 0x7F) << (7 * i);
                if (b < 0x80) {
                    p_ = q + i + 1;
                    return v;
                }
            }
            if (q[9] <= 1) {
                p_ = q + 10;
                return v | (std::uint64_t{q[9]} << 63);
            }
        }
        return varint_slow(what);
    }
    [[gnu::noinline]] std::uint64_t varint_slow(const char* what) {
        const std::uint64_t start = offset();
        std::uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p_ >= end_) [[unlikely]]
                throw decode_error(start, std::string("truncated ") + what);
            const std::uint8_t b = *p_++;
            if (shift == 63 && b > 1) [[unlikely]]
                throw decode_error(start, std::string(what) + " overflows 64 bits");
            v |= std::uint64_t{b & 0x7Fu} << shift;
            if (!(b & 0x80)) return v;
        }
        throw decode_error(start, std::string(what) + " is longer than 10 bytes");
    }
    std::uint64_t fixed(int n) {
        if (static_cast<std::size_t>(end_ - p_) < static_cast<std::size_t>(n)) [[unlikely]]
            throw decode_error(offset(), "truncated fixed" + std::to_string(8 * n) + " value");
        std::uint64_t v = 0;
        for (int i = 0; i < n; ++i) v |= std::uint64_t{p_[i]} << (8 * i);
        p_ += n;
        return v;
    }

    const std::uint8_t* begin_;
    const std::uint8_t* p_;
    const std::uint8_t* end_;
    std::uint64_t base_;
};

}   // namespace pipescope::trace::proto
