#include "text_fit.hpp"

namespace pipescope::viewer {

namespace {
bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The prefix of `text` that ends before the code point starting at or after `n` bytes.
std::string_view prefix_at(std::string_view text, std::size_t n) {
    while (n > 0 && n < text.size() && continuation_byte(text[n])) --n;
    return text.substr(0, n);
}

std::string with_ellipsis(std::string_view prefix) {
    while (!prefix.empty() && prefix.back() == ' ') prefix.remove_suffix(1);
    return std::string(prefix) + std::string(ellipsis);
}
}   // namespace

std::string elide_to_width(std::string_view text, double max_width, const text_width_fn& width) {
    if (width(text) <= max_width) return std::string(text);
    if (width(ellipsis) > max_width) return {};
    // Widths grow with the prefix: the longest prefix that fits by bisection over byte lengths.
    std::size_t lo = 0, hi = text.size();
    while (lo < hi) {
        const std::size_t mid = (lo + hi + 1) / 2;
        if (width(with_ellipsis(prefix_at(text, mid))) <= max_width) lo = mid;
        else hi = mid - 1;
    }
    return with_ellipsis(prefix_at(text, lo));
}

}   // namespace pipescope::viewer
