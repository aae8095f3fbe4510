// Reading dedup's input (from memory or streamed from a file) and writing archives to files.
#include <pipescope/workloads/dedup.hpp>

#include <pipescope/trace/atomic_output.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace pipescope::workloads {

namespace {

std::runtime_error io_error(const std::string& what, const std::string& path) {
    return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

}   // namespace

std::size_t memory_reader::read(std::uint8_t* dst, std::size_t n) {
    const std::size_t k = std::min(n, data_->size() - pos_);
    if (k) std::memcpy(dst, data_->data() + pos_, k);
    pos_ += k;
    return k;
}

file_reader::file_reader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) throw io_error("cannot open", path);
}

file_reader::~file_reader() {
    if (f_) std::fclose(f_);
}

std::size_t file_reader::read(std::uint8_t* dst, std::size_t n) {
    const std::size_t k = std::fread(dst, 1, n, f_);
    if (k < n && std::ferror(f_)) throw io_error("cannot read", path_);
    return k;
}

byte_vector read_whole_file(const std::string& path) {
    file_reader in(path);
    byte_vector out;
    std::uint8_t buf[1 << 16];
    while (const std::size_t k = in.read(buf, sizeof buf)) out.insert(out.end(), buf, buf + k);
    return out;
}

void write_file_atomically(const std::string& path, const byte_vector& bytes) {
    // A crash or a full disk leaves `path` as it was, never truncated (atomic_output.hpp).
    trace::write_file_atomically(path, bytes.data(), bytes.size());
}

}   // namespace pipescope::workloads
