// The serial dedup program (T_S, seed 003 Alg. 1): the same steps as the pipeline, one chunk after
// the other, with an ordinary hash map. Its archive is the reference the pipelines must equal.
#include "dedup_table.hpp"

#include <pipescope/workloads/workload.hpp>

namespace pipescope::workloads {

byte_vector dedup_serial(byte_reader& in, const dedup_config& c, dedup_stats* stats, std::stop_token cancel) {
    validate(c);
    dedup_stats st;
    archive_writer out(c);
    std::unordered_map<sha1_digest, std::uint64_t, dedup_detail::digest_hash> stored;   // SHA-1 -> chunk index
    for (;;) {
        throw_if_cancelled(cancel);
        const byte_vector coarse = read_coarse_chunk(in, c);
        if (coarse.empty()) break;
        ++st.coarse_chunks;
        st.input_bytes += coarse.size();
        std::size_t begin = 0;
        for (const std::size_t end : fine_chunk_ends(coarse.data(), coarse.size(), c)) {
            const std::uint8_t* chunk = coarse.data() + begin;
            const std::size_t length = end - begin;
            begin = end;
            ++st.fine_chunks;
            const sha1_digest sha = sha1_of(chunk, length);
            if (auto it = stored.find(sha); it != stored.end()) {
                out.add_duplicate(it->second);
                ++st.duplicate_chunks;
            } else {
                stored.emplace(sha, out.add_new(sha, length, zlib_compress(chunk, length, c.level)));
                ++st.new_chunks;
            }
        }
    }
    byte_vector archive = out.finish();
    st.archive_bytes = archive.size();
    if (stats) *stats = st;
    return archive;
}

}   // namespace pipescope::workloads
