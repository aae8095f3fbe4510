// The Perfetto reader names every violation of the importer's rules with its byte offset, and
// reports malformed wire data as a decode error, never a crash.
#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/proto_writer.hpp>

#include <catch2/catch.hpp>

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

}  // namespace

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
    b.event(200, 1, 2, 7, "stage 1");        // END with a name: the importer may leave the slice open
    b.event(300, 1, 1, 9, "stage 2");        // undescribed track
    b.event(400, 1, 2, 7, nullptr);          // an END with nothing open on track 7
    b.event(500, 0, 3, 7, "lost");           // sequence id 0: dropped by the importer
    b.event(600, 2, 3, 7, "x", 2);           // needs incremental state nobody cleared
    b.event(700, 1, 3, 7, "flow", 0, true);  // packed flow ids
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
