// Internal to dedup: the global table of chunks seen, and one fine chunk's (or, in the fan-out form,
// one coarse chunk's) trip through the stages, shared by the pipe_while loop and the chain graph.
//
// Determinism. The archive must be the serial program's: the first occurrence of a content *in
// input order* is stored, later ones refer to it. Iterations hash in any order, so the table is
// only a hint: each chunk claims its SHA-1 with its position in input order (`order`), and the
// smallest position wins. A chunk that finds a smaller claim is certainly a duplicate and skips
// compression. A chunk that holds the claim so far is compressed, but may still lose it to an
// earlier chunk hashed later. The final word is the output stage's, which runs in input order and
// stores a chunk exactly when no earlier chunk with that SHA-1 has been written; the losing case
// only costs a wasted compression (counted in dedup_stats).
#pragma once

#include <pipescope/workloads/dedup.hpp>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace pipescope::workloads::dedup_detail {

struct digest_hash {
    std::size_t operator()(const sha1_digest& d) const noexcept {
        std::size_t h;
        std::memcpy(&h, d.data(), sizeof h);   // SHA-1 bytes are already uniformly distributed
        return h;
    }
};

inline constexpr std::uint64_t not_written = ~std::uint64_t{0};

struct chunk_entry {
    explicit chunk_entry(std::uint64_t order) : first_claim(order) {}
    // Smallest input-order position that claimed this SHA-1 so far. Lowered under the shard lock;
    // read without it by claimed_earlier (a hint: the output stage decides).
    std::atomic<std::uint64_t> first_claim;
    std::uint64_t stored_index = not_written;   // set by the output stage only (serial, in order)
};

// Sharded so that concurrent hash stages rarely wait for each other (seed 000 §2.2: the shared
// table's accesses "are enforced by locks"). Entries never move (unordered_map nodes are stable).
class chunk_table {
public:
    // Claims `sha` for the chunk at input-order position `order`. Returns the entry and whether an
    // earlier chunk had already claimed it (then this chunk is certainly a duplicate).
    std::pair<chunk_entry*, bool> claim(const sha1_digest& sha, std::uint64_t order) {
        shard& sh = shards_[sha[19] % shard_count];
        std::lock_guard<std::mutex> lock(sh.mutex);
        auto [it, inserted] = sh.map.try_emplace(sha, order);
        chunk_entry& e = it->second;
        if (inserted) return {&e, false};
        if (e.first_claim.load(std::memory_order_relaxed) < order) return {&e, true};
        e.first_claim.store(order, std::memory_order_relaxed);
        return {&e, false};
    }

    // Whether an earlier chunk has claimed the entry since `order` did (asked again just before
    // compressing, to skip work that the output stage would throw away).
    static bool claimed_earlier(const chunk_entry& e, std::uint64_t order) {
        return e.first_claim.load(std::memory_order_relaxed) < order;
    }

private:
    static constexpr std::size_t shard_count = 64;
    struct alignas(64) shard {
        std::mutex mutex;
        std::unordered_map<sha1_digest, chunk_entry, digest_hash> map;
    };
    std::array<shard, shard_count> shards_;
};

// One fine chunk. `order` is (coarse index << 32 | index within the coarse chunk): increasing in
// input order in both program forms.
struct chunk_job {
    std::shared_ptr<const byte_vector> coarse;   // keeps the bytes alive while the job is in flight
    std::size_t begin = 0;
    std::size_t length = 0;
    std::uint64_t order = 0;
    sha1_digest sha{};
    chunk_entry* entry = nullptr;
    bool known_duplicate = false;   // the table said so: skip compression
    bool compressed_ready = false;
    byte_vector compressed;

    const std::uint8_t* data() const { return coarse->data() + begin; }
};

inline std::uint64_t chunk_order(std::uint64_t coarse_index, std::size_t fine_index) {
    return (coarse_index << 32) | static_cast<std::uint64_t>(fine_index);
}

// The hash stage (seed 000 §2.2 ChunkProcess): SHA-1, then the table.
inline void hash_and_claim(chunk_job& j, chunk_table& table) {
    j.sha = sha1_of(j.data(), j.length);
    auto [entry, duplicate] = table.claim(j.sha, j.order);
    j.entry = entry;
    j.known_duplicate = duplicate;
}

// The compress stage (seed 000 §2.2 Compress), unless the chunk has meanwhile turned out to be a
// duplicate of an earlier one.
inline void compress_job(chunk_job& j, int level) {
    if (chunk_table::claimed_earlier(*j.entry, j.order)) {
        j.known_duplicate = true;
        return;
    }
    j.compressed = zlib_compress(j.data(), j.length, level);
    j.compressed_ready = true;
}

