// A protobuf field reader for reading Perfetto traces back. Every error names the byte offset
// (from the start of the buffer the reader was created on) and what is wrong there.
#pragma once

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
    std::uint8_t wire_type = 0;
    std::uint64_t value = 0;         // varint, fixed64 or fixed32 payload
    std::string_view bytes;          // length-delimited payload
    std::uint64_t offset = 0;        // where the field's tag starts
    std::uint64_t bytes_offset = 0;  // where a length-delimited payload starts

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
    explicit reader(std::string_view data, std::uint64_t base = 0) : data_(data), base_(base) {}

    bool done() const { return pos_ >= data_.size(); }
    std::uint64_t offset() const { return base_ + pos_; }

    field next() {
        field f;
        f.offset = offset();
        const std::uint64_t key = varint("field tag");
        f.number = static_cast<std::uint32_t>(key >> 3);
        f.wire_type = static_cast<std::uint8_t>(key & 7);
        if (f.number == 0) throw decode_error(f.offset, "field number 0 is invalid");
        switch (f.wire_type) {
            case 0: f.value = varint("varint value"); break;
            case 1: f.value = fixed(8); break;
            case 5: f.value = fixed(4); break;
            case 2: {
                const std::uint64_t at = offset();
                const std::uint64_t len = varint("length");
                if (len > data_.size() - pos_)
                    throw decode_error(at, "length " + std::to_string(len) + " runs past the end of the enclosing data (" +
                                               std::to_string(data_.size() - pos_) + " bytes left)");
                f.bytes_offset = offset();
                f.bytes = data_.substr(pos_, len);
                pos_ += len;
                break;
            }
            default:
                throw decode_error(f.offset, "unsupported wire type " + std::to_string(f.wire_type) + " (field " +
                                                 std::to_string(f.number) + ")");
        }
        return f;
    }

    // A reader over a length-delimited field's payload; its errors still name file offsets.
    static reader nested(const field& f) { return reader(f.bytes, f.bytes_offset); }

private:
    std::uint64_t varint(const char* what) {
        // Fast path: most tags and values of a trace are one byte.
        if (pos_ < data_.size() && !(static_cast<std::uint8_t>(data_[pos_]) & 0x80))
            return static_cast<std::uint8_t>(data_[pos_++]);
        return varint_slow(what);
    }
    std::uint64_t varint_slow(const char* what) {
        const std::uint64_t start = offset();
        std::uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (pos_ >= data_.size()) throw decode_error(start, std::string("truncated ") + what);
            const std::uint8_t b = static_cast<std::uint8_t>(data_[pos_++]);
            if (shift == 63 && b > 1) throw decode_error(start, std::string(what) + " overflows 64 bits");
            v |= std::uint64_t{b & 0x7Fu} << shift;
            if (!(b & 0x80)) return v;
        }
        throw decode_error(start, std::string(what) + " is longer than 10 bytes");
    }
    std::uint64_t fixed(int n) {
        if (data_.size() - pos_ < static_cast<std::size_t>(n))
            throw decode_error(offset(), "truncated fixed" + std::to_string(8 * n) + " value");
        std::uint64_t v = 0;
        for (int i = 0; i < n; ++i) v |= std::uint64_t{static_cast<std::uint8_t>(data_[pos_ + i])} << (8 * i);
        pos_ += n;
        return v;
    }

    std::string_view data_;
    std::uint64_t base_;
    std::size_t pos_ = 0;
};

}  // namespace pipescope::trace::proto
