// The Perfetto reader names every violation of the importer's rules with its byte offset, and
// reports malformed wire data as a decode error, never a crash.
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/proto_writer.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace pipescope::trace;

namespace {

// Small hand-built traces: each helper appends one TracePacket.
struct builder {
    std::vector<std::uint8_t> bytes;
    proto::writer w{bytes};

    void track(std::uint64_t uuid, const char* name) {
        proto::nested packet(w, 1);
        proto::nested td(w, 60);
        w.uint_field(1, uuid);
        w.bytes_field(2, std::string_view(name));
    }
    // A TrackEvent with an inline name (field 23) unless name is null.
    void event(std::uint64_t ts, std::uint64_t seq, std::uint64_t type, std::uint64_t track, const char* name,
               std::uint64_t flags = 0, bool packed_flow = false) {
        proto::nested packet(w, 1);
        w.uint_field(8, ts);
        w.uint_field(10, seq);
        if (flags) w.uint_field(13, flags);
        proto::nested te(w, 11);
        w.uint_field(9, type);
        w.uint_field(11, track);
        if (name) w.bytes_field(23, std::string_view(name));
        if (packed_flow) {
            const std::vector<std::uint8_t> ids = {1, 0, 0, 0, 0, 0, 0, 0};
            w.bytes_field(47, ids);   // wrong: flow_ids must be unpacked fixed64
        }
    }
    std::string_view view() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
};

bool has_problem(const perfetto_file& f, const std::string& text) {
    for (const auto& p : f.problems)
        if (p.find(text) != std::string::npos) return true;
    return false;
}

}   // namespace

TEST_CASE("perfetto reader: a sound trace has no problems and its slices close", "[perfetto][reader]") {
    builder b;
    b.track(7, "worker 0");
    b.event(100, 1, 1, 7, "stage 1");
    b.event(150, 1, 3, 7, "steal");
    b.event(200, 1, 2, 7, nullptr);
    const perfetto_file f = read_perfetto(b.view());
    CHECK(f.problems.empty());
    REQUIRE(f.tracks.count(7) == 1);
    CHECK(f.tracks.at(7).name == "worker 0");
    const auto s = summarize(f);
    CHECK(s.packets == 4);
    CHECK(s.slices == 1);
    CHECK(s.instants == 1);
    CHECK(s.open_slices == 0);
    CHECK(s.unmatched_ends == 0);
}

TEST_CASE("perfetto reader: rule violations are named with their byte offsets", "[perfetto][reader][errors]") {
    builder b;
    b.track(7, "worker 0");
    b.event(100, 1, 1, 7, "stage 1");
    b.event(200, 1, 2, 7, "stage 1");         // END with a name: the importer may leave the slice open
    b.event(300, 1, 1, 9, "stage 2");         // undescribed track
    b.event(400, 1, 2, 7, nullptr);           // an END with nothing open on track 7
    b.event(500, 0, 3, 7, "lost");            // sequence id 0: dropped by the importer
    b.event(600, 2, 3, 7, "x", 2);            // needs incremental state nobody cleared
    b.event(700, 1, 3, 7, "flow", 0, true);   // packed flow ids
    const perfetto_file f = read_perfetto(b.view());
    CHECK(has_problem(f, "SLICE_END carries a name"));
    CHECK(has_problem(f, "track 9 used before it was described"));
    CHECK(has_problem(f, "without a timestamp or a sequence id"));
    CHECK(has_problem(f, "needs incremental state before any packet cleared it"));
    CHECK(has_problem(f, "flow id not written as fixed64"));
    for (const auto& p : f.problems) CHECK(p.rfind("byte ", 0) == 0);
    const auto s = summarize(f);
    CHECK(s.open_slices == 1);      // the slice on track 9
    CHECK(s.unmatched_ends == 1);   // the second END on track 7
}

