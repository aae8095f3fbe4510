// "Did you mean": the known name closest to a mistyped one, as git suggests commands. Closeness is
// the edit distance (insertions, deletions, substitutions and swaps of neighbours, each 1), and a
// name is suggested only when it is near enough that the mistake is a typo, not another word.
#pragma once

#include <span>
#include <string>

namespace pipescope::recording {

// " (did you mean 'stats'?)" for "sttas" among the commands, or "" when no name is close.
std::string did_you_mean(const std::string& typed, std::span<const std::string> known);

// The edit distance of a and b (optimal string alignment: a swap of neighbours counts once).
std::size_t edit_distance(const std::string& a, const std::string& b);

}   // namespace pipescope::recording
