// Inflating compressed_packets ahead of the decoder (docs/tracing.md, "Reading traces back").
//
// A compressed trace spends about a fifth of its loading time in zlib. On files of at least
// read_options::inflate_ahead_min_bytes, a second thread walks the file's packets as the decoder
// will, inflates each compressed_packets payload into a buffer of its own and queues it (at most
// max_ready at a time, buffers recycled), so the decoder finds it inflated. The decoder asks for
// each packet by its offset; a packet that failed ahead (corrupt, too large, ...) is not passed on:
// the decoder inflates it again and raises exactly the error it raises without this thread.
#pragma once

#include <pipescope/trace/perfetto_reader.hpp>
#include <pipescope/trace/proto_reader.hpp>

#include <zlib.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

namespace pipescope::trace::detail {

struct inflate_result {
    std::size_t size = 0;                       // bytes inflated into the buffer
    std::optional<std::uint64_t> trailing_at;   // file offset of bytes after the end of the zlib stream
};

// Inflates compressed_packets field `f` into `out` (grown as needed, kept for reuse), at most
// min(ratio limit, total_left) bytes (read_options). Throws proto::decode_error naming the offset.
inflate_result inflate_packet(z_stream& z, bool& z_ready, const proto::field& f, std::uint64_t total_left,
                              const read_options& opt, std::unique_ptr<char[]>& out, std::size_t& out_capacity);

struct inflated_packet {
    std::uint64_t offset = 0;   // file offset of the compressed payload (field bytes)
    std::unique_ptr<char[]> data;
    std::size_t size = 0, capacity = 0;
    std::optional<std::uint64_t> trailing_at;
    bool failed = false;
};

class inflate_ahead {
public:
    static constexpr std::size_t max_ready = 4;

    inflate_ahead(std::string_view bytes, const read_options& opt);
    ~inflate_ahead();
    inflate_ahead(const inflate_ahead&) = delete;
    inflate_ahead& operator=(const inflate_ahead&) = delete;

    // The packet whose payload starts at `bytes_offset`, if it was inflated ahead (waits for it).
    bool take(std::uint64_t bytes_offset, inflated_packet& out);
    // A buffer the decoder is done with, for the next packets.
    void give_back(std::unique_ptr<char[]> buffer, std::size_t capacity);

private:
    void run();

    struct spare {
        std::unique_ptr<char[]> data;
        std::size_t capacity = 0;
    };
    std::string_view bytes_;
    const read_options& opt_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<inflated_packet> ready_;
    std::vector<spare> free_;
    bool done_ = false, stop_ = false;
    z_stream z_{};
    bool z_ready_ = false;
    std::thread thread_;   // last: starts once everything above is constructed
};

}   // namespace pipescope::trace::detail
