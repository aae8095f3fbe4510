// dedup: a deduplicating compressor (PARSEC's dedup as the seeds describe it: seed 000 §2.2,
// seed 001 §2 Fig. 4 and §10, seed 003 Algorithms 1-2).
//
// The input is read in coarse chunks (serially); each coarse chunk is cut into fine chunks at
// content-defined boundaries (a Gear rolling hash); every fine chunk gets a SHA-1; a global table
// says whether that content was seen before; new chunks are compressed with zlib; records are
// written in input order: a new chunk as its SHA-1 and compressed bytes, a duplicate as the index
// of the earlier stored chunk. dedup_restore rebuilds the input byte for byte.
//
// Two program forms (dedup_form):
//   skip   - one iteration per fine chunk; a chunk already known to be a duplicate skips the
//            compress stage and goes from the hash stage straight to the output stage
//            (stage skipping, seed 003 Alg. 2; seed 000 §2.2 "sent to the output stage").
//   fanout - one iteration per coarse chunk; its middle stage cuts it into fine chunks and hashes
//            and compresses them with fork-join (task_group) inside the stage (seed 000 §2.2's
//            FindAllAnchors producing many items from one; seed 001 §10 nested parallelism).
// Both forms produce exactly the serial program's archive (see dedup_table.hpp for how), as a
// pipe_while loop or as a chain stage graph (dedup_chain, issue 6).
#pragma once

#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>
#include <pipescope/workloads/chain_graph.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipescope::workloads {

using byte_vector = std::vector<std::uint8_t>;

// ---- parameters -------------------------------------------------------------------------------

struct dedup_config {
    std::size_t coarse_size = 256 * 1024;   // bytes stage 0 reads per coarse chunk
    std::size_t min_chunk = 1024;           // fine chunks: never shorter (except at a coarse end)
    std::size_t avg_chunk = 4096;           //   expected length
    std::size_t max_chunk = 32 * 1024;      //   never longer
    int level = 6;                          // zlib compression level, 0-9
};
// Throws std::invalid_argument naming the field and the allowed range.
void validate(const dedup_config& c);

enum class dedup_form { skip, fanout };
dedup_form parse_dedup_form(const std::string& name);   // "skip" or "fanout"; throws otherwise
const char* dedup_form_name(dedup_form f);

// ---- input ------------------------------------------------------------------------------------

// The generated input: text-like and binary-like blocks, many regions repeated (some with a few
// bytes changed) at shifted offsets. A pure function of (bytes, seed).
byte_vector dedup_corpus(std::size_t bytes, std::uint64_t seed);

// Where coarse chunks are read from, front to back.
class byte_reader {
public:
    virtual ~byte_reader() = default;
    // Up to n bytes into dst; fewer only at the end of the input. Throws on an I/O error.
    virtual std::size_t read(std::uint8_t* dst, std::size_t n) = 0;
};

class memory_reader final : public byte_reader {
public:
    explicit memory_reader(const byte_vector& data) : data_(&data) {}
    std::size_t read(std::uint8_t* dst, std::size_t n) override;

private:
    const byte_vector* data_;
    std::size_t pos_ = 0;
};

class file_reader final : public byte_reader {
public:
    explicit file_reader(const std::string& path);   // throws std::runtime_error naming the path
    ~file_reader() override;
    file_reader(const file_reader&) = delete;
    file_reader& operator=(const file_reader&) = delete;
    std::size_t read(std::uint8_t* dst, std::size_t n) override;

private:
    std::string path_;
    std::FILE* f_ = nullptr;
};

byte_vector read_whole_file(const std::string& path);   // throws naming the path
void write_file_atomically(const std::string& path,
                           const byte_vector& bytes);   // whole or not at all (trace/atomic_output.hpp)

// ---- chunking ---------------------------------------------------------------------------------

// Reads one coarse chunk (config.coarse_size bytes, fewer at the end; empty at the end).
byte_vector read_coarse_chunk(byte_reader& in, const dedup_config& c);

// The content-defined fine chunks of one coarse chunk, as end offsets (the last one is n; none if
// n == 0). Boundaries depend only on the bytes (and the config), so a region repeated at another
// offset is cut the same way once the rolling hash has resynchronised.
std::vector<std::size_t> fine_chunk_ends(const std::uint8_t* data, std::size_t n, const dedup_config& c);

// ---- chunk processing and the archive format --------------------------------------------------

using sha1_digest = std::array<std::uint8_t, 20>;
sha1_digest sha1_of(const std::uint8_t* data, std::size_t n);   // OpenSSL libcrypto
byte_vector zlib_compress(const std::uint8_t* data, std::size_t n, int level);