TEST_CASE("perfetto reader: truncated or corrupt data is a decode error with an offset", "[perfetto][reader][errors]") {
    builder b;
    b.track(7, "worker 0");
    b.event(100, 1, 1, 7, "stage 1");
    for (std::size_t cut = 1; cut < b.bytes.size(); ++cut) {
        CAPTURE(cut);
        const std::string_view part = b.view().substr(0, cut);
        try {
            (void)read_perfetto(part);
            // Some prefixes end exactly between packets: then the result is a shorter, sound trace.
        } catch (const proto::decode_error& e) {
            CHECK(e.offset() <= cut);
            CHECK(std::string(e.what()).rfind("byte ", 0) == 0);
        }
    }
    std::string junk(64, '\xFF');
    CHECK_THROWS_AS(read_perfetto(junk), proto::decode_error);
}

// ---------------------------------------------------------------------------------------------
// Annotations, compression, foreign-trace features and malformed input.

#include "support/trace_builder.hpp"

#include <functional>
#include <random>

using pipescope::test::trace_builder;

namespace {

std::string packet_bytes(const std::function<void(proto::writer&)>& body) {
    std::vector<std::uint8_t> b;
    proto::writer w(b);
    {
        proto::nested packet(w, 1);
        body(w);
    }
    return std::string(b.begin(), b.end());
}

// Runs `read` and returns the decode error's message ("" if none); fails on any other exception.
template <class F>
std::string decode_error_of(F&& read) {
    try {
        read();
    } catch (const proto::decode_error& e) {
        return e.what();
    }
    return "";
}

}   // namespace

