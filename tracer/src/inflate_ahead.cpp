// Inflating compressed_packets: the one inflate routine, and the thread that runs it ahead of the
// decoder on large files (inflate_ahead.hpp).
#include "inflate_ahead.hpp"

#include <algorithm>
#include <cstring>

namespace pipescope::trace::detail {

inflate_result inflate_packet(z_stream& z, bool& z_ready, const proto::field& f, std::uint64_t total_left,
                              const read_options& opt, std::unique_ptr<char[]>& out, std::size_t& out_capacity) {
    const std::uint64_t ratio_limit =
        opt.compression_allowance +
        std::min<std::uint64_t>(f.bytes.size(), ~std::uint64_t{0} / (opt.max_compression_ratio + 1)) *
            opt.max_compression_ratio;
    const std::uint64_t limit = std::min(ratio_limit, total_left);
    // One zlib stream and one output buffer for all compressed packets (reset, reused).
    if (!z_ready) {
        z = z_stream{};
        if (inflateInit(&z) != Z_OK) throw proto::decode_error(f.offset, "compressed_packets: cannot initialize zlib");
        z_ready = true;
    } else if (inflateReset(&z) != Z_OK) {
        throw proto::decode_error(f.offset, "compressed_packets: cannot reset zlib");
    }
    z.avail_in = 0;
    std::size_t out_size = 0;
    std::string_view in = f.bytes;
    constexpr std::size_t step = 64 * 1024;
    int rc = Z_OK;
    while (true) {
        if (z.avail_in == 0 && !in.empty()) {
            const std::size_t n = std::min<std::size_t>(in.size(), 1u << 30);
            z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
            z.avail_in = static_cast<uInt>(n);
            in.remove_prefix(n);
        }
        if (out_size >= limit) {
            // One more byte would exceed the limit: see whether the stream ends here.
            char probe;
            z.next_out = reinterpret_cast<Bytef*>(&probe);
            z.avail_out = 1;
            rc = inflate(&z, Z_NO_FLUSH);
            if (rc == Z_STREAM_END && z.avail_out == 1) break;
            if (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) {
                const bool total = limit == total_left && total_left < ratio_limit;
                throw proto::decode_error(f.bytes_offset,
                                          "compressed_packets expands beyond " + std::to_string(limit) + " bytes (" +
                                              (total ? "limit on the decompressed size of the whole file"
                                                     : "more than " + std::to_string(opt.max_compression_ratio) +
                                                           " times its compressed size of " +
                                                           std::to_string(f.bytes.size()) + " bytes") +
                                              "): refusing to inflate further");
            }
        } else {
            if (out_size == out_capacity) {
                // Grow (keeping what is inflated): no zero-filling, and kept for the next packets.
                const std::size_t cap = static_cast<std::size_t>(
                    std::min<std::uint64_t>(std::max<std::size_t>(step, out_capacity + out_capacity / 2), limit));
                auto bigger = std::make_unique_for_overwrite<char[]>(cap);
                if (out_size) std::memcpy(bigger.get(), out.get(), out_size);
                out = std::move(bigger);
                out_capacity = cap;
            }
            const std::size_t grow = static_cast<std::size_t>(
                std::min<std::uint64_t>({out_capacity - out_size, limit - out_size, std::uint64_t{1} << 30}));
            z.next_out = reinterpret_cast<Bytef*>(out.get() + out_size);
            z.avail_out = static_cast<uInt>(grow);
            rc = inflate(&z, Z_NO_FLUSH);
            out_size += grow - z.avail_out;
        }
        if (rc == Z_STREAM_END) break;
        if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR) {
            const std::uint64_t where = f.bytes_offset + (f.bytes.size() - in.size() - z.avail_in);
            throw proto::decode_error(where, std::string("compressed_packets: corrupt zlib data (") +
                                                 (z.msg ? z.msg : "inflate error " + std::to_string(rc)) + ")");
        }
        if (rc == Z_BUF_ERROR && z.avail_in == 0 && in.empty())
            throw proto::decode_error(f.bytes_offset + f.bytes.size(), "compressed_packets: truncated zlib stream (" +
                                                                           std::to_string(out_size) + " bytes inflated)");
    }
    inflate_result r;
    r.size = out_size;
    if (z.avail_in != 0 || !in.empty()) r.trailing_at = f.bytes_offset + (f.bytes.size() - in.size() - z.avail_in);
    return r;
}

inflate_ahead::inflate_ahead(std::string_view bytes, const read_options& opt)
    : bytes_(bytes), opt_(opt), thread_([this] { run(); }) {}

inflate_ahead::~inflate_ahead() {
    {
        std::lock_guard lock(m_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (z_ready_) inflateEnd(&z_);
}

bool inflate_ahead::take(std::uint64_t bytes_offset, inflated_packet& out) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !ready_.empty() || done_ || stop_; });
    if (ready_.empty() || stop_) return false;
    inflated_packet& front = ready_.front();
    if (front.offset != bytes_offset || front.failed) {
        // It failed ahead (the decoder inflates it again and raises the error), or the two walks
        // parted (cannot happen on a file both read the same way): either way, stop inflating ahead.
        stop_ = true;
        cv_.notify_all();
        return false;
    }
    out = std::move(front);
    ready_.pop_front();
    cv_.notify_all();
    return true;
}

void inflate_ahead::give_back(std::unique_ptr<char[]> buffer, std::size_t capacity) {
    std::lock_guard lock(m_);
    if (free_.size() < max_ready) free_.push_back({std::move(buffer), capacity});
}

// The outer walk of the decoder (Trace.packet fields, the last compressed_packets field of each),
// without its checks: anything it cannot read ends the walk, and the decoder finds it itself.
void inflate_ahead::run() {
    std::uint64_t total = 0;
    try {
        proto::reader file(bytes_, 0);
        proto::field pf, f;
        while (!file.done()) {
            file.next(pf);
            if (pf.number != 1 || pf.wire_type != 2) continue;
            proto::reader packet(pf.bytes, pf.bytes_offset);
            bool has = false;
            proto::field compressed;
            while (!packet.done()) {
                packet.next(f);
                if (f.number == 50 && f.wire_type == 2) {
                    compressed = f;
                    has = true;
                }
            }
            if (!has) continue;
            inflated_packet p;
            p.offset = compressed.bytes_offset;
            {   // a buffer to reuse, and room in the queue
                std::unique_lock lock(m_);
                cv_.wait(lock, [&] { return ready_.size() < max_ready || stop_; });
                if (stop_) break;
                if (!free_.empty()) {
                    p.data = std::move(free_.back().data);
                    p.capacity = free_.back().capacity;
                    free_.pop_back();
                }
            }
            const std::uint64_t total_left = opt_.max_decompressed_bytes > total ? opt_.max_decompressed_bytes - total : 0;
            try {
                const inflate_result r = inflate_packet(z_, z_ready_, compressed, total_left, opt_, p.data, p.capacity);
                p.size = r.size;
                p.trailing_at = r.trailing_at;
                total += r.size;
            } catch (const proto::decode_error&) {
                p.failed = true;
            }
            const bool failed = p.failed;
            {
                std::lock_guard lock(m_);
                ready_.push_back(std::move(p));
            }
            cv_.notify_all();
            if (failed) break;
        }
    } catch (const proto::decode_error&) {
        // The outer structure is broken here: the decoder will say where.
    } catch (const std::bad_alloc&) {
        // Out of memory ahead: the decoder inflates the rest itself.
    }
    {
        std::lock_guard lock(m_);
        done_ = true;
    }
    cv_.notify_all();
}

}   // namespace pipescope::trace::detail