// Archive layout (all integers little-endian):
//   header   "PSDEDUP1" (8 bytes), u32 format version (1), u32 min, avg, max chunk, coarse size
//   records  u8 kind, then
//              kind 'N' (new chunk):  sha1[20], u32 raw length, u32 compressed length, zlib bytes
//              kind 'D' (duplicate):  u64 index of an earlier 'N' record (0 = the first one)
//   trailer  u8 'E', u64 number of records, u64 number of 'N' records, u64 restored length
// Nothing may follow the trailer.
inline constexpr char dedup_magic[8] = {'P', 'S', 'D', 'E', 'D', 'U', 'P', '1'};
inline constexpr std::uint32_t dedup_format_version = 1;

// Appends records in order (the output stage, or the serial program).
class archive_writer {
public:
    explicit archive_writer(const dedup_config& c);
    // Returns the new chunk's index (the one duplicates refer to).
    std::uint64_t add_new(const sha1_digest& sha, std::size_t raw_length, const byte_vector& compressed);
    void add_duplicate(std::uint64_t stored_index);   // throws std::logic_error if no such chunk
    byte_vector finish();                             // appends the trailer; the writer is spent afterwards

private:
    byte_vector out_;
    std::uint64_t records_ = 0;
    std::uint64_t stored_ = 0;
    std::uint64_t restored_length_ = 0;
    std::vector<std::uint32_t> stored_lengths_;   // by index: what a duplicate adds to the length
};

// A malformed archive; offset() is the byte offset in the archive where the problem is.
class archive_error : public std::runtime_error {
public:
    archive_error(std::uint64_t offset, const std::string& what);
    std::uint64_t offset() const noexcept { return offset_; }

private:
    std::uint64_t offset_;
};

// Rebuilds the input. Checks everything (bounds, zlib streams, each chunk's SHA-1, duplicate
// indices, the trailer's counts) and throws archive_error on the first problem.
byte_vector dedup_restore(const std::uint8_t* archive, std::size_t n);
inline byte_vector dedup_restore(const byte_vector& archive) { return dedup_restore(archive.data(), archive.size()); }

// ---- the programs -----------------------------------------------------------------------------

struct dedup_stats {
    std::uint64_t input_bytes = 0;
    std::uint64_t archive_bytes = 0;
    std::uint64_t coarse_chunks = 0;
    std::uint64_t fine_chunks = 0;
    std::uint64_t new_chunks = 0;
    std::uint64_t duplicate_chunks = 0;
    // Chunks compressed because their SHA-1 looked new when hashed, written as duplicates because
    // an earlier chunk (in input order) with the same content was hashed later. Always 0 serially.
    std::uint64_t wasted_compressions = 0;
};

// The serial program (T_S): plain loops and an ordinary hash map, no runtime.
// cancel: checked per coarse chunk (interrupted_before_measured_run, workload.hpp).
byte_vector dedup_serial(byte_reader& in, const dedup_config& c, dedup_stats* stats = nullptr, std::stop_token cancel = {});

// The pipeline in either form; `options.policy` selects the schedule. Returns the same bytes as
// dedup_serial.
byte_vector dedup_pipeline(scheduler& s, byte_reader& in, const dedup_config& c, dedup_form form,
                           const pipeline_options& options, pipeline_stats* pstats = nullptr, dedup_stats* stats = nullptr);

// The chain graph form (issue 6; chain_graph.hpp), with the same stage functions as the pipeline:
//   skip    read (serial source) | hash (parallel) | compress (parallel) | write (serial)
//   fanout  read (serial source) | chunk, hash, compress (parallel) | write (serial)
// A chain has one path, so a chunk known to be a duplicate passes through the compress stage
// untouched instead of skipping it. Queue elements are pointers to the run's chunk (or coarse
// chunk) records, kept in a std::deque that the source alone appends to (appending never moves an
// element); every queue is ordered, so the write stage sees chunks in input order.
class dedup_chain {
public:
    dedup_chain(const dedup_config& c, dedup_form form, const chain_shape& shape);
    ~dedup_chain();
    dedup_chain(const dedup_chain&) = delete;   // the stage bodies point at this object
    dedup_chain& operator=(const dedup_chain&) = delete;

    const graph::program& program() const noexcept { return g_; }
    // Before every run: the input to read, a fresh chunk table and archive.
    void reset(byte_reader& in);
    // After a run: the archive (the writer is spent afterwards) and what went into it.
    byte_vector finish(dedup_stats* stats = nullptr);

private:
    struct run_state;
    run_state& state() const;

    dedup_config config_;
    graph::program g_;
    std::unique_ptr<run_state> run_;
};

// Runs the chain graph under `options.policy`; returns the same bytes as dedup_serial.
byte_vector dedup_graph(scheduler& s, byte_reader& in, const dedup_config& c, dedup_form form, const chain_shape& shape,
                        const graph::run_options& options, graph::run_stats* gstats = nullptr, dedup_stats* stats = nullptr);

}   // namespace pipescope::workloads