TEST_CASE("perfetto reader: string, int, double and bool annotations", "[perfetto][reader]") {
    std::vector<std::uint8_t> bytes;
    proto::writer w(bytes);
    {
        proto::nested p(w, 1);
        proto::nested td(w, 60);
        w.uint_field(1, 5);
        w.bytes_field(2, std::string_view("t"));
    }
    {
        proto::nested p(w, 1);
        w.uint_field(8, 10);
        w.uint_field(10, 1);
        proto::nested te(w, 11);
        w.uint_field(9, 3);
        w.uint_field(11, 5);
        w.bytes_field(23, std::string_view("x"));
        auto ann = [&](const char* name, auto&& value) {
            proto::nested da(w, 4);
            w.bytes_field(10, std::string_view(name));
            value();
        };
        ann("s", [&] { w.bytes_field(6, std::string_view("hello")); });
        ann("i", [&] { w.int_field(4, -7); });
        ann("d", [&] { w.double_field(5, 2.5); });
        ann("b", [&] { w.bool_field(2, true); });
        ann("u", [&] { w.uint_field(3, 42); });
        {
            proto::nested da(w, 4);   // a dict {k: 1, l: [2, 3]}
            w.bytes_field(10, std::string_view("dict"));
            {
                proto::nested e(w, 11);
                w.bytes_field(10, std::string_view("k"));
                w.uint_field(3, 1);
            }
            proto::nested l(w, 11);
            w.bytes_field(10, std::string_view("l"));
            for (int v : {2, 3}) {
                proto::nested a(w, 12);
                w.uint_field(3, v);
            }
        }
    }
    const auto f = read_perfetto(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    CHECK(f.problems.empty());
    REQUIRE(f.events.size() == 1);
    const auto& e = f.events[0];
    CHECK(e.str_args.at("s") == "hello");
    CHECK(static_cast<std::int64_t>(e.args.at("i")) == -7);
    CHECK(e.double_args.at("d") == 2.5);
    CHECK(e.args.at("b") == 1);
    CHECK(e.args.at("u") == 42);
    CHECK(e.args.at("dict.k") == 1);
    CHECK(e.args.at("dict.l[0]") == 2);
    CHECK(e.args.at("dict.l[1]") == 3);
}

TEST_CASE("perfetto reader: compressed packets read like inline ones", "[perfetto][reader][compressed]") {
    trace_builder inner;
    inner.custom(7, 0, "worker 0");
    inner.slice_begin(100, 7, "stage 1", {{"iteration", 3}});
    inner.mark(150, 7, "steal");
    inner.slice_end(200, 7);
    const auto plain = read_perfetto(inner.view());
    const std::string wrapped = pipescope::test::compressed_packet(pipescope::test::zlib_compress(inner.view()));
    const auto f = read_perfetto(wrapped);
    CHECK(f.problems.empty());
    REQUIRE(f.events.size() == plain.events.size());
    for (std::size_t i = 0; i < f.events.size(); ++i) {
        CHECK(f.events[i].name == plain.events[i].name);
        CHECK(f.events[i].ts == plain.events[i].ts);
        CHECK(f.events[i].offset == plain.events[i].offset);   // offsets inside the decompressed data
        CHECK(f.events[i].args == plain.events[i].args);
    }
    CHECK(f.packets == plain.packets + 1);

    SECTION("problems inside name both offsets") {
        trace_builder bad;
        bad.slice_begin(100, 9, "x");   // undescribed track
        std::string file = packet_bytes([](proto::writer& w) { w.uint_field(8, 1); });
        const std::size_t outer = file.size();
        file += pipescope::test::compressed_packet(pipescope::test::zlib_compress(bad.view()));
        const auto g = read_perfetto(file);
        REQUIRE(g.problems.size() == 1);
        CHECK(g.problems[0] == "byte 0 (inside the compressed packet at byte " + std::to_string(outer) +
                                   "): track 9 used before it was described");
    }
    SECTION("a decode error inside names both offsets") {
        std::string junk = inner.str();
        junk.resize(junk.size() - 3);   // truncated inner packet
        const std::string file = pipescope::test::compressed_packet(pipescope::test::zlib_compress(junk));
        const std::string msg = decode_error_of([&] { (void)read_perfetto(file); });
        CHECK(msg.find("(inside the compressed packet at byte 0)") != std::string::npos);
        CHECK(msg.rfind("byte ", 0) == 0);
    }
    SECTION("nested compressed packets are refused") {
        const std::string once = pipescope::test::compressed_packet(pipescope::test::zlib_compress(inner.view()));
        const std::string twice = pipescope::test::compressed_packet(pipescope::test::zlib_compress(once));
        const std::string msg = decode_error_of([&] { (void)read_perfetto(twice); });
        CHECK(msg == "byte 5 (inside the compressed packet at byte 0): compressed_packets nested inside compressed_packets");
    }
    SECTION("corrupt and truncated zlib data") {
        std::string z = pipescope::test::zlib_compress(inner.view());
        std::string cut = z.substr(0, z.size() / 2);
        CHECK(decode_error_of([&] {
                  (void)read_perfetto(pipescope::test::compressed_packet(cut));
              }).find("truncated zlib stream") != std::string::npos);
        std::string flipped = z;
        flipped[0] = 0x00;   // bad zlib header
        CHECK(decode_error_of([&] {
                  (void)read_perfetto(pipescope::test::compressed_packet(flipped));
              }).find("corrupt zlib data") != std::string::npos);
    }
}

TEST_CASE("perfetto reader: a zlib bomb is refused without inflating it", "[perfetto][reader][compressed][errors]") {
    const std::string zeros(64u << 20, '\0');   // 64 MiB of zeros: about 64 KiB compressed
    const std::string bomb = pipescope::test::zlib_compress(zeros, 9);
    REQUIRE(bomb.size() < 100000);
    const std::string file =
        packet_bytes([](proto::writer& w) { w.uint_field(8, 1); }) + pipescope::test::compressed_packet(bomb);
    const std::string msg = decode_error_of([&] { (void)read_perfetto(file); });
    INFO(msg);
    CHECK(msg.rfind("byte ", 0) == 0);
    CHECK(msg.find("expands beyond") != std::string::npos);
    CHECK(msg.find("times its compressed size") != std::string::npos);

    read_options small;
    small.max_decompressed_bytes = 1000;
    trace_builder inner;
    for (int i = 0; i < 100; ++i) inner.mark(i, 0, "event number " + std::to_string(i));
    const std::string msg2 = decode_error_of([&] {
        (void)read_perfetto(pipescope::test::compressed_packet(pipescope::test::zlib_compress(inner.view())), small);
    });
    CHECK(msg2.find("limit on the decompressed size of the whole file") != std::string::npos);
}

TEST_CASE("perfetto reader: inflating ahead on a second thread gives the same events and the same errors",
          "[perfetto][reader][compressed]") {
    read_options inline_only, ahead;
    inline_only.inflate_ahead_min_bytes = ~std::uint64_t{0};
    ahead.inflate_ahead_min_bytes = 0;   // every file, however small
    // Many compressed packets (more than the queue holds), one of them with trailing bytes.
    std::string file;
    for (int k = 0; k < 20; ++k) {
        trace_builder inner;
        inner.custom(7 + k, 0, "worker " + std::to_string(k));
        for (int i = 0; i < 50; ++i) {
            inner.slice_begin(1000 * k + 10 * i, 7 + k, "stage " + std::to_string(i % 3), {{"iteration", i}});
            inner.slice_end(1000 * k + 10 * i + 5, 7 + k);
        }
        std::string z = pipescope::test::zlib_compress(inner.view());
        if (k == 7) z += "xx";
        file += pipescope::test::compressed_packet(z);
    }
    const auto a = read_perfetto(file, inline_only);
    const auto b = read_perfetto(file, ahead);
    REQUIRE(a.events.size() == 20 * 100);
    REQUIRE(b.events.size() == a.events.size());
    for (std::size_t i = 0; i < a.events.size(); ++i) {
        CHECK(b.events[i].ts == a.events[i].ts);
        CHECK(b.events[i].name == a.events[i].name);
        CHECK(b.events[i].offset == a.events[i].offset);
        CHECK(b.events[i].args == a.events[i].args);
    }
    REQUIRE(a.problems.size() == 1);   // the trailing bytes, reported once, at the same offset
    CHECK(b.problems == a.problems);
    CHECK(b.packets == a.packets);

    // Errors: a corrupt packet after good ones, a truncated one, a bomb, the whole-file limit.
    std::string z = pipescope::test::zlib_compress(std::string_view(file).substr(0, 300));
    std::string corrupt = z;
    corrupt[corrupt.size() / 2] ^= 0x55;
    const std::string zeros(8u << 20, '\0');
    std::vector<std::string> bad_files = {
        file + pipescope::test::compressed_packet(corrupt),
        file + pipescope::test::compressed_packet(z.substr(0, z.size() / 2)),
        file + pipescope::test::compressed_packet(pipescope::test::zlib_compress(zeros, 9)),
    };
    for (const std::string& bad : bad_files) {
        const std::string want = decode_error_of([&] { (void)read_perfetto(bad, inline_only); });
        REQUIRE_FALSE(want.empty());
        CHECK(decode_error_of([&] { (void)read_perfetto(bad, ahead); }) == want);
    }
    read_options small_inline = inline_only, small_ahead = ahead;
    small_inline.max_decompressed_bytes = small_ahead.max_decompressed_bytes = 20000;
    const std::string want = decode_error_of([&] { (void)read_perfetto(file, small_inline); });
    CHECK(want.find("limit on the decompressed size of the whole file") != std::string::npos);
    CHECK(decode_error_of([&] { (void)read_perfetto(file, small_ahead); }) == want);
}

TEST_CASE("perfetto reader: foreign features: defaults, interning resets, counters, old flow ids", "[perfetto][reader]") {
    trace_builder b;
    b.custom(7, 0, "t");
    b.counter_track(8, 0, "c");
    trace_builder::event e;
    e.ts = 10, e.seq = 3, e.type = trace_builder::instant, e.flags = 3, e.default_track = 7;
    e.intern_names = {{1, "first"}};
    e.name_iid = 1;
    b.add(e);   // no track_uuid: the sequence's default
    e = {};
    e.ts = 20, e.seq = 3, e.type = trace_builder::instant, e.flags = 2, e.name_iid = 1, e.track = 7;
    b.add(e);
    e = {};
    e.ts = 30, e.seq = 3, e.type = trace_builder::instant, e.flags = 1, e.name_iid = 1, e.track = 7;
    b.add(e);   // cleared: iid 1 is gone
    e = {};
    e.ts = 40, e.seq = 3, e.type = trace_builder::counter, e.track = 8, e.double_counter_value = 1.5;
    b.add(e);
    e = {};
    e.ts = 50, e.seq = 4, e.type = trace_builder::instant, e.name = "g";
    b.add(e);   // no track at all: global track 0
    std::string file = b.str();
    file += packet_bytes([](proto::writer& w) {
        w.uint_field(8, 60);
        w.uint_field(10, 4);
        proto::nested te(w, 11);
        w.uint_field(9, 3);
        w.uint_field(11, 7);
        w.uint_field(36, 99);   // flow_ids_old
        w.uint_field(42, 98);   // terminating_flow_ids_old
    });
    const auto f = read_perfetto(file);
    REQUIRE(f.events.size() == 6);
    CHECK(f.events[0].track == 7);
    CHECK(f.events[0].name == "first");
    CHECK(f.events[1].name == "first");
    CHECK(f.events[2].name.empty());
    CHECK(has_problem(f, "event name iid 1 was never interned"));
    CHECK(f.events[3].double_counter_value == 1.5);
    CHECK(f.events[4].track == 0);
    CHECK(f.events[5].flows == std::vector<std::uint64_t>{99});
    CHECK(f.events[5].terminating == std::vector<std::uint64_t>{98});
    CHECK(f.problems.size() == 1);
}

TEST_CASE("perfetto reader: malformed input names the offset and the problem", "[perfetto][reader][errors]") {
    SECTION("wrong wire type for a message field") {
        const std::string file = packet_bytes([](proto::writer& w) {
            w.uint_field(8, 1);
            w.uint_field(11, 5);   // track_event as a varint
        });
        CHECK(decode_error_of([&] { (void)read_perfetto(file); }) ==
              "byte 7: TracePacket.track_event (field 11) has wire type varint, expected length-delimited");
    }
    SECTION("wrong wire type for a scalar field") {
        const std::string file = packet_bytes([](proto::writer& w) { w.bytes_field(8, std::string_view("ab")); });
        CHECK(decode_error_of([&] { (void)read_perfetto(file); }) ==
              "byte 5: TracePacket.timestamp (field 8) has wire type length-delimited, expected varint");
    }
    SECTION("Trace.packet that is not length-delimited") {
        const std::string file = "\x08\x01";
        CHECK(decode_error_of([&] { (void)read_perfetto(file); }) == "byte 0: Trace.packet must be length-delimited");
    }
    SECTION("a length of 2^62") {
        std::vector<std::uint8_t> b;
        proto::writer w(b);
        w.tag(1, proto::wire::len);
        w.varint(std::uint64_t{1} << 62);
        b.push_back(0);
        const std::string file(b.begin(), b.end());
        CHECK(decode_error_of([&] { (void)read_perfetto(file); }) ==
              "byte 1: length 4611686018427387904 runs past the end of the enclosing data (1 bytes left)");
        CHECK(decode_error_of([&] { (void)load_trace(file); }).find("byte 1: length 4611686018427387904") == 0);
    }
    SECTION("a length past the end inside a packet") {
        const std::string file = packet_bytes([](proto::writer& w) {
            w.tag(11, proto::wire::len);
            w.varint(1000);
        });
        CHECK(decode_error_of([&] { (void)read_perfetto(file); }) ==
              "byte 6: length 1000 runs past the end of the enclosing data (0 bytes left)");
    }
    SECTION("nesting 10,000 deep") {
        std::vector<std::uint8_t> b;
        proto::writer w(b);
        std::vector<std::size_t> open;
        open.push_back(w.begin_nested(1));
        w.uint_field(8, 1);
        w.uint_field(10, 1);
        open.push_back(w.begin_nested(11));
        w.uint_field(9, 3);
        for (int i = 0; i < 10000; ++i) {
            open.push_back(w.begin_nested(i == 0 ? 4 : 11));
            w.bytes_field(10, std::string_view("k"));
        }
        while (!open.empty()) w.end_nested(open.back()), open.pop_back();
        const std::string file(b.begin(), b.end());
        const std::string msg = decode_error_of([&] { (void)read_perfetto(file); });
        CHECK(msg.find("nested deeper than 64 levels") != std::string::npos);
        CHECK(msg.rfind("byte ", 0) == 0);
    }
    SECTION("deeply nested unknown fields are skipped, not followed") {
        std::vector<std::uint8_t> b;
        proto::writer w(b);
        std::vector<std::size_t> open;
        open.push_back(w.begin_nested(1));
        for (int i = 0; i < 10000; ++i) open.push_back(w.begin_nested(1000));
        while (!open.empty()) w.end_nested(open.back()), open.pop_back();
        const std::string file(b.begin(), b.end());
        CHECK(read_perfetto(file).packets == 1);
    }
    SECTION("bad UTF-8 in a name is replaced and reported") {
        trace_builder t;
        t.custom(7, 0, "w");
        t.mark(10, 7,
               std::string("ok\xC3"
                           "(bad"));
        const auto f = read_perfetto(t.view());
        REQUIRE(f.events.size() == 1);
        CHECK(f.events[0].name == "ok\xEF\xBF\xBD(bad");
        REQUIRE(f.problems.size() == 1);
        CHECK(f.problems[0].find("event name is not valid UTF-8") != std::string::npos);
        // The offset is the bad byte's: find it in the file.
        const std::size_t at = t.str().find("ok\xC3") + 2;
        CHECK(f.problems[0].rfind("byte " + std::to_string(at) + ": ", 0) == 0);
    }
    SECTION("unknown fields at every level are ignored") {
        std::vector<std::uint8_t> b;
        proto::writer w(b);
        w.bytes_field(2, std::string_view("padding"));   // unknown Trace field
        {
            proto::nested p(w, 1);
            w.uint_field(8, 5);
            w.uint_field(10, 1);
            w.fixed64_field(900, 1);
            w.bytes_field(901, std::string_view("x"));
            w.tag(902, proto::wire::i32);
            for (int i = 0; i < 4; ++i) w.buffer().push_back(0);
            proto::nested te(w, 11);
            w.uint_field(9, 3);
            w.uint_field(1000, 7);
            w.bytes_field(23, std::string_view("n"));
        }
        const auto f = read_perfetto(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
        CHECK(f.problems.empty());
        REQUIRE(f.events.size() == 1);
        CHECK(f.events[0].name == "n");
    }
    SECTION("invalid wire types 3, 4, 6, 7") {
        for (std::uint8_t wt : {3, 4, 6, 7}) {
            const std::string file = packet_bytes([&](proto::writer& w) { w.varint((9u << 3) | wt); });
            CHECK(decode_error_of([&] { (void)read_perfetto(file); }).find("unsupported wire type") != std::string::npos);
        }
    }
}

TEST_CASE("perfetto reader: truncations and random corruption only ever raise decode errors", "[perfetto][reader][errors]") {
    trace_builder b;
    b.process(1, 10, "p");
    b.thread(2, 10, 11, "worker 0");
    b.slice_begin(100, 2, "stage 0", {{"iteration", 0}, {"stage", 0}});
    b.mark(120, 2, "steal", {{"victim", 1}}, {5});
    b.slice_end(200, 2);
    b.count(150, 1, 3);
    const std::string good = b.str() + pipescope::test::compressed_packet(pipescope::test::zlib_compress(b.view()));
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
        CAPTURE(cut);
        try {
            (void)read_perfetto(std::string_view(good).substr(0, cut));
        } catch (const proto::decode_error& e) {
            CHECK(e.offset() <= cut);
            CHECK(std::string(e.what()).rfind("byte ", 0) == 0);
        }
    }
    std::mt19937 rng(12345);
    for (int round = 0; round < 3000; ++round) {
        std::string bad = good;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
        try {
            (void)read_perfetto(bad);
        } catch (const proto::decode_error&) {
        }
    }
}

// Damaged files (read_options::stop_at_damage): what was read before the damage is kept, as in
// Perfetto's UI, and the error that stopped the reading is named. The viewer reads files so.
namespace {

trace_model load_partial(std::string_view bytes) {
    read_options o;
    o.stop_at_damage = true;
    return load_trace(bytes, o);
}

// A small trace of plain packets followed by one compressed packet holding more.
std::string plain_then_compressed() {
    trace_builder b;
    b.process(1, 10, "p");
    b.thread(2, 10, 11, "worker 0");
    for (int i = 0; i < 6; ++i) {
        b.slice_begin(100 + 100 * i, 2, "stage 0", {{"iteration", static_cast<std::uint64_t>(i)}, {"stage", 0}});
        b.slice_end(150 + 100 * i, 2);
    }
    trace_builder inner;
    inner.mark(900, 2, "steal", {{"victim", 1}}, {});
    inner.mark(950, 2, "steal", {{"victim", 1}}, {});
    return b.str() + pipescope::test::compressed_packet(pipescope::test::zlib_compress(inner.view()));
}

}   // namespace

TEST_CASE("perfetto reader: a file truncated anywhere keeps every packet before the cut", "[perfetto][reader][damage]") {
    const std::string good = plain_then_compressed();
    const trace_model whole = load_trace(good);
    std::uint64_t last_packets = 0;
    for (std::size_t cut = 0; cut <= good.size(); ++cut) {
        CAPTURE(cut);
        const std::string_view prefix = std::string_view(good).substr(0, cut);
        trace_model m;
        REQUIRE_NOTHROW(m = load_partial(prefix));
        CHECK(m.packets >= last_packets);   // a longer prefix never shows less
        last_packets = m.packets;
        if (m.damage.empty()) {
            CHECK(m.packets == load_trace(prefix).packets);   // the cut fell between packets: nothing is wrong
            continue;
        }
        // The damage is the packet the cut runs through; the model is exactly the packets before it.
        CHECK(m.damage_intact_bytes <= m.damage_offset);
        CHECK(m.damage_offset <= cut);
        CHECK(m.damage_file_bytes == cut);
        CHECK(m.damage.rfind("byte " + std::to_string(m.damage_offset) + ": ", 0) == 0);
        const trace_model before = load_trace(prefix.substr(0, m.damage_intact_bytes));
        CHECK(m.packets == before.packets);
        CHECK(m.events == before.events);
        CHECK(m.slices == before.slices);
        CHECK(m.instants == before.instants);
    }
    const trace_model full = load_partial(good);
    CHECK(full.damage.empty());
    CHECK(full.packets == whole.packets);
    CHECK(full.events == whole.events);
}

TEST_CASE("perfetto reader: the K = 2 example truncated at several offsets", "[perfetto][reader][damage]") {
    std::ifstream in(std::filesystem::path(__FILE__).parent_path().parent_path() / "traces" /
                         "pipe-fib-256-piper-K2.pftrace",
                     std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    REQUIRE(bytes.size() > 100000);
    const trace_model whole = load_trace(bytes);
    std::uint64_t last_slices = 0;
    for (const std::size_t cut : {std::size_t{1000}, std::size_t{5000}, std::size_t{20000}, bytes.size() / 3,
                                  bytes.size() / 2, bytes.size() - 1000, bytes.size() - 1}) {
        CAPTURE(cut);
        const trace_model m = load_partial(std::string_view(bytes).substr(0, cut));
        REQUIRE(!m.damage.empty());   // every cut here falls inside a packet
        CHECK(m.damage_intact_bytes < cut);
        CHECK(m.damage_offset <= cut);
        CHECK(m.packets > 0);
        CHECK(m.packets < whole.packets);
        CHECK(m.slices >= last_slices);
        CHECK(m.slices <= whole.slices);
        last_slices = m.slices;
        const trace_model before = load_trace(std::string_view(bytes).substr(0, m.damage_intact_bytes));
        CHECK(m.packets == before.packets);
        CHECK(m.slices == before.slices);
    }
    // The last byte missing: all but the last packet, the run and its workers there.
    const trace_model m = load_partial(std::string_view(bytes).substr(0, bytes.size() - 1));
    REQUIRE(m.runs.size() == whole.runs.size());
    CHECK(m.slices + 1000 > whole.slices);
    // Without stop_at_damage a truncated file is still a decode error.
    CHECK_THROWS_AS(load_trace(std::string_view(bytes).substr(0, bytes.size() - 1)), proto::decode_error);
}

TEST_CASE("perfetto reader: damage inside a compressed packet keeps its packets before the damage",
          "[perfetto][reader][damage]") {
    trace_builder b;
    b.process(1, 10, "p");
    b.thread(2, 10, 11, "worker 0");
    trace_builder inner;
    inner.mark(900, 2, "steal", {{"victim", 1}}, {});
    inner.mark(950, 2, "steal", {{"victim", 1}}, {});
    std::string payload(inner.view());
    payload += "\x0a\xff\xff\x7f";   // a third packet whose length runs far past the payload's end
    const std::string file = b.str() + pipescope::test::compressed_packet(pipescope::test::zlib_compress(payload));
    const trace_model m = load_partial(file);
    CHECK(m.damage.find("inside the compressed packet at byte " + std::to_string(b.str().size())) != std::string::npos);
    CHECK(m.damage_offset == b.str().size());
    CHECK(m.damage_intact_bytes == b.str().size());
    CHECK(m.instants == 2);
}

TEST_CASE("perfetto reader: what is not a Perfetto trace says what it looks like", "[perfetto][reader][damage]") {
    CHECK(not_a_trace_reason("") == "the file is empty");
    CHECK(not_a_trace_reason(plain_then_compressed()).empty());
    const std::string lead = "a Perfetto trace starts with a packet (the byte 0x0A); this is ";
    CHECK(not_a_trace_reason("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1\n") ==
          lead + "text (it begins \"root:x:0:0:root:/root:/b...\")");
    CHECK(not_a_trace_reason("hello\n") == lead + "text (it begins \"hello\")");
    CHECK(not_a_trace_reason(std::string("\x89PNG\r\n\x1a\n\0\0", 10)) == lead + "a PNG image");
    CHECK(not_a_trace_reason("\x1f\x8b\x08") == lead + "gzip-compressed data (decompress it first)");
    CHECK(not_a_trace_reason("  {\"traceEvents\": []}").find(lead + "JSON (a Chrome JSON trace?") == 0);
    CHECK(not_a_trace_reason(std::string("\x01\x02\x00", 3)) == lead + "binary data starting with the byte 0x01");

    const auto dir = std::filesystem::temp_directory_path() / "pipescope-not-a-trace";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "passwd") << "root:x:0:0:root:/root:/bin/bash\n";
    std::ofstream(dir / "empty.pftrace").flush();
    CHECK_THROWS_WITH(load_trace_file(dir / "passwd"), Catch::Contains("passwd: not a Perfetto trace: " + lead + "text"));
    CHECK_THROWS_WITH(load_trace_file(dir / "empty.pftrace"),
                      Catch::EndsWith("empty.pftrace: not a Perfetto trace: the file is empty"));
    std::filesystem::remove_all(dir);
}
