// Example: a parallel compressor with a serial writer (the shape of PARSEC dedup and pigz), recorded.
//
//     compress INPUT OUTPUT [-o trace.pftrace] [--workers N] [--block KiB]
//
// Stage 0 (serial) reads the next block of INPUT, stage 1 (parallel) deflates it with zlib, stage 2
// (serial, in order) appends it to OUTPUT as [raw size, compressed size, bytes]. The program then
// reads OUTPUT back, inflates every block and exits 1 unless that gives INPUT byte for byte. Each
// deflate node carries its block's sizes as annotations (pipescope::annotate).
//
// A model of a user's own program: it needs nothing but pipescope, so it prints with the standard
// library (the project itself writes text with fmt).
#include <pipescope/pipescope.hpp>

#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using bytes = std::vector<unsigned char>;

bytes deflate_block(const bytes& raw) {
    uLongf size = compressBound(static_cast<uLong>(raw.size()));
    bytes out(size);
    if (compress2(out.data(), &size, raw.data(), static_cast<uLong>(raw.size()), 6) != Z_OK)
        throw std::runtime_error("zlib could not compress a block");
    out.resize(size);
    return out;
}

void put_u32(std::ofstream& out, std::uint32_t v) {
    const unsigned char b[4] = {static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8),
                                static_cast<unsigned char>(v >> 16), static_cast<unsigned char>(v >> 24)};
    out.write(reinterpret_cast<const char*>(b), 4);
}

bool get_u32(std::ifstream& in, std::uint32_t& v) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) return false;
    v = b[0] | b[1] << 8 | b[2] << 16 | static_cast<std::uint32_t>(b[3]) << 24;
    return true;
}

// OUTPUT inflated again, block by block; throws naming the block that does not inflate.
bytes restore(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    bytes all;
    std::uint32_t raw_size = 0, packed_size = 0;
    for (std::size_t block = 0; get_u32(in, raw_size); ++block) {
        if (!get_u32(in, packed_size)) throw std::runtime_error("block " + std::to_string(block) + " is cut short");
        bytes packed(packed_size), raw(raw_size);
        if (!in.read(reinterpret_cast<char*>(packed.data()), packed_size))
            throw std::runtime_error("block " + std::to_string(block) + " is cut short");
        uLongf size = raw_size;
        if (uncompress(raw.data(), &size, packed.data(), packed_size) != Z_OK || size != raw_size)
            throw std::runtime_error("block " + std::to_string(block) + " does not inflate");
        all.insert(all.end(), raw.begin(), raw.end());
    }
    return all;
}

int usage() {
    std::fprintf(stderr, "usage: compress INPUT OUTPUT [-o trace.pftrace] [--workers N] [--block KiB]\n");
    return 2;
}

int compress_file(int argc, char** argv);

}   // namespace

// A failure the program cannot fix (the trace or OUTPUT cannot be written, a block zlib refuses):
// one line naming it, exit status 1. Leaving main through the exception unwinds the trace session,
// which removes its temporary file.
int main(int argc, char** argv) {
    try {
        return compress_file(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "compress: %s\n", e.what());
        return 1;
    }
}

namespace {

int compress_file(int argc, char** argv) {
    std::vector<std::string> files;
    std::string trace_path;
    unsigned workers = 0;
    std::size_t block_kib = 64;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "-o") && i + 1 < argc) trace_path = argv[++i];
        else if (!std::strcmp(argv[i], "--workers") && i + 1 < argc) workers = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--block") && i + 1 < argc) block_kib = std::strtoull(argv[++i], nullptr, 10);
        else if (argv[i][0] == '-') return usage();
        else files.push_back(argv[i]);
    }
    if (files.size() != 2 || block_kib == 0 || block_kib > 65536) return usage();
    std::ifstream in(files[0], std::ios::binary);
    std::ofstream out(files[1], std::ios::binary | std::ios::trunc);
    if (!in || !out) {
        std::fprintf(stderr, "compress: cannot %s %s: %s\n", !in ? "read" : "write", (!in ? files[0] : files[1]).c_str(),
                     std::strerror(errno));
        return 1;
    }

    pipescope::scheduler sched({workers});
    std::optional<pipescope::trace_session> rec;
    // finish_on_signal: Ctrl-C finishes the trace (the run's outcome says so), then ends the program.
    if (!trace_path.empty())
        rec.emplace(sched, trace_path, pipescope::trace_session_options{.name = "compress", .finish_on_signal = true});

    const std::size_t block_size = block_kib << 10;
    std::uint64_t raw_total = 0, packed_total = 0;
    pipescope::pipeline_options options{.name = "compress", .stage_names = {"read block", "deflate", "write"}};
    pipescope::pipe_while(
        sched, [&] { return in.peek() != std::char_traits<char>::eof(); },
        [&](pipescope::iteration& it) -> pipescope::pipe_task {
            bytes raw(block_size);   // stage 0: read block (serial)
            in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(block_size));
            raw.resize(static_cast<std::size_t>(in.gcount()));
            co_await it.stage(1);
            const bytes packed = deflate_block(raw);    // stage 1: deflate (parallel)
            pipescope::annotate("bytes", raw.size());   // the node's args in the viewer and the Perfetto UI
            pipescope::annotate("compressed", packed.size());
            co_await it.stage_wait(2);
            put_u32(out, static_cast<std::uint32_t>(raw.size()));   // stage 2: write (serial, in order)
            put_u32(out, static_cast<std::uint32_t>(packed.size()));
            out.write(reinterpret_cast<const char*>(packed.data()), static_cast<std::streamsize>(packed.size()));
            raw_total += raw.size();
            packed_total += packed.size();
        },
        options);
    out.close();
    if (rec) rec->close();
    if (!out) {
        std::fprintf(stderr, "compress: writing %s failed: %s\n", files[1].c_str(), std::strerror(errno));
        return 1;
    }

    std::ifstream original(files[0], std::ios::binary);
    const bytes input((std::istreambuf_iterator<char>(original)), std::istreambuf_iterator<char>());
    std::printf("%s: %llu bytes -> %s: %llu bytes (%.1f %%)\n", files[0].c_str(), static_cast<unsigned long long>(raw_total),
                files[1].c_str(), static_cast<unsigned long long>(packed_total),
                raw_total ? 100.0 * static_cast<double>(packed_total) / static_cast<double>(raw_total) : 0.0);
    if (rec) std::fputs(rec->report("trace: ").c_str(), stdout);
    try {
        if (restore(files[1]) != input) {
            std::fprintf(stderr, "compress: %s does not inflate back to %s\n", files[1].c_str(), files[0].c_str());
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "compress: %s: %s\n", files[1].c_str(), e.what());
        return 1;
    }
    std::printf("inflates back to the input byte for byte\n");
    return 0;
}

}   // namespace
