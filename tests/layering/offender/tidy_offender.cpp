// A planted offender for ctest lint.tidy.selftest: a read after a move, which .clang-tidy's
// bugprone-use-after-move must report, or lint.tidy could pass having checked nothing.
#include <string>
#include <utility>

std::size_t moved_then_read(std::string s) {
    std::string taken = std::move(s);
    return taken.size() + s.size();
}
