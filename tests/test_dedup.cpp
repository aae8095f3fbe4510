#include <pipescope/workloads/dedup.hpp>
#include <pipescope/workloads/workload.hpp>

#include "support/test_scale.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

using namespace pipescope;
using namespace pipescope::workloads;

namespace {

dedup_config small_config() {
    dedup_config c;
    c.coarse_size = 16 * 1024;
    c.min_chunk = 256;
    c.avg_chunk = 1024;
    c.max_chunk = 4096;
    c.level = 1;
    return c;
}

byte_vector serial_archive(const byte_vector& input, const dedup_config& c, dedup_stats* st = nullptr) {
    memory_reader in(input);
    return dedup_serial(in, c, st);
}

byte_vector pipeline_archive(scheduler& s, const byte_vector& input, const dedup_config& c, dedup_form form,
                             const pipeline_options& o = {}, dedup_stats* st = nullptr) {
    memory_reader in(input);
    return dedup_pipeline(s, in, c, form, o, nullptr, st);
}

byte_vector random_bytes(std::size_t n, std::uint64_t seed) {
    byte_vector v(n);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (auto& b : v) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<std::uint8_t>(x >> 24);
    }
    return v;
}

// The archive with its last byte of compressed data (of the first 'N' record) flipped.
std::size_t first_chunk_data_offset() { return 8 + 5 * 4 + 1 + 20 + 4 + 4; }

std::string restore_error(const byte_vector& archive) {
    try {
        dedup_restore(archive);
    } catch (const archive_error& e) {
        return e.what();
    }
    return "no error";
}

}   // namespace

TEST_CASE("dedup: the corpus is deterministic and depends on the seed", "[dedup]") {
    CHECK(dedup_corpus(100000, 7) == dedup_corpus(100000, 7));
    CHECK(dedup_corpus(100000, 7) != dedup_corpus(100000, 8));
    CHECK(dedup_corpus(12345, 1).size() == 12345);
    CHECK(dedup_corpus(0, 1).empty());
}

TEST_CASE("dedup: fine chunks respect min/max and are content-defined", "[dedup]") {
    const dedup_config c = small_config();
    const byte_vector data = random_bytes(200000, 3);
    const auto ends = fine_chunk_ends(data.data(), data.size(), c);
    REQUIRE(!ends.empty());
    CHECK(ends.back() == data.size());
    std::size_t begin = 0;
    for (std::size_t k = 0; k < ends.size(); ++k) {
        const std::size_t len = ends[k] - begin;
        CHECK(len <= c.max_chunk);
        if (k + 1 < ends.size()) CHECK(len > c.min_chunk);
        begin = ends[k];
    }
    const double mean = static_cast<double>(data.size()) / static_cast<double>(ends.size());
    CHECK(mean > 0.5 * static_cast<double>(c.avg_chunk));
    CHECK(mean < 2.0 * static_cast<double>(c.avg_chunk));

    // The same bytes behind a 777-byte prefix are cut at the same places after resynchronising.
    byte_vector shifted = random_bytes(777, 99);
    shifted.insert(shifted.end(), data.begin(), data.end());
    const auto shifted_ends = fine_chunk_ends(shifted.data(), shifted.size(), c);
    std::size_t considered = 0, common = 0;
    for (std::size_t e : shifted_ends) {
        if (e <= 777 + c.max_chunk) continue;   // still resynchronising
        ++considered;
        if (std::binary_search(ends.begin(), ends.end(), e - 777)) ++common;
    }
    CHECK(considered > 100);
    CHECK(common == considered);
    CHECK(fine_chunk_ends(data.data(), 0, c).empty());
}

TEST_CASE("dedup: both forms equal the serial archive for every policy, P = 1, 2", "[dedup]") {
    const byte_vector input = dedup_corpus(static_cast<std::size_t>(testing::scaled(256, 128)) * 1024, 11);
    for (const dedup_config& c : {small_config(), dedup_config{32 * 1024, 1024, 4096, 32 * 1024, 6}}) {
        dedup_stats serial_stats;
        const byte_vector expected = serial_archive(input, c, &serial_stats);
        for (unsigned p : {1u, 2u}) {
            scheduler s({p});
            for (const auto& policy : pipeline_policies()) {
                for (dedup_form form : {dedup_form::skip, dedup_form::fanout}) {
                    for (int variant = 0; variant < testing::scaled(3, 2); ++variant) {
                        pipeline_options o;
                        o.policy = policy.name;
                        o.throttle = variant == 1 ? 1 : 0;
                        o.lazy_enabling = variant != 2;
                        o.dependency_folding = variant != 2;
                        dedup_stats st;
                        CAPTURE(p, policy.name, dedup_form_name(form), variant, c.min_chunk);
                        REQUIRE(pipeline_archive(s, input, c, form, o, &st) == expected);
                        CHECK(st.fine_chunks == serial_stats.fine_chunks);
                        CHECK(st.new_chunks == serial_stats.new_chunks);
                        CHECK(st.duplicate_chunks == serial_stats.duplicate_chunks);
                    }
                }
            }
        }
    }
}