// The output stage: serial and in input order, so the decision made here is the serial one.
inline void emit(chunk_job& j, archive_writer& out, dedup_stats& st) {
    ++st.fine_chunks;
    if (j.entry->stored_index != not_written) {
        out.add_duplicate(j.entry->stored_index);
        ++st.duplicate_chunks;
        if (j.compressed_ready) ++st.wasted_compressions;
    } else {
        // No earlier chunk with this SHA-1 has been written, so none claimed it before this one:
        // the hash stage cannot have called it a duplicate, and it was compressed.
        if (!j.compressed_ready) throw std::logic_error("dedup: first occurrence of a chunk was not compressed");
        j.entry->stored_index = out.add_new(j.sha, j.length, j.compressed);
        ++st.new_chunks;
    }
    j.compressed = byte_vector();   // written: free the buffers now, not when the frame dies
    j.coarse.reset();
}

// ---- the stages' work, shared by the pipe_while loop (dedup_pipeline.cpp) and the chain graph
// (dedup_graph.cpp): the forms differ only in where an item lives and who runs its stages.

// Stage 0 of the skip form: hands out fine chunks one at a time, reading and cutting the next
// coarse chunk when the current one is used up (seed 000 §2.2: DataProcess, then FindAllAnchors).
class fine_chunk_stream {
public:
    fine_chunk_stream(byte_reader& in, const dedup_config& c, dedup_stats& st) : in_(in), config_(c), stats_(st) {}

    bool next(chunk_job& job) {
        while (fine_ == ends_.size()) {
            byte_vector bytes = read_coarse_chunk(in_, config_);
            if (bytes.empty()) return false;
            ++stats_.coarse_chunks;
            stats_.input_bytes += bytes.size();
            ends_ = fine_chunk_ends(bytes.data(), bytes.size(), config_);
            coarse_ = std::make_shared<const byte_vector>(std::move(bytes));
            coarse_index_ = stats_.coarse_chunks - 1;
            fine_ = 0;
        }
        job = chunk_job{};
        job.coarse = coarse_;
        job.begin = fine_ == 0 ? 0 : ends_[fine_ - 1];
        job.length = ends_[fine_] - job.begin;
        job.order = chunk_order(coarse_index_, fine_);
        ++fine_;
        return true;
    }

private:
    byte_reader& in_;
    const dedup_config& config_;
    dedup_stats& stats_;
    std::shared_ptr<const byte_vector> coarse_;
    std::vector<std::size_t> ends_;
    std::size_t fine_ = 0;
    std::uint64_t coarse_index_ = 0;
};

// One coarse chunk of the fan-out form, from stage 0 to the output stage.
struct coarse_job {
    std::shared_ptr<const byte_vector> coarse;
    std::uint64_t index = 0;       // position in the input
    std::vector<chunk_job> fine;   // filled by the middle stage, in input order
};

// Stage 0 of the fan-out form: the next coarse chunk.
inline bool next_coarse_chunk(byte_reader& in, const dedup_config& c, dedup_stats& st, coarse_job& job) {
    byte_vector bytes = read_coarse_chunk(in, c);
    if (bytes.empty()) return false;
    job = coarse_job{};
    job.coarse = std::make_shared<const byte_vector>(std::move(bytes));
    job.index = st.coarse_chunks++;
    st.input_bytes += job.coarse->size();
    return true;
}

// The fan-out form's middle stage (seed 000 §2.2: FindAllAnchors makes many items from one): cut the
// coarse chunk, then two rounds over its fine chunks — all claims first, so that a chunk repeated
// within this coarse chunk is known to be a duplicate before anything is compressed, then the
// compressions. `for_each(jobs, fn)` runs fn on each of a vector of chunk_job* and returns when all
// are done: fork-join in the pipe_while loop (seed 001 §10, nested parallelism), one after the
// other in the chain graph, whose parallelism is its instances.
template <class ForEach>
void process_coarse_chunk(coarse_job& job, const dedup_config& c, chunk_table& table, ForEach&& for_each) {
    const std::vector<std::size_t> ends = fine_chunk_ends(job.coarse->data(), job.coarse->size(), c);
    job.fine.resize(ends.size());
    std::vector<chunk_job*> todo;
    for (std::size_t k = 0; k < ends.size(); ++k) {
        chunk_job& j = job.fine[k];
        j.coarse = job.coarse;
        j.begin = k == 0 ? 0 : ends[k - 1];
        j.length = ends[k] - j.begin;
        j.order = chunk_order(job.index, k);
        todo.push_back(&j);
    }
    for_each(todo, [&table](chunk_job& j) { hash_and_claim(j, table); });
    todo.clear();
    for (chunk_job& j : job.fine)
        if (!j.known_duplicate) todo.push_back(&j);
    for_each(todo, [level = c.level](chunk_job& j) { compress_job(j, level); });
}

// The fan-out form's output stage: the coarse chunk's records, in input order.
inline void emit_coarse(coarse_job& job, archive_writer& out, dedup_stats& st) {
    for (chunk_job& j : job.fine) emit(j, out, st);
    job.fine = std::vector<chunk_job>();
    job.coarse.reset();
}

}   // namespace pipescope::workloads::dedup_detail
