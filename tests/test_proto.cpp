// The hand-written protobuf encoder and reader used for Perfetto traces.
#include <pipescope/trace/proto_reader.hpp>
#include <pipescope/trace/proto_writer.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace pipescope::trace::proto;

namespace {
std::vector<std::uint8_t> bytes(std::initializer_list<int> b) {
    std::vector<std::uint8_t> v;
    for (int x : b) v.push_back(static_cast<std::uint8_t>(x));
    return v;
}
std::string_view view(const std::vector<std::uint8_t>& v) { return {reinterpret_cast<const char*>(v.data()), v.size()}; }
}   // namespace

TEST_CASE("proto writer: canonical encodings of the fields Perfetto needs", "[proto]") {
    std::vector<std::uint8_t> out;
    writer w(out);
    w.uint_field(1, 300);   // 08 AC 02
    CHECK(out == bytes({0x08, 0xAC, 0x02}));
    out.clear();
    w.fixed64_field(47, 0x0102030405060708);   // flow_ids: tag F9 02, 8 bytes little-endian
    CHECK(out == bytes({0xF9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
    out.clear();
    w.int_field(1, -1);   // negative int64: 10-byte varint
    CHECK(out == bytes({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
    out.clear();
    w.bytes_field(23, std::string_view("ab"));   // TrackEvent.name: tag BA 01
    CHECK(out == bytes({0xBA, 0x01, 0x02, 'a', 'b'}));
    out.clear();
    {
        nested track_descriptor(w, 60);   // tag E2 03, then a 4-byte redundant length
        w.uint_field(1, 5);
        nested counter(w, 8);   // an empty sub-message is meaningful
    }
    CHECK(out == bytes({0xE2, 0x03, 0x87, 0x80, 0x80, 0x00, 0x08, 0x05, 0x42, 0x80, 0x80, 0x80, 0x00}));
}

TEST_CASE("proto reader: reads back what the writer wrote, nested, with file offsets", "[proto]") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
        std::vector<std::uint8_t> out;
        writer w(out);
        const std::uint64_t a = rng() >> (rng() % 64);
        const std::int64_t b = static_cast<std::int64_t>(rng());
        const double d = static_cast<double>(rng() % 100000) / 7.0;
        const std::string s(rng() % 300, 'x');
        {
            nested m(w, 11);
            w.uint_field(1, a);
            w.int_field(2, b);
            w.double_field(3, d);
            w.bytes_field(4, std::string_view(s));
        }
        w.fixed64_field(47, a);

        reader r(view(out), 1000);
        field outer = r.next();
        REQUIRE(outer.number == 11);
        REQUIRE(outer.wire_type == 2);
        reader in = reader::nested(outer);
        CHECK(in.offset() == 1000 + 1 + 4);
        CHECK(in.next().value == a);
        CHECK(in.next().as_int() == b);
        CHECK(in.next().as_double() == d);
        field sf = in.next();
        CHECK(sf.bytes == s);
        CHECK(in.done());
        field f = r.next();
        CHECK(f.number == 47);
        CHECK(f.value == a);
        CHECK(r.done());
    }
}

TEST_CASE("proto reader: malformed input names the byte offset and the reason", "[proto][errors]") {
    auto error_of = [](std::vector<std::uint8_t> data) -> std::string {
        try {
            reader r(view(data));
            while (!r.done()) r.next();
        } catch (const decode_error& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK(error_of(bytes({0x08, 0x96})) == "byte 1: truncated varint value");
    CHECK(error_of(bytes({0x08, 0x01, 0x12, 0x05, 'a'})) ==
          "byte 3: length 5 runs past the end of the enclosing data (1 bytes left)");
    CHECK(error_of(bytes({0x0B})) == "byte 0: unsupported wire type 3 (field 1)");
    CHECK(error_of(bytes({0x00})) == "byte 0: field number 0 is invalid");
    CHECK(error_of(bytes({0x09, 1, 2})) == "byte 1: truncated fixed64 value");
}