TEST_CASE("dedup: equal chunks hashed out of order still store the first occurrence", "[dedup][stress]") {
    // Many identical chunks close together: concurrent iterations race for the same table entry,
    // and the later one in input order is often hashed first.
    byte_vector input;
    const byte_vector a = random_bytes(3000, 1), b = random_bytes(5000, 2);
    for (int k = 0; k < 60; ++k) {
        const byte_vector& part = (k % 3 == 0) ? b : a;
        input.insert(input.end(), part.begin(), part.end());
        const byte_vector fresh = random_bytes(700 + 37 * k, 100 + k);
        input.insert(input.end(), fresh.begin(), fresh.end());
    }
    const dedup_config c = small_config();
    const byte_vector expected = serial_archive(input, c);
    scheduler s({4});
    for (int rep = 0; rep < testing::scaled(20, 4); ++rep) {
        for (dedup_form form : {dedup_form::skip, dedup_form::fanout}) {
            pipeline_options o;
            o.throttle = 2 + rep % 7;
            CAPTURE(rep, dedup_form_name(form));
            REQUIRE(pipeline_archive(s, input, c, form, o) == expected);
        }
    }
}

TEST_CASE("dedup: restore gives back the input", "[dedup]") {
    scheduler s({2});
    const dedup_config c = small_config();
    auto round_trip = [&](const byte_vector& input) {
        const byte_vector serial = serial_archive(input, c);
        CHECK(dedup_restore(serial) == input);
        for (dedup_form form : {dedup_form::skip, dedup_form::fanout}) {
            const byte_vector archive = pipeline_archive(s, input, c, form);
            CHECK(archive == serial);
            CHECK(dedup_restore(archive) == input);
        }
    };
    SECTION("generated corpora") {
        for (std::uint64_t seed : {1u, 2u, 3u}) round_trip(dedup_corpus(200000 + 1234 * seed, seed));
    }
    SECTION("empty input") {
        round_trip({});
        CHECK(dedup_restore(serial_archive({}, c)).empty());
    }
    SECTION("tiny inputs") {
        round_trip({42});
        round_trip(random_bytes(100, 5));
        round_trip(random_bytes(c.min_chunk + 1, 6));
        round_trip(byte_vector(c.coarse_size * 2 + 1, 0));   // one repeated block, all duplicates
    }
    SECTION("incompressible random data") {
        const byte_vector input = random_bytes(150000, 77);
        round_trip(input);
        dedup_stats st;
        serial_archive(input, c, &st);
        CHECK(st.duplicate_chunks == 0);
    }
    SECTION("a real file from this machine, streamed from disk") {
        std::string path;
        for (const char* p : {"/etc/services", "/usr/bin/cmake", "/bin/sh"})
            if (std::filesystem::exists(p)) {
                path = p;
                break;
            }
        REQUIRE(!path.empty());
        const byte_vector input = read_whole_file(path);
        file_reader serial_in(path);
        const byte_vector serial = dedup_serial(serial_in, c);
        CHECK(dedup_restore(serial) == input);
        file_reader pipe_in(path);
        CHECK(dedup_pipeline(s, pipe_in, c, dedup_form::fanout, {}) == serial);
    }
}

TEST_CASE("dedup: deduplication really happens", "[dedup]") {
    const byte_vector input = dedup_corpus(1 << 20, 4);
    dedup_config c;   // the defaults
    c.coarse_size = 64 * 1024;
    dedup_stats st;
    const byte_vector archive = serial_archive(input, c, &st);
    CHECK(st.input_bytes == input.size());
    CHECK(st.fine_chunks == st.new_chunks + st.duplicate_chunks);
    CHECK(st.duplicate_chunks * 5 > st.fine_chunks);   // at least a fifth of the chunks repeat
    CHECK(archive.size() * 3 < input.size());

    // A second copy of the whole input costs only references.
    byte_vector twice = input;
    twice.insert(twice.end(), input.begin(), input.end());
    dedup_stats st2;
    const byte_vector archive2 = serial_archive(twice, c, &st2);
    CHECK(st2.new_chunks == st.new_chunks);
    CHECK(st2.duplicate_chunks == st.duplicate_chunks + st.fine_chunks);
    CHECK(archive2.size() < archive.size() + st.fine_chunks * 9 + 64);
    CHECK(dedup_restore(archive2) == twice);
}

