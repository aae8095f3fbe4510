#include <pipescope/recording/suggest.hpp>

#include <algorithm>
#include <vector>

namespace pipescope::recording {

std::size_t edit_distance(const std::string& a, const std::string& b) {
    // d[i][j]: distance of a's first i characters to b's first j, three rows kept for the swap.
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t change = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + change});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::string did_you_mean(const std::string& typed, std::span<const std::string> known) {
    // A third of the name, at least one and at most three edits: "pipr" finds "piper", "x" finds nothing.
    const std::size_t allowed = std::clamp<std::size_t>(typed.size() / 3, 1, 3);
    const std::string* best = nullptr;
    std::size_t best_distance = allowed + 1;
    for (const std::string& name : known) {
        const std::size_t d = edit_distance(typed, name);
        if (d < best_distance) best = &name, best_distance = d;
    }
    return best ? " (did you mean '" + *best + "'?)" : "";
}

}   // namespace pipescope::recording
