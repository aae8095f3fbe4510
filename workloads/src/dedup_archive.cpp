// The dedup archive: chunk hashing and compression, the writer, and restore. The layout is in
// dedup.hpp. Restore trusts nothing: every length is bounds-checked before use, and every chunk is
// checked against its SHA-1 after decompression, so a corrupt archive is reported with the byte
// offset of the first problem instead of producing wrong output.
#include <pipescope/workloads/dedup.hpp>

#include <openssl/sha.h>
#include <zlib.h>

#include <cstring>

namespace pipescope::workloads {

sha1_digest sha1_of(const std::uint8_t* data, std::size_t n) {
    sha1_digest d;
    SHA1(data, n, d.data());
    return d;
}

byte_vector zlib_compress(const std::uint8_t* data, std::size_t n, int level) {
    uLongf len = compressBound(static_cast<uLong>(n));
    byte_vector out(len);
    if (compress2(out.data(), &len, data, static_cast<uLong>(n), level) != Z_OK)
        throw std::runtime_error("dedup: zlib compress2 failed");
    out.resize(len);
    return out;
}

// ---- writing ----------------------------------------------------------------------------------

namespace {

void put_u32(byte_vector& out, std::uint32_t v) {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
}
void put_u64(byte_vector& out, std::uint64_t v) {
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
}

}   // namespace

archive_writer::archive_writer(const dedup_config& c) {
    out_.reserve(1 << 16);   // (also keeps GCC 12 from a false -Wstringop-overflow on the first insert)
    out_.insert(out_.end(), dedup_magic, dedup_magic + 8);
    put_u32(out_, dedup_format_version);
    put_u32(out_, static_cast<std::uint32_t>(c.min_chunk));
    put_u32(out_, static_cast<std::uint32_t>(c.avg_chunk));
    put_u32(out_, static_cast<std::uint32_t>(c.max_chunk));
    put_u32(out_, static_cast<std::uint32_t>(c.coarse_size));
}

std::uint64_t archive_writer::add_new(const sha1_digest& sha, std::size_t raw_length, const byte_vector& compressed) {
    out_.push_back('N');
    out_.insert(out_.end(), sha.begin(), sha.end());
    put_u32(out_, static_cast<std::uint32_t>(raw_length));
    put_u32(out_, static_cast<std::uint32_t>(compressed.size()));
    out_.insert(out_.end(), compressed.begin(), compressed.end());
    ++records_;
    restored_length_ += raw_length;
    stored_lengths_.push_back(static_cast<std::uint32_t>(raw_length));
    return stored_++;
}

void archive_writer::add_duplicate(std::uint64_t stored_index) {
    if (stored_index >= stored_) throw std::logic_error("dedup: duplicate of a chunk not written yet");
    out_.push_back('D');
    put_u64(out_, stored_index);
    ++records_;
    restored_length_ += stored_lengths_[stored_index];
}

byte_vector archive_writer::finish() {
    out_.push_back('E');
    put_u64(out_, records_);
    put_u64(out_, stored_);
    put_u64(out_, restored_length_);
    return std::move(out_);
}

// ---- restoring --------------------------------------------------------------------------------

archive_error::archive_error(std::uint64_t offset, const std::string& what)
    : std::runtime_error("at byte offset " + std::to_string(offset) + ": " + what), offset_(offset) {}

namespace {

constexpr std::size_t header_size = 8 + 5 * 4;

// A cursor over the archive that refuses to read past its end.
class cursor {
public:
    cursor(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
    std::size_t pos() const { return pos_; }
    std::size_t left() const { return n_ - pos_; }
    const std::uint8_t* here() const { return p_ + pos_; }

    void need(std::size_t k, const char* what) const {
        if (left() < k)
            throw archive_error(pos_, std::string("truncated archive: ") + what + " needs " + std::to_string(k) +
                                          " bytes, " + std::to_string(left()) + " left");
    }
    std::uint8_t u8(const char* what) {
        need(1, what);
        return p_[pos_++];
    }
    std::uint32_t u32(const char* what) {
        need(4, what);
        std::uint32_t v = 0;
        for (int k = 0; k < 4; ++k) v |= std::uint32_t{p_[pos_ + k]} << (8 * k);
        pos_ += 4;
        return v;
    }
    std::uint64_t u64(const char* what) {
        need(8, what);
        std::uint64_t v = 0;
        for (int k = 0; k < 8; ++k) v |= std::uint64_t{p_[pos_ + k]} << (8 * k);
        pos_ += 8;
        return v;
    }
    void skip(std::size_t k, const char* what) {
        need(k, what);
        pos_ += k;
    }

private:
    const std::uint8_t* p_;
    std::size_t n_;
    std::size_t pos_ = 0;
};

struct stored_chunk {
    std::size_t offset;   // in the restored output
    std::uint32_t length;
};

void restore_new_chunk(cursor& in, std::size_t record_at, std::uint32_t max_chunk, byte_vector& out,
                       std::vector<stored_chunk>& stored) {
    const std::size_t sha_at = in.pos();
    sha1_digest sha;
    in.need(sha.size(), "a chunk's SHA-1");
    std::memcpy(sha.data(), in.here(), sha.size());
    in.skip(sha.size(), "a chunk's SHA-1");
    const std::size_t raw_at = in.pos();
    const std::uint32_t raw = in.u32("a chunk's length");
    const std::uint32_t packed = in.u32("a chunk's compressed length");
    if (raw == 0 || raw > max_chunk)
        throw archive_error(raw_at, "chunk " + std::to_string(stored.size()) + " claims " + std::to_string(raw) +
                                        " bytes; chunks have 1 to " + std::to_string(max_chunk));
    in.need(packed, "a chunk's compressed bytes");
    const std::size_t data_at = in.pos();
    const std::size_t at = out.size();
    out.resize(at + raw);
    uLongf produced = raw;
    uLong consumed = packed;
    const int rc = uncompress2(out.data() + at, &produced, in.here(), &consumed);
    if (rc != Z_OK || produced != raw || consumed != packed)
        throw archive_error(data_at, "chunk " + std::to_string(stored.size()) + " (record at " + std::to_string(record_at) +
                                         "): corrupt zlib data (" +
                                         (rc == Z_OK ? std::string("wrong length") : std::string(zError(rc))) + ")");
    in.skip(packed, "a chunk's compressed bytes");
    if (sha1_of(out.data() + at, raw) != sha)
        throw archive_error(sha_at, "chunk " + std::to_string(stored.size()) + ": SHA-1 does not match its data");
    stored.push_back({at, raw});
}

void restore_duplicate(cursor& in, byte_vector& out, const std::vector<stored_chunk>& stored) {
    const std::size_t index_at = in.pos();
    const std::uint64_t index = in.u64("a duplicate's chunk index");
    if (index >= stored.size())
        throw archive_error(index_at, "duplicate of chunk " + std::to_string(index) + ", but only " +
                                          std::to_string(stored.size()) + " chunks precede it");
    const stored_chunk c = stored[index];
    const std::size_t at = out.size();
    out.resize(at + c.length);   // may move the data: copy after resizing
    std::memcpy(out.data() + at, out.data() + c.offset, c.length);
}

void check_trailer(cursor& in, std::uint64_t records, std::uint64_t stored, std::uint64_t length) {
    const struct {
        const char* what;
        std::uint64_t actual;
    } fields[] = {{"records", records}, {"stored chunks", stored}, {"restored bytes", length}};
    for (const auto& f : fields) {
        const std::size_t at = in.pos();
        const std::uint64_t said = in.u64("the trailer");
        if (said != f.actual)
            throw archive_error(at, std::string("trailer says ") + std::to_string(said) + " " + f.what +
                                        ", the archive has " + std::to_string(f.actual));
    }
    if (in.left() != 0) throw archive_error(in.pos(), std::to_string(in.left()) + " bytes after the trailer");
}

}   // namespace

byte_vector dedup_restore(const std::uint8_t* archive, std::size_t n) {
    cursor in(archive, n);
    in.need(header_size, "the header");
    if (std::memcmp(archive, dedup_magic, sizeof dedup_magic) != 0)
        throw archive_error(0, "not a dedup archive (no PSDEDUP1 magic)");
    in.skip(sizeof dedup_magic, "the header");
    const std::uint32_t version = in.u32("the header");
    if (version != dedup_format_version)
        throw archive_error(8, "format version " + std::to_string(version) + ", this program reads version " +
                                   std::to_string(dedup_format_version));
    in.u32("the header");   // min chunk: informational
    in.u32("the header");   // avg chunk: informational
    const std::size_t max_at = in.pos();
    const std::uint32_t max_chunk = in.u32("the header");
    if (max_chunk == 0 || max_chunk > (1u << 24))
        throw archive_error(max_at, "max chunk size " + std::to_string(max_chunk) + " is out of range");
    in.u32("the header");   // coarse size: informational

    byte_vector out;
    std::vector<stored_chunk> stored;
    std::uint64_t records = 0;
    for (;;) {
        const std::size_t record_at = in.pos();
        if (in.left() == 0) throw archive_error(record_at, "truncated archive: no trailer");
        const std::uint8_t kind = in.u8("a record");
        if (kind == 'E') break;
        if (kind == 'N') restore_new_chunk(in, record_at, max_chunk, out, stored);
        else if (kind == 'D') restore_duplicate(in, out, stored);
        else throw archive_error(record_at, "unknown record kind " + std::to_string(kind));
        ++records;
    }
    check_trailer(in, records, stored.size(), out.size());
    return out;
}

}   // namespace pipescope::workloads