TEST_CASE("dedup: corrupt archives are reported with the byte offset", "[dedup]") {
    const dedup_config c = small_config();
    byte_vector input = dedup_corpus(60000, 9);
    const byte_vector good = serial_archive(input, c);
    REQUIRE(dedup_restore(good) == input);

    byte_vector bad = good;
    bad[0] = 'X';
    CHECK_THAT(restore_error(bad), Catch::Contains("at byte offset 0") && Catch::Contains("not a dedup archive"));

    bad = good;
    bad[8] = 9;
    CHECK_THAT(restore_error(bad), Catch::Contains("at byte offset 8") && Catch::Contains("format version 9"));

    bad = good;
    bad[first_chunk_data_offset() + 3] ^= 0xff;
    const std::string flipped = restore_error(bad);
    CHECK_THAT(flipped, Catch::Contains("chunk 0") && Catch::Contains("at byte offset"));

    // Every truncation is an error, never a crash or a short output.
    for (std::size_t cut = 0; cut < good.size(); cut += (cut < 64 ? 1 : 97)) {
        CAPTURE(cut);
        const byte_vector truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
        CHECK_THROWS_AS(dedup_restore(truncated), archive_error);
    }
    CHECK_THAT(restore_error(byte_vector(good.begin(), good.end() - 1)), Catch::Contains("truncated"));

    bad = good;
    bad.push_back(0);
    CHECK_THAT(restore_error(bad),
               Catch::Contains("at byte offset " + std::to_string(good.size())) && Catch::Contains("after the trailer"));

    // A duplicate that points forward.
    {
        archive_writer w(c);
        const byte_vector z = zlib_compress(input.data(), 300, 1);
        w.add_new(sha1_of(input.data(), 300), 300, z);
        w.add_duplicate(0);
        byte_vector a = w.finish();
        REQUIRE(dedup_restore(a).size() == 600);
        const std::size_t index_at = 8 + 5 * 4 + 1 + 20 + 8 + z.size() + 1;
        a[index_at] = 5;
        CHECK_THAT(restore_error(a),
                   Catch::Contains("at byte offset " + std::to_string(index_at)) && Catch::Contains("duplicate of chunk 5"));
        CHECK_THROWS_AS(w.add_duplicate(3), std::logic_error);
    }
    // A chunk whose data decompresses fine but does not match its SHA-1.
    {
        archive_writer w(c);
        w.add_new(sha1_of(input.data(), 300), 300, zlib_compress(input.data() + 1, 300, 1));
        CHECK_THAT(restore_error(w.finish()), Catch::Contains("at byte offset 29") && Catch::Contains("SHA-1"));
    }
}

TEST_CASE("dedup: the workload runs both forms, validates parameters, writes the archive", "[dedup]") {
    const workload* w = find_workload("dedup");
    REQUIRE(w != nullptr);
    scheduler s({2});
    for (const char* form : {"skip", "fanout"}) {
        run_request r;
        r.size = input_size::tiny;
        r.params = param_set::parse({std::string("form=") + form});
        CHECK(w->program(r).stages.size() == (std::string(form) == "skip" ? 4u : 3u));
        const run_report rep = w->run(s, r);
        CAPTURE(rep.description);
        CHECK(rep.matches_reference);
        CHECK_THAT(rep.description, Catch::Contains("restores the input"));
    }

    const std::string path = (std::filesystem::temp_directory_path() / "pipescope-test-dedup.archive").string();
    run_request r;
    r.size = input_size::tiny;
    r.seed = 5;
    r.params = param_set::parse({"output=" + path, "level=1", "form=fanout"});
    CHECK(w->run(s, r).matches_reference);
    CHECK(dedup_restore(read_whole_file(path)) == dedup_corpus(256 * 1024, 5));
    std::filesystem::remove(path);

    auto error_of = [&](std::vector<std::string> params) {
        run_request bad;
        bad.size = input_size::tiny;
        bad.params = param_set::parse(params);
        try {
            w->run(s, bad);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of({"form=sideways"}), Catch::Contains("form=sideways: expected skip or fanout"));
    CHECK_THAT(error_of({"min_chunk=8"}), Catch::Contains("min_chunk=8") && Catch::Contains("between 64"));
    CHECK_THAT(error_of({"min_chunk=5000"}), Catch::Contains("avg_chunk=4096") && Catch::Contains("min_chunk+2"));
    CHECK_THAT(error_of({"level=10"}), Catch::Contains("level=10") && Catch::Contains("between 0 and 9"));
    CHECK_THAT(error_of({"input=/nonexistent/dedup-input"}), Catch::Contains("/nonexistent/dedup-input"));
    CHECK_THAT(error_of({"colour=red"}), Catch::Contains("unknown parameter(s) for dedup: colour"));
}
